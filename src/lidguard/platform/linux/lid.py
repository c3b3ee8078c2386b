"""Linux lid switch state from the ACPI button driver's procfs file, with optional logind confirmation.

``/proc/acpi/button/lid/<LID>/state`` holds one line such as ``state:      open`` or
``state:      closed`` (drivers/acpi/button.c, ``acpi_button_state_seq_show``). Machines without an
ACPI lid (desktops, VMs, containers, some ARM laptops) have no such file: the state is Unknown, and
logind's ``LidClosed`` property (org.freedesktop.login1(5)) may answer instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..api import LidState
from .sysfs import path_under_root, read_attribute_text, resolve_root

__all__ = ["LID_STATE_DIRECTORY", "LinuxLidStateReader", "parse_lid_state_text"]

LID_STATE_DIRECTORY = "/proc/acpi/button/lid"

LogindLidClosed = Callable[[], "bool | None"]


def parse_lid_state_text(text: str) -> LidState:
    """``state:      closed`` -> Closed; ``open`` -> Open; anything else -> Unknown."""
    _, separator, value = text.partition(":")
    word = (value if separator else text).strip().lower()
    if word == "closed":
        return LidState.CLOSED
    if word == "open":
        return LidState.OPEN
    return LidState.UNKNOWN


class LinuxLidStateReader:
    """Any lid closed -> Closed; else any open -> Open; else Unknown (or logind's answer)."""

    def __init__(
        self,
        root: Path | None = None,
        logind_lid_closed: LogindLidClosed | None = None,
    ) -> None:
        self._root = root
        self._logind_lid_closed = logind_lid_closed

    def _state_files(self) -> list[Path]:
        directory = path_under_root(resolve_root(self._root), LID_STATE_DIRECTORY)
        return sorted(directory.glob("*/state"))

    def read_file_states(self) -> dict[str, LidState]:
        """Lid device name (e.g. ``LID0``) -> parsed state, for every readable state file."""
        states: dict[str, LidState] = {}
        for state_file in self._state_files():
            text = read_attribute_text(state_file)
            if text is not None:
                states[state_file.parent.name] = parse_lid_state_text(text)
        return states

    def read_lid_state(self) -> LidState:
        states = set(self.read_file_states().values())
        if LidState.CLOSED in states:
            return LidState.CLOSED
        if LidState.OPEN in states:
            return LidState.OPEN
        return self._read_logind_state()

    def _read_logind_state(self) -> LidState:
        if self._logind_lid_closed is None:
            return LidState.UNKNOWN
        try:
            closed = self._logind_lid_closed()
        except Exception:  # noqa: BLE001 - any bus failure means "no answer", never a crashed monitor
            return LidState.UNKNOWN
        if closed is None:
            return LidState.UNKNOWN
        return LidState.CLOSED if closed else LidState.OPEN

    def describe(self) -> str:
        states = self.read_file_states()
        directory = path_under_root(resolve_root(self._root), LID_STATE_DIRECTORY)
        logind_note = (
            "; logind LidClosed used when the file gives no answer" if self._logind_lid_closed else ""
        )
        if states:
            listed = ", ".join(f"{name}={state.value}" for name, state in states.items())
            return f"available ({directory}/*/state: {listed}{logind_note})"
        return f"unsupported: no readable {directory}/*/state (lid state reads Unknown{logind_note})"
