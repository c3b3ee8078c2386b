"""Where the Linux readers find /proc and /sys, and how they read one small attribute file.

Every /proc/acpi and /sys path a reader opens is prefixed by :func:`sysfs_root`, which comes from
``LIDGUARD_SYSFS_ROOT`` (default ``/``) and is read at call time, so tests and a runtime started with
the variable see a temp tree built in the kernel's real formats. Process ancestry (/proc/<pid>) is
not affected: it always describes the real processes.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "SYSFS_ROOT_VARIABLE",
    "path_under_root",
    "read_attribute_bytes",
    "read_attribute_text",
    "resolve_root",
    "sysfs_root",
]

SYSFS_ROOT_VARIABLE = "LIDGUARD_SYSFS_ROOT"

# sysfs attributes are at most one page; the values lidguard reads are a few bytes.
_ATTRIBUTE_READ_LIMIT = 4096


def sysfs_root() -> Path:
    """The directory standing in for ``/`` for /proc/acpi and /sys paths (env read at each call)."""
    from ... import switches

    configured = switches.sysfs_root()
    return Path(configured) if configured else Path("/")


def resolve_root(root: Path | None) -> Path:
    """An explicit reader root wins; ``None`` means the environment's root, resolved now."""
    return root if root is not None else sysfs_root()


def path_under_root(root: Path, absolute_path: str) -> Path:
    """``root`` + ``/proc/acpi/button/lid`` -> ``<root>/proc/acpi/button/lid``."""
    return root / absolute_path.lstrip("/")


def read_attribute_bytes(path: Path, *, limit: int = _ATTRIBUTE_READ_LIMIT) -> bytes | None:
    """The raw content of one attribute file, or None when it cannot be read.

    A directory in place of the file (IsADirectoryError), a vanished device (FileNotFoundError),
    permissions, and drivers that fail the read itself (EIO/ENODATA, e.g. some thermal zones and
    hot-unplugged power supplies) all count as "not readable": the caller ignores the entry.
    """
    try:
        with open(path, "rb") as attribute:
            return attribute.read(limit)
    except OSError:
        return None


def read_attribute_text(path: Path) -> str | None:
    """The attribute as stripped ASCII text, or None when unreadable or not text."""
    content = read_attribute_bytes(path)
    if content is None:
        return None
    try:
        return content.decode("ascii").strip()
    except UnicodeDecodeError:
        return None
