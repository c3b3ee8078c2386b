"""``ProcessInfo``: one process of an ancestry chain (a named tuple: cheap to import on the hook path)."""

from __future__ import annotations

from collections import namedtuple

__all__ = ["ProcessInfo"]

ProcessInfo = namedtuple("ProcessInfo", ["pid", "ppid", "name", "exe", "cmdline"], defaults=("", ()))
ProcessInfo.__doc__ = "pid, ppid, name (comm), exe (readlink, '' when unknown) and cmdline (tuple of str)."
