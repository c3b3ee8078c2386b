"""cffi build script for ``lidguard._native._macos`` (out-of-line ABI mode, no compiler needed).

Selected for macOS builds. The declarations live in ``macos_cdef.h`` beside this file; the frameworks
are opened at run time by ``lidguard.platform.macos._binding`` (macOS only). On other OSes the
declarations are still parsed by the test suite (tests/macos/test_macos_binding.py).
"""

from __future__ import annotations

from pathlib import Path

import cffi

CDEF_PATH = Path(__file__).with_name("macos_cdef.h")
MODULE_NAME = "lidguard._native._macos"


def read_cdef() -> str:
    return CDEF_PATH.read_text(encoding="utf-8")


ffibuilder = cffi.FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(MODULE_NAME, None)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(Path(__file__).resolve().parents[1] / "src"), verbose=True)
