"""Selects lidguard's native modules for the operating system being built for.

All metadata lives in pyproject.toml. Compiled modules are optional accelerators:
``LIDGUARD_NO_EXTENSIONS=1`` builds a pure wheel, ``LIDGUARD_REQUIRE_EXTENSIONS=1`` makes a
failed native build fatal (used for release wheels).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NO_EXTENSIONS = os.environ.get("LIDGUARD_NO_EXTENSIONS", "") not in ("", "0")
REQUIRE_EXTENSIONS = os.environ.get("LIDGUARD_REQUIRE_EXTENSIONS", "") not in ("", "0")


def _cython_extensions():
    """Cython modules per OS (sources in native/, built into lidguard._native)."""
    if sys.platform.startswith("linux"):
        return [
            Extension("lidguard._native._proctree", ["native/proctree_linux.pyx"], optional=not REQUIRE_EXTENSIONS),
            Extension("lidguard._native._thermal", ["native/thermal_linux.pyx"], optional=not REQUIRE_EXTENSIONS),
        ]
    return []


def _cffi_modules():
    """cffi out-of-line ABI modules per OS (cdefs in native/, generated at build time)."""
    if sys.platform.startswith("linux"):
        return [spec for spec in ["native/logind_build.py:ffibuilder"] if os.path.exists(spec.split(":")[0])]
    return []


class OptionalBuildExt(build_ext):
    """Keeps a failed native build from failing the install unless extensions are required."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # a missing compiler or header must not break `pip install .`
            if REQUIRE_EXTENSIONS:
                raise
            print(f"lidguard: native modules not built ({error}); the pure-Python fallback will be used")


def _ext_modules():
    if NO_EXTENSIONS:
        return []
    extensions = [ext for ext in _cython_extensions() if all(os.path.exists(src) for src in ext.sources)]
    if not extensions:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRE_EXTENSIONS:
            raise
        print("lidguard: Cython is not available; building without compiled modules")
        return []
    compiled = []
    for extension in extensions:  # one at a time: a broken .pyx must not sink the others
        try:
            compiled += cythonize([extension], language_level=3, quiet=True)
        except Exception as error:
            if REQUIRE_EXTENSIONS:
                raise
            print(f"lidguard: {extension.name} not generated ({error}); its pure-Python fallback will be used")
    return compiled


setup_kwargs = {"ext_modules": _ext_modules(), "cmdclass": {"build_ext": OptionalBuildExt}}
if not NO_EXTENSIONS:
    setup_kwargs["cffi_modules"] = _cffi_modules()

setup(**setup_kwargs)
