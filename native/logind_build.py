"""cffi build script for ``lidguard._native._logind`` (out-of-line ABI mode, no compiler needed).

``setup.py`` registers ``native/logind_build.py:ffibuilder``; ``python setup.py build_ext --inplace``
writes ``src/lidguard/_native/_logind.py``. The declarations live in ``logind_cdef.h`` beside this file;
the library itself (``libsystemd.so.0`` or ``libelogind.so.0``) is opened at run time by
``lidguard.platform.linux._binding``. See https://cffi.readthedocs.io/en/stable/overview.html#abi-out-of-line
"""

from __future__ import annotations

from pathlib import Path

import cffi

CDEF_PATH = Path(__file__).with_name("logind_cdef.h")
MODULE_NAME = "lidguard._native._logind"


def read_cdef() -> str:
    return CDEF_PATH.read_text(encoding="utf-8")


ffibuilder = cffi.FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(MODULE_NAME, None)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(Path(__file__).resolve().parents[1] / "src"), verbose=True)
