from __future__ import annotations

import pytest

from lidguard.platform.linux.battery import PowerSupply, read_power_supplies, summarize_power_source

from .conftest import SysfsTree

SUPPLIES = "sys/class/power_supply"


def _adapter(tree: SysfsTree, name: str, online: str, supply_type: str = "Mains") -> None:
    tree.write(f"{SUPPLIES}/{name}/type", f"{supply_type}\n")
    tree.write(f"{SUPPLIES}/{name}/online", f"{online}\n")


def _battery(tree: SysfsTree, name: str, status: str, capacity: str, scope: str | None = None) -> None:
    tree.write(f"{SUPPLIES}/{name}/type", "Battery\n")
    tree.write(f"{SUPPLIES}/{name}/status", f"{status}\n")
    tree.write(f"{SUPPLIES}/{name}/capacity", f"{capacity}\n")
    tree.write(f"{SUPPLIES}/{name}/present", "1\n")
    if scope is not None:
        tree.write(f"{SUPPLIES}/{name}/scope", f"{scope}\n")


def test_no_power_supply_directory(sysfs_tree: SysfsTree) -> None:
    assert read_power_supplies(sysfs_tree.root) == []
    assert summarize_power_source([]) == {"onAc": None, "batteryPercent": None, "batteryStatus": None}


def test_laptop_on_battery(sysfs_tree: SysfsTree) -> None:
    _adapter(sysfs_tree, "AC", "0")
    _battery(sysfs_tree, "BAT0", "Discharging", "57")
    supplies = read_power_supplies(sysfs_tree.root)
    assert supplies == [
        PowerSupply(name="AC", type="Mains", online=False),
        PowerSupply(name="BAT0", type="Battery", status="Discharging", capacity=57),
    ]
    assert summarize_power_source(supplies) == {
        "onAc": False,
        "batteryPercent": 57,
        "batteryStatus": "Discharging",
    }


def test_laptop_charging_with_extra_whitespace(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(f"{SUPPLIES}/ACAD/type", "  Mains \n")
    sysfs_tree.write(f"{SUPPLIES}/ACAD/online", "1\n\n")
    _battery(sysfs_tree, "BAT1", "Charging", " 80 ")
    summary = summarize_power_source(read_power_supplies(sysfs_tree.root))
    assert summary == {"onAc": True, "batteryPercent": 80, "batteryStatus": "Charging"}


def test_usb_c_charger_counts_as_ac(sysfs_tree: SysfsTree) -> None:
    _adapter(sysfs_tree, "AC", "0")
    _adapter(sysfs_tree, "ucsi-source-psy-USBC000:001", "1", supply_type="USB")
    _battery(sysfs_tree, "BAT0", "Not charging", "80")
    assert summarize_power_source(read_power_supplies(sysfs_tree.root))["onAc"] is True


@pytest.mark.parametrize(
    ("status", "on_ac"),
    [("Discharging", False), ("Charging", True), ("Full", True), ("Not charging", True), ("Unknown", None)],
)
def test_battery_only_firmware_infers_ac_from_status(
    sysfs_tree: SysfsTree, status: str, on_ac: bool | None
) -> None:
    _battery(sysfs_tree, "BAT0", status, "100")
    assert summarize_power_source(read_power_supplies(sysfs_tree.root))["onAc"] is on_ac


def test_peripheral_batteries_are_ignored(sysfs_tree: SysfsTree) -> None:
    _adapter(sysfs_tree, "AC", "1")
    _battery(sysfs_tree, "BAT0", "Full", "100", scope="System")
    _battery(sysfs_tree, "hid-00:11:22:33:44:55-battery", "Discharging", "12", scope="Device")
    summary = summarize_power_source(read_power_supplies(sysfs_tree.root))
    assert summary == {"onAc": True, "batteryPercent": 100, "batteryStatus": "Full"}


def test_two_batteries(sysfs_tree: SysfsTree) -> None:
    _battery(sysfs_tree, "BAT0", "Full", "100")
    _battery(sysfs_tree, "BAT1", "Discharging", "45")
    summary = summarize_power_source(read_power_supplies(sysfs_tree.root))
    assert summary == {"onAc": False, "batteryPercent": 73, "batteryStatus": "Discharging"}


def test_unreadable_and_garbage_attributes(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.directory_in_place_of_file(f"{SUPPLIES}/BROKEN/type")
    sysfs_tree.write(f"{SUPPLIES}/not-a-dir", "x")
    _adapter(sysfs_tree, "AC", "maybe")
    _battery(sysfs_tree, "BAT0", "Discharging", "lots")
    sysfs_tree.directory_in_place_of_file(f"{SUPPLIES}/BAT1/status")
    sysfs_tree.write(f"{SUPPLIES}/BAT1/type", "Battery\n")
    sysfs_tree.write(f"{SUPPLIES}/BAT1/capacity", "250\n")
    supplies = read_power_supplies(sysfs_tree.root)
    assert supplies == [
        PowerSupply(name="AC", type="Mains", online=None),
        PowerSupply(name="BAT0", type="Battery", status="Discharging", capacity=None),
        PowerSupply(name="BAT1", type="Battery", status=None, capacity=None),
    ]
    assert summarize_power_source(supplies) == {
        "onAc": False,
        "batteryPercent": None,
        "batteryStatus": "Discharging",
    }


def test_honours_lidguard_sysfs_root(sysfs_tree: SysfsTree, monkeypatch: pytest.MonkeyPatch) -> None:
    _adapter(sysfs_tree, "AC", "1")
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(sysfs_tree.root))
    assert [supply.name for supply in read_power_supplies()] == ["AC"]
