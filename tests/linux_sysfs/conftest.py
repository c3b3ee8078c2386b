"""Temp /proc and /sys trees in the kernel's real formats (see spec LINUX_TESTING.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


class SysfsTree:
    """Builds files under a temp root that stands in for ``/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative_path: str, content: str | bytes) -> Path:
        path = self.root / relative_path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    def directory_in_place_of_file(self, relative_path: str) -> Path:
        """An unreadable attribute that works as root too (chmod 000 does not stop root)."""
        path = self.root / relative_path.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        return path

    def symlink_device(self, class_entry: str, device_path: str) -> Path:
        """Real class entries are symlinks into /sys/devices: ``class_entry`` -> ``device_path``."""
        target = self.root / device_path.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        link = self.root / class_entry.lstrip("/")
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(target, link.parent), link)
        return target


@pytest.fixture
def sysfs_tree(tmp_path: Path) -> SysfsTree:
    root = tmp_path / "root"
    root.mkdir()
    return SysfsTree(root)
