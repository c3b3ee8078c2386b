from __future__ import annotations

import pytest

from lidguard.platform.api import LidState, LidStateReader
from lidguard.platform.linux.lid import LinuxLidStateReader, parse_lid_state_text

from .conftest import SysfsTree

LID0 = "proc/acpi/button/lid/LID0/state"
LID1 = "proc/acpi/button/lid/LID1/state"


def test_implements_the_protocol(sysfs_tree: SysfsTree) -> None:
    assert isinstance(LinuxLidStateReader(sysfs_tree.root), LidStateReader)


def test_no_lid_directory_reads_unknown(sysfs_tree: SysfsTree) -> None:
    assert LinuxLidStateReader(sysfs_tree.root).read_lid_state() is LidState.UNKNOWN


def test_lid_directory_without_devices_reads_unknown(sysfs_tree: SysfsTree) -> None:
    (sysfs_tree.root / "proc/acpi/button/lid").mkdir(parents=True)
    assert LinuxLidStateReader(sysfs_tree.root).read_lid_state() is LidState.UNKNOWN


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("state:      open\n", LidState.OPEN),
        ("state:      closed\n", LidState.CLOSED),
        ("state:closed", LidState.CLOSED),
        ("  state:\t  CLOSED  \n\n", LidState.CLOSED),
        ("state:      unknown\n", LidState.UNKNOWN),
        ("", LidState.UNKNOWN),
        ("garbage", LidState.UNKNOWN),
    ],
)
def test_real_format_and_whitespace(sysfs_tree: SysfsTree, content: str, expected: LidState) -> None:
    sysfs_tree.write(LID0, content)
    assert LinuxLidStateReader(sysfs_tree.root).read_lid_state() is expected


def test_any_closed_lid_wins_over_open_ones(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(LID0, "state:      open\n")
    sysfs_tree.write(LID1, "state:      closed\n")
    reader = LinuxLidStateReader(sysfs_tree.root)
    assert reader.read_lid_state() is LidState.CLOSED
    assert reader.read_file_states() == {"LID0": LidState.OPEN, "LID1": LidState.CLOSED}


def test_open_wins_over_unparseable_entries(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(LID0, "state:      something\n")
    sysfs_tree.write(LID1, "state:      open\n")
    assert LinuxLidStateReader(sysfs_tree.root).read_lid_state() is LidState.OPEN


def test_a_directory_in_place_of_the_state_file_is_ignored(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.directory_in_place_of_file(LID0)
    reader = LinuxLidStateReader(sysfs_tree.root)
    assert reader.read_lid_state() is LidState.UNKNOWN
    sysfs_tree.write(LID1, "state:      open\n")
    assert reader.read_lid_state() is LidState.OPEN


@pytest.mark.parametrize(
    ("logind_answer", "expected"), [(True, LidState.CLOSED), (False, LidState.OPEN), (None, LidState.UNKNOWN)]
)
def test_logind_answers_when_the_file_gives_none(
    sysfs_tree: SysfsTree, logind_answer: bool | None, expected: LidState
) -> None:
    reader = LinuxLidStateReader(sysfs_tree.root, logind_lid_closed=lambda: logind_answer)
    assert reader.read_lid_state() is expected


def test_a_failing_logind_query_reads_unknown(sysfs_tree: SysfsTree) -> None:
    def broken() -> bool | None:
        raise OSError("no system bus")

    assert LinuxLidStateReader(sysfs_tree.root, logind_lid_closed=broken).read_lid_state() is LidState.UNKNOWN


def test_logind_is_not_asked_when_the_file_answers(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(LID0, "state:      open\n")
    calls: list[int] = []

    def logind() -> bool:
        calls.append(1)
        return True

    assert LinuxLidStateReader(sysfs_tree.root, logind_lid_closed=logind).read_lid_state() is LidState.OPEN
    assert calls == []


def test_honours_lidguard_sysfs_root_at_call_time(
    sysfs_tree: SysfsTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = LinuxLidStateReader()
    sysfs_tree.write(LID0, "state:      closed\n")
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(sysfs_tree.root))
    assert reader.read_lid_state() is LidState.CLOSED


def test_describe(sysfs_tree: SysfsTree) -> None:
    reader = LinuxLidStateReader(sysfs_tree.root)
    assert reader.describe().startswith("unsupported: no readable")
    sysfs_tree.write(LID0, "state:      open\n")
    assert reader.describe().startswith("available (")
    assert "LID0=Open" in reader.describe()


def test_parse_lid_state_text() -> None:
    assert parse_lid_state_text("closed") is LidState.CLOSED
    assert parse_lid_state_text("state: open") is LidState.OPEN
    assert parse_lid_state_text("state: opened") is LidState.UNKNOWN
