"""AC/battery state from the power-supply class, for `lidguard doctor` and `status`.

Attributes per Documentation/ABI/testing/sysfs-class-power-supply:

- ``type``: Battery, UPS, Mains, USB, Wireless (older kernels also USB_C, USB_PD, USB_DCP, ...);
- ``online``: 0 offline, 1 online (fixed), 2 online (programmable) - adapters;
- ``status``: Unknown, Charging, Discharging, Not charging, Full - batteries;
- ``capacity``: 0-100 percent - batteries;
- ``scope``: System or Device. ``Device`` marks a peripheral's own battery (a wireless mouse's
  ``hid-...-battery``); those never describe the laptop's power source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sysfs import path_under_root, read_attribute_text, resolve_root

__all__ = ["POWER_SUPPLY_CLASS_DIRECTORY", "PowerSupply", "read_power_supplies", "summarize_power_source"]

POWER_SUPPLY_CLASS_DIRECTORY = "/sys/class/power_supply"

# When several batteries disagree, the most telling status wins (a discharging pack means the
# machine is running on battery even if the other one reports Full).
_STATUS_PRIORITY = ("Discharging", "Charging", "Not charging", "Full", "Unknown")


@dataclass(frozen=True, slots=True)
class PowerSupply:
    name: str
    type: str
    online: bool | None = None
    status: str | None = None
    capacity: int | None = None
    scope: str | None = None

    @property
    def is_battery(self) -> bool:
        return self.type == "Battery"

    @property
    def is_adapter(self) -> bool:
        # Mains, USB (incl. legacy USB_* types) and Wireless chargers feed the system.
        return self.type == "Mains" or self.type == "Wireless" or self.type.startswith("USB")

    @property
    def is_peripheral(self) -> bool:
        return (self.scope or "").lower() == "device"


def _read_int(path: Path) -> int | None:
    text = read_attribute_text(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _read_supply(directory: Path) -> PowerSupply | None:
    supply_type = read_attribute_text(directory / "type")
    if not supply_type:
        return None  # not a power supply (or its type is unreadable): nothing to say about it
    online = _read_int(directory / "online")
    capacity = _read_int(directory / "capacity")
    if capacity is not None and not 0 <= capacity <= 100:
        capacity = None
    return PowerSupply(
        name=directory.name,
        type=supply_type,
        online=None if online is None else online != 0,
        status=read_attribute_text(directory / "status") or None,
        capacity=capacity,
        scope=read_attribute_text(directory / "scope") or None,
    )


def read_power_supplies(root: Path | None = None) -> list[PowerSupply]:
    """Every readable ``/sys/class/power_supply/*`` entry, sorted by name."""
    directory = path_under_root(resolve_root(root), POWER_SUPPLY_CLASS_DIRECTORY)
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    supplies = [_read_supply(entry) for entry in entries]
    return [supply for supply in supplies if supply is not None]


def _combined_status(statuses: list[str]) -> str | None:
    if not statuses:
        return None
    for status in _STATUS_PRIORITY:
        if status in statuses:
            return status
    return statuses[0]


def _on_ac_from_batteries(status: str | None) -> bool | None:
    # Without any adapter entry (some firmware exposes only the battery), the battery status says
    # whether external power is present: "Not charging" is an adapter holding a charge threshold.
    if status == "Discharging":
        return False
    if status in ("Charging", "Full", "Not charging"):
        return True
    return None


def summarize_power_source(supplies: list[PowerSupply]) -> dict[str, Any]:
    """``{"onAc": bool|None, "batteryPercent": int|None, "batteryStatus": str|None}``.

    Peripheral (scope Device) supplies are ignored. Several system batteries report the mean of
    their capacities, rounded half up.
    """
    system_supplies = [supply for supply in supplies if not supply.is_peripheral]
    adapters = [supply for supply in system_supplies if supply.is_adapter and supply.online is not None]
    batteries = [supply for supply in system_supplies if supply.is_battery]
    battery_status = _combined_status([battery.status for battery in batteries if battery.status])
    capacities = [battery.capacity for battery in batteries if battery.capacity is not None]
    battery_percent = int(sum(capacities) / len(capacities) + 0.5) if capacities else None
    if adapters:
        on_ac: bool | None = any(adapter.online for adapter in adapters)
    else:
        on_ac = _on_ac_from_batteries(battery_status)
    return {"onAc": on_ac, "batteryPercent": battery_percent, "batteryStatus": battery_status}
