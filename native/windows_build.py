"""cffi build script for ``lidguard._native._windows`` (out-of-line ABI mode, no compiler needed).

``setup.py`` registers ``native/windows_build.py:ffibuilder`` when building on Windows; the
declarations live in ``windows_cdef.h`` beside this file and the DLLs (kernel32, powrprof, advapi32,
user32, ntdll, ole32) are opened at run time by ``lidguard.platform.windows._binding``.
See https://cffi.readthedocs.io/en/stable/overview.html#abi-out-of-line
"""

from __future__ import annotations

from pathlib import Path

import cffi

CDEF_PATH = Path(__file__).with_name("windows_cdef.h")
MODULE_NAME = "lidguard._native._windows"


def read_cdef() -> str:
    return CDEF_PATH.read_text(encoding="utf-8")


ffibuilder = cffi.FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(MODULE_NAME, None)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(Path(__file__).resolve().parents[1] / "src"), verbose=True)
