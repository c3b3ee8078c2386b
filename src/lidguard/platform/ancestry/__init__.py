"""Process ancestry and liveness, one stdlib-only reader per OS (the seam behind ``lidguard.proctree``).

Every reader module offers the same names (checked by mypy through ``AncestryReader``):

* ``OS_NAME``: ``linux``, ``macos``, ``windows`` or ``unsupported``;
* ``NATIVE_MODULE`` / ``NATIVE_ABI_VERSION``: the compiled accelerator in ``lidguard._native`` that does
  the same walk (``None`` when the OS has none yet); ``lidguard.proctree`` loads it;
* ``read_ancestry(pid, *, max_depth)``: ``pid`` and its parents, closest first, ``[]`` when it is gone;
  raises ``Unsupported`` with a reason on an OS whose reader is not written yet;
* ``read_process_state(pid)``: a one-letter state (``R``, ``S``, ``Z``...) or None when unknown;
* ``is_process_alive(pid)``: True while it runs (a zombie counts as exited where the OS can tell);
* ``descendant_cpu_seconds(pid)``: CPU seconds its descendants used (None: it is gone; ``Unsupported``
  where the OS has no reader), read by the runtime only when the inactivity timer fires.

The readers import only the standard library: the hook path (``lidguard start --parent-pid auto``)
reads the ancestry before any backend is loaded. ``host_reader`` is the only place that looks at
``sys.platform`` for ancestry (a macOS reader will use ``sysctl(KERN_PROC)``/libproc through ctypes;
a Windows one ``CreateToolhelp32Snapshot`` - each lands with its platform's issue).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)

if TYPE_CHECKING:
    from typing import Protocol

    from ..process_info import ProcessInfo

    class AncestryReader(Protocol):
        OS_NAME: str
        NATIVE_MODULE: str | None
        NATIVE_ABI_VERSION: int

        def read_ancestry(self, pid: int, *, max_depth: int) -> list[ProcessInfo]: ...

        def read_process_state(self, pid: int) -> str | None: ...

        def is_process_alive(self, pid: int) -> bool: ...

        def descendant_cpu_seconds(self, pid: int) -> float | None: ...


__all__ = ["host_reader"]


def host_reader() -> AncestryReader:
    """The reader for the OS this process runs on."""
    if sys.platform.startswith("linux"):
        from . import linux

        return linux
    if sys.platform == "darwin":
        from . import macos

        return macos
    if sys.platform == "win32":
        from . import windows

        return windows
    from . import unsupported

    return unsupported
