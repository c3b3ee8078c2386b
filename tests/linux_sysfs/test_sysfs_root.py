from __future__ import annotations

from pathlib import Path

import pytest

from lidguard.platform.linux.sysfs import (
    path_under_root,
    read_attribute_bytes,
    read_attribute_text,
    resolve_root,
    sysfs_root,
)


def test_default_root_is_slash() -> None:
    assert sysfs_root() == Path("/")


def test_root_comes_from_the_environment_at_call_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(tmp_path))
    assert sysfs_root() == tmp_path
    assert resolve_root(None) == tmp_path
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", "  ")
    assert sysfs_root() == Path("/")


def test_an_explicit_root_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", "/elsewhere")
    assert resolve_root(tmp_path) == tmp_path


def test_absolute_paths_are_joined_under_the_root(tmp_path: Path) -> None:
    assert path_under_root(tmp_path, "/proc/acpi/button/lid") == tmp_path / "proc/acpi/button/lid"
    assert path_under_root(Path("/"), "/sys/class/drm") == Path("/sys/class/drm")


def test_unreadable_attributes_read_as_none(tmp_path: Path) -> None:
    (tmp_path / "a_directory").mkdir()
    assert read_attribute_bytes(tmp_path / "a_directory") is None
    assert read_attribute_bytes(tmp_path / "missing") is None
    (tmp_path / "binary").write_bytes(b"\xff\xfe")
    assert read_attribute_text(tmp_path / "binary") is None
    (tmp_path / "value").write_text("  connected \n")
    assert read_attribute_text(tmp_path / "value") == "connected"
