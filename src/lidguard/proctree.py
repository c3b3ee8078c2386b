"""Process ancestry and liveness for the hook hot path (stdlib only, cheap to import).

A small dispatcher: the per-OS stdlib reader comes from :func:`lidguard.platform.ancestry.host_reader`
(Linux: /proc; macOS and Windows raise ``Unsupported`` with a reason until their readers land), and
the reader's compiled accelerator, when it has one, from :mod:`lidguard._native` (this module is its
only importer besides that loader). No OS check lives here.

``read_ancestry`` and ``descendant_cpu_seconds`` use the compiled reader when it loaded (and its ABI
matches), else the pure one;
``LIDGUARD_NO_EXTENSIONS=1`` forces the pure reader. ``read_ancestry_pure``/``read_process_state``
take a ``proc_root`` so tests can walk fake /proc trees on any OS.
"""

from __future__ import annotations

import os
from types import ModuleType

from lidguard._native import load_native_module, native_statuses
from lidguard.platform.ancestry import host_reader
from lidguard.platform.ancestry import linux as _procfs
from lidguard.platform.errors import Unsupported
from lidguard.platform.process_info import ProcessInfo

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_PROC_ROOT",
    "NATIVE_ABI_VERSION",
    "Unsupported",
    "descendant_cpu_seconds",
    "host_os_reader",
    "is_process_alive",
    "native_active",
    "native_status_reason",
    "read_ancestry",
    "read_ancestry_native",
    "read_ancestry_pure",
    "read_process_state",
]

DEFAULT_MAX_DEPTH = 64
DEFAULT_PROC_ROOT = _procfs.DEFAULT_PROC_ROOT

_reader = host_reader()
NATIVE_ABI_VERSION = _reader.NATIVE_ABI_VERSION
_NATIVE_MODULE_NAME = _reader.NATIVE_MODULE
_native: ModuleType | None = (
    load_native_module(_NATIVE_MODULE_NAME, NATIVE_ABI_VERSION) if _NATIVE_MODULE_NAME else None
)


def host_os_reader() -> str:
    """Which per-OS reader this process uses (``linux``, ``macos``, ``windows``, ``unsupported``)."""
    return _reader.OS_NAME


def native_active() -> bool:
    """True when ``read_ancestry`` uses the compiled reader."""
    return _native is not None


def native_status_reason() -> str:
    """One line for `lidguard doctor`: why the compiled reader is (not) in use."""
    if _NATIVE_MODULE_NAME is None:
        return f"no compiled ancestry reader for {_reader.OS_NAME}"
    for status in native_statuses():
        if status.name == _NATIVE_MODULE_NAME:
            return status.reason
    return "not loaded"


def read_ancestry(pid: int | None = None, *, max_depth: int = DEFAULT_MAX_DEPTH) -> list[ProcessInfo]:
    """``pid`` (default: this process) and its parents, closest first; [] when ``pid`` is gone."""
    target = os.getpid() if pid is None else pid
    if _native is not None:
        return _native.read_chain(target, max_depth, DEFAULT_PROC_ROOT, ProcessInfo)  # type: ignore[no-any-return]
    return _reader.read_ancestry(target, max_depth=max_depth)


def read_ancestry_native(
    pid: int, *, max_depth: int = DEFAULT_MAX_DEPTH, proc_root: str = DEFAULT_PROC_ROOT
) -> list[ProcessInfo]:
    """The compiled reader only; raises ``Unsupported`` when it is not active (for parity tests)."""
    if _native is None:
        raise Unsupported("process", f"the compiled ancestry reader is not active: {native_status_reason()}")
    return _native.read_chain(pid, max_depth, proc_root, ProcessInfo)  # type: ignore[no-any-return]


def read_ancestry_pure(
    pid: int, *, max_depth: int = DEFAULT_MAX_DEPTH, proc_root: str = DEFAULT_PROC_ROOT
) -> list[ProcessInfo]:
    """The OS's pure-Python reader; with another ``proc_root``, the /proc walk over that tree."""
    if proc_root == DEFAULT_PROC_ROOT:
        return _reader.read_ancestry(pid, max_depth=max_depth)
    return _procfs.read_ancestry_procfs(pid, max_depth=max_depth, proc_root=proc_root)


def is_process_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie counts as exited where the OS can tell."""
    return _reader.is_process_alive(pid)


def descendant_cpu_seconds(pid: int) -> float | None:
    """CPU seconds the descendants of ``pid`` used (None: ``pid`` is gone); ``Unsupported`` where the OS
    has no reader. The runtime reads it only when the inactivity timer fires for a running tool;
    the compiled reader when it is active, else the OS's pure one."""
    if _native is not None:
        return _native.descendant_cpu(pid, DEFAULT_PROC_ROOT)  # type: ignore[no-any-return]
    return _reader.descendant_cpu_seconds(pid)


def read_process_state(pid: int, *, proc_root: str = DEFAULT_PROC_ROOT) -> str | None:
    """The one-letter state (R, S, D, Z, ...), None when unknown or unreadable."""
    if proc_root == DEFAULT_PROC_ROOT:
        return _reader.read_process_state(pid)
    return _procfs.read_process_state(pid, proc_root=proc_root)

