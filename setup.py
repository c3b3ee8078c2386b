"""Selects lidguard's native modules for the operating system being built for.

All metadata lives in pyproject.toml. Compiled modules are optional accelerators:
``LIDGUARD_NO_EXTENSIONS=1`` builds a pure wheel, ``LIDGUARD_REQUIRE_EXTENSIONS=1`` makes a
failed native build fatal (used for release wheels). Both are read by ``src/lidguard/switches.py``,
loaded here by path (the package is not built yet), so the build and the runtime modules agree on
every value (``false``, ``off``, ...); a value that is neither on nor off stops the build.
"""

import importlib.util
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _load_switches():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "lidguard", "switches.py")
    spec = importlib.util.spec_from_file_location("_lidguard_build_switches", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_switches = _load_switches()
try:
    NO_EXTENSIONS = _switches.no_extensions()
    REQUIRE_EXTENSIONS = _switches.require_extensions()
except _switches.SwitchError as error:
    sys.exit(f"lidguard: {error}")


def _cython_extensions():
    """Cython modules per OS (sources in native/, built into lidguard._native)."""
    if sys.platform.startswith("linux"):
        return [
            Extension("lidguard._native._proctree", ["native/proctree_linux.pyx"], optional=not REQUIRE_EXTENSIONS),
        ]
    return []


def _cffi_modules():
    """cffi out-of-line ABI modules per OS (cdefs in native/, generated at build time)."""
    if sys.platform.startswith("linux"):
        return [spec for spec in ["native/logind_build.py:ffibuilder"] if os.path.exists(spec.split(":")[0])]
    if sys.platform == "win32":
        return [spec for spec in ["native/windows_build.py:ffibuilder"] if os.path.exists(spec.split(":")[0])]
    if sys.platform == "darwin":
        return [spec for spec in ["native/macos_build.py:ffibuilder"] if os.path.exists(spec.split(":")[0])]
    return []


HOOK_CLIENT_SOURCE = "native/hook_client.c"
HOOK_CLIENT_NAME = "lidguard-hook"  # lidguard/_native/lidguard-hook (src/lidguard/platform/hook_client.py finds it)


class OptionalBuildExt(build_ext):
    """Keeps a failed native build from failing the install unless extensions are required; also builds
    the native hook client, an executable inside the package (POSIX only: the Windows pipe is not written)."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # a missing compiler or header must not break `pip install .`
            if REQUIRE_EXTENSIONS:
                raise
            print(f"lidguard: native modules not built ({error}); the pure-Python fallback will be used")
        if os.name == "posix" and os.path.exists(HOOK_CLIENT_SOURCE):
            try:
                self._build_hook_client()
            except Exception as error:
                if REQUIRE_EXTENSIONS:
                    raise
                print(f"lidguard: the native hook client was not built ({error}); hooks run the Python hook")

    def _build_hook_client(self):
        from setuptools._distutils.ccompiler import new_compiler
        from setuptools._distutils.sysconfig import customize_compiler

        compiler = new_compiler(verbose=self.verbose, force=self.force)
        customize_compiler(compiler)
        if self.inplace:
            target = self.get_finalized_command("build_py").get_package_dir("lidguard._native")
        else:
            target = os.path.join(self.build_lib, "lidguard", "_native")
        os.makedirs(target, exist_ok=True)
        objects = compiler.compile([HOOK_CLIENT_SOURCE], output_dir=self.build_temp,
                                   extra_postargs=["-O2", "-Wall", "-Wextra"])
        if sys.platform.startswith("linux"):
            # Static on Linux: no dynamic loader at start (faster), and no glibc symbol version to raise the
            # wheel's manylinux tag (a dynamic executable built on glibc >= 2.34 needs __libc_start_main@2.34).
            try:
                compiler.link_executable(objects, HOOK_CLIENT_NAME, output_dir=target, extra_postargs=["-static", "-s"])
                return
            except Exception as error:
                print(f"lidguard: the hook client links dynamically ({error})")
        compiler.link_executable(objects, HOOK_CLIENT_NAME, output_dir=target)


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
