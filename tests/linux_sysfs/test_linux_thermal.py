from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lidguard.platform.api import TemperatureMode, ThermalReader, aggregate_temperature
from lidguard.platform.linux.thermal import LinuxThermalReader, read_zone_temperatures_pure

from .conftest import SysfsTree

THERMAL = "sys/class/thermal"


SAMPLERS: list[Any] = [pytest.param(read_zone_temperatures_pure, id="pure")]


@pytest.fixture(params=SAMPLERS)
def sampler(request: pytest.FixtureRequest) -> Callable[[Path], list[float]]:
    sample: Callable[[Path], list[float]] = request.param
    return sample


def _zone(tree: SysfsTree, index: int | str, temp: str | bytes, zone_type: str = "x86_pkg_temp") -> None:
    tree.write(f"{THERMAL}/thermal_zone{index}/type", f"{zone_type}\n")
    tree.write(f"{THERMAL}/thermal_zone{index}/temp", temp)


def test_no_thermal_directory(sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]) -> None:
    assert sampler(sysfs_tree.root) == []


def test_thermal_directory_without_zones(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    sysfs_tree.write(f"{THERMAL}/cooling_device0/cur_state", "0\n")
    assert sampler(sysfs_tree.root) == []


def test_millidegrees_become_celsius_in_zone_order(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    _zone(sysfs_tree, 10, "61000\n")
    _zone(sysfs_tree, 2, "45000\n", "acpitz")
    _zone(sysfs_tree, 0, "52500\n")
    assert sampler(sysfs_tree.root) == [52.5, 45.0, 61.0]


def test_whitespace_signs_and_non_positive_values(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    _zone(sysfs_tree, 0, "  45000 \n\n")
    _zone(sysfs_tree, 1, "\t+38125\r\n")
    _zone(sysfs_tree, 2, "0\n")
    _zone(sysfs_tree, 3, "-273000\n")
    assert sampler(sysfs_tree.root) == [45.0, 38.125, 0.0, -273.0]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b"N/A\n",
        b"45.5\n",
        b"4a000\n",
        b"45 000\n",
        b"+-1\n",
        b"0x10\n",
        b"1" * 19,
        b"\x00",
        b"\xff",
    ],
)
def test_non_numeric_values_are_skipped(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]], content: bytes
) -> None:
    _zone(sysfs_tree, 0, content)
    _zone(sysfs_tree, 1, "41000\n")
    assert sampler(sysfs_tree.root) == [41.0]


def test_oversized_and_unreadable_zones_are_skipped(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    _zone(sysfs_tree, 0, " " * 64 + "1\n")  # 66 bytes: longer than any temperature
    sysfs_tree.directory_in_place_of_file(f"{THERMAL}/thermal_zone1/temp")
    sysfs_tree.write(f"{THERMAL}/thermal_zone2", "a file where a zone directory should be")
    (sysfs_tree.root / THERMAL / "thermal_zone3").mkdir()  # no temp at all
    _zone(sysfs_tree, 4, " " * 58 + "42000\n")  # exactly 64 bytes
    assert sampler(sysfs_tree.root) == [42.0]


def test_symlinked_zones_like_real_sysfs(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    zone = sysfs_tree.symlink_device(f"{THERMAL}/thermal_zone0", "sys/devices/virtual/thermal/thermal_zone0")
    (zone / "temp").write_text("47000\n")
    assert sampler(sysfs_tree.root) == [47.0]


def test_non_numeric_zone_suffixes_sort_last(
    sysfs_tree: SysfsTree, sampler: Callable[[Path], list[float]]
) -> None:
    _zone(sysfs_tree, "_extra", "1000\n")
    _zone(sysfs_tree, 1, "2000\n")
    assert sampler(sysfs_tree.root) == [2.0, 1.0]


# -- the reader --------------------------------------------------------------------------------


def test_reader_implements_the_protocol_and_keeps_positive_values(sysfs_tree: SysfsTree) -> None:
    _zone(sysfs_tree, 0, "45000\n")
    _zone(sysfs_tree, 1, "0\n")
    _zone(sysfs_tree, 2, "-5000\n")
    _zone(sysfs_tree, 3, "55000\n")
    reader = LinuxThermalReader(sysfs_tree.root)
    assert isinstance(reader, ThermalReader)
    assert reader.read_temperatures_celsius() == [45.0, 55.0]
    assert aggregate_temperature(reader.read_temperatures_celsius(), TemperatureMode.AVERAGE) == 50


def test_reader_without_zones_is_unavailable(sysfs_tree: SysfsTree) -> None:
    reader = LinuxThermalReader(sysfs_tree.root)
    assert reader.read_temperatures_celsius() == []
    assert aggregate_temperature(reader.read_temperatures_celsius(), TemperatureMode.HIGH) is None
    assert reader.describe().startswith("unsupported: no positive reading")


def test_reader_honours_lidguard_sysfs_root(sysfs_tree: SysfsTree, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = LinuxThermalReader()
    _zone(sysfs_tree, 0, "45000\n")
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(sysfs_tree.root))
    assert reader.read_temperatures_celsius() == [45.0]


@pytest.mark.parametrize("switch", ["LIDGUARD_NO_EXTENSIONS", "LIDGUARD_REQUIRE_EXTENSIONS"])
def test_the_pure_reader_is_the_only_one_whatever_the_switches(
    sysfs_tree: SysfsTree, monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    """Issue 22 removed the compiled sampler (2.5x the pure reader at the floor of its system calls, below
    the 3x that would pay for it): requiring compiled modules never asks for one."""
    monkeypatch.setenv(switch, "1")
    _zone(sysfs_tree, 0, "45000\n")
    reader = LinuxThermalReader(sysfs_tree.root)
    assert reader.read_temperatures_celsius() == [45.0]
    assert reader.describe() == "available (1 zones: 45 C)"


# -- the contract over generated trees ---------------------------------------------------------------

_TEMP_CONTENTS = st.one_of(
    st.integers(min_value=-300_000, max_value=200_000).map(lambda value: f"{value}\n".encode()),
    st.tuples(
        st.sampled_from([b"", b" ", b"\t", b"\n", b"  \r\n"]),
        st.sampled_from([b"", b"+", b"-"]),
        st.text(alphabet="0123456789", min_size=0, max_size=20).map(str.encode),
        st.sampled_from([b"", b"\n", b" \n", b"x"]),
    ).map(b"".join),
    st.binary(max_size=70),
    st.none(),  # a directory in place of temp
)


def _contract(zones: dict[int, bytes | None]) -> list[float]:
    """The module docstring's rules, spelled out: numeric order; at most 64 bytes; ASCII whitespace around
    an optional sign and 1-18 digits; anything else (a directory in place of temp) skips the zone."""
    values = []
    for index in sorted(zones):
        content = zones[index]
        if content is None or len(content) > 64:
            continue
        if re.fullmatch(rb"[+-]?[0-9]{1,18}", content.strip(b" \t\n\r\x0b\x0c")):
            values.append(int(content.strip()) / 1000.0)
    return values


@settings(max_examples=150, deadline=None)
@given(zones=st.dictionaries(st.integers(min_value=0, max_value=40), _TEMP_CONTENTS, max_size=8))
def test_the_reader_keeps_the_contract(zones: dict[int, bytes | None]) -> None:
    with tempfile.TemporaryDirectory(prefix="lg-thermal-") as directory:
        tree = SysfsTree(Path(directory))
        (tree.root / THERMAL).mkdir(parents=True)
        for index, content in zones.items():
            if content is None:
                tree.directory_in_place_of_file(f"{THERMAL}/thermal_zone{index}/temp")
            else:
                _zone(tree, index, content)
        assert read_zone_temperatures_pure(tree.root) == _contract(zones)
