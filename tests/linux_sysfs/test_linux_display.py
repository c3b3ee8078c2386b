from __future__ import annotations

import pytest

from lidguard.platform.api import DisplayConnector, DisplayReader, count_visible_displays
from lidguard.platform.linux.display import LinuxDisplayReader, connector_name, is_internal_connector

from .conftest import SysfsTree

DRM = "sys/class/drm"


def _laptop_with_hdmi(tree: SysfsTree) -> None:
    tree.write(f"{DRM}/version", "drm 1.1.0 20060810\n")
    tree.write(f"{DRM}/card0/dev", "226:0\n")
    tree.write(f"{DRM}/renderD128/dev", "226:128\n")
    tree.write(f"{DRM}/card0-eDP-1/status", "connected\n")
    tree.write(f"{DRM}/card0-HDMI-A-1/status", "connected\n")
    tree.write(f"{DRM}/card0-DP-1/status", "disconnected\n")
    tree.write(f"{DRM}/card0-DP-2/status", "unknown\n")


def test_implements_the_protocol(sysfs_tree: SysfsTree) -> None:
    assert isinstance(LinuxDisplayReader(sysfs_tree.root), DisplayReader)


def test_no_drm_directory_lists_nothing(sysfs_tree: SysfsTree) -> None:
    reader = LinuxDisplayReader(sysfs_tree.root)
    assert reader.list_connected_displays() == []
    assert reader.describe().startswith("unsupported: no readable")


def test_hdmi_and_edp(sysfs_tree: SysfsTree) -> None:
    _laptop_with_hdmi(sysfs_tree)
    displays = LinuxDisplayReader(sysfs_tree.root).list_connected_displays()
    assert displays == [
        DisplayConnector("HDMI-A-1", internal=False),
        DisplayConnector("eDP-1", internal=True),
    ]
    assert count_visible_displays(displays, exclude_internal=True) == 1
    assert count_visible_displays(displays, exclude_internal=False) == 2


def test_lid_closed_without_external_display_counts_zero(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(f"{DRM}/card0-eDP-1/status", "connected\n")
    sysfs_tree.write(f"{DRM}/card0-HDMI-A-1/status", "disconnected\n")
    displays = LinuxDisplayReader(sysfs_tree.root).list_connected_displays()
    assert count_visible_displays(displays, exclude_internal=True) == 0


@pytest.mark.parametrize(
    ("entry", "internal"),
    [
        ("card0-LVDS-1", True),
        ("card1-DSI-1", True),
        ("card0-edp-2", True),
        ("card0-Lvds-3", True),
        ("card0-DP-3", False),
        ("card0-Virtual-1", False),
        ("card0-DVI-D-1", False),
    ],
)
def test_internal_connector_families(sysfs_tree: SysfsTree, entry: str, internal: bool) -> None:
    sysfs_tree.write(f"{DRM}/{entry}/status", "connected\n")
    (display,) = LinuxDisplayReader(sysfs_tree.root).list_connected_displays()
    assert display == DisplayConnector(entry.split("-", 1)[1], internal=internal)


def test_extra_whitespace_and_unreadable_status(sysfs_tree: SysfsTree) -> None:
    sysfs_tree.write(f"{DRM}/card0-HDMI-A-1/status", "  connected \n\n")
    sysfs_tree.directory_in_place_of_file(f"{DRM}/card0-HDMI-A-2/status")
    sysfs_tree.write(f"{DRM}/card0-HDMI-A-3/status", "Connected\n")  # the kernel writes lower case only
    assert LinuxDisplayReader(sysfs_tree.root).list_connected_displays() == [
        DisplayConnector("HDMI-A-1", False)
    ]


def test_symlinked_connectors_like_real_sysfs(sysfs_tree: SysfsTree) -> None:
    device = "sys/devices/pci0000:00/0000:00:02.0/drm/card0"
    sysfs_tree.symlink_device(f"{DRM}/card0", device)
    connector = sysfs_tree.symlink_device(f"{DRM}/card0-eDP-1", f"{device}/card0-eDP-1")
    (connector / "status").write_text("connected\n")
    assert LinuxDisplayReader(sysfs_tree.root).list_connected_displays() == [DisplayConnector("eDP-1", True)]


def test_honours_lidguard_sysfs_root(sysfs_tree: SysfsTree, monkeypatch: pytest.MonkeyPatch) -> None:
    _laptop_with_hdmi(sysfs_tree)
    reader = LinuxDisplayReader()
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(sysfs_tree.root))
    assert [display.name for display in reader.list_connected_displays()] == ["HDMI-A-1", "eDP-1"]


def test_describe_lists_connected(sysfs_tree: SysfsTree) -> None:
    _laptop_with_hdmi(sysfs_tree)
    description = LinuxDisplayReader(sysfs_tree.root).describe()
    assert description == "available (4 DRM connectors; connected: HDMI-A-1, eDP-1 (internal))"


def test_connector_name_helpers() -> None:
    assert connector_name("card0-eDP-1") == "eDP-1"
    assert connector_name("card12-HDMI-A-1") == "HDMI-A-1"
    assert connector_name("card0") == "card0"
    assert is_internal_connector("DSI-1") and not is_internal_connector("DP-1")
