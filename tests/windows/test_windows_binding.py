"""The cdef parses on Linux, declares every function the binding calls, and the package is import-safe."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import cffi
import pytest
from fake_winapi import FakeWindowsApi

from lidguard.platform.windows import _binding
from lidguard.platform.windows.winapi import WindowsApi

ROOT = Path(__file__).resolve().parents[2]
CDEF = ROOT / "native" / "windows_cdef.h"


def parsed_ffi() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(CDEF.read_text(encoding="utf-8"))
    return ffi


def test_cdef_parses_and_declares_every_function_the_binding_calls():
    ffi = parsed_ffi()
    source = inspect.getsource(_binding)
    called = set(re.findall(r"self\._(?:kernel32|powrprof|advapi32|user32|ntdll|ole32)\.(\w+)", source))
    called |= set(re.findall(r'"(Power(?:Read|Write)(?:AC|DC)ValueIndex)"', source))
    assert len(called) > 30
    declared = {name for name in called if _declared(ffi, name)}
    assert called == declared


def _declared(ffi: cffi.FFI, name: str) -> bool:
    return f"function {name}" in ffi._parser._declarations  # cffi keeps each cdef'd function there


@pytest.mark.skipif(cffi.FFI().sizeof("void *") != 8, reason="layouts are checked for 64-bit Windows")
def test_struct_layouts_match_64_bit_windows():
    ffi = parsed_ffi()
    # sizeof() on x64 Windows, from the SDK headers.
    expected = {"REASON_CONTEXT": 32, "PROCESSENTRY32W": 568, "DISPLAYCONFIG_PATH_INFO": 72,
                "DISPLAYCONFIG_MODE_INFO": 64, "SYSTEM_POWER_CAPABILITIES": 76, "PROCESS_BASIC_INFORMATION": 48,
                "UNICODE_STRING": 16, "SYSTEM_POWER_STATUS": 12, "TOKEN_PRIVILEGES": 16, "GUID": 16,
                "FILETIME": 8, "LASTINPUTINFO": 8}
    assert {name: ffi.sizeof(name) for name in expected} == expected
    assert ffi.offsetof("SYSTEM_POWER_CAPABILITIES", "AoAc") == 20
    assert ffi.offsetof("DISPLAYCONFIG_PATH_INFO", "targetInfo") == 20
    assert ffi.offsetof("DISPLAYCONFIG_PATH_TARGET_INFO", "outputTechnology") == 16


def test_generated_module_carries_the_abi_the_binding_expects(tmp_path):
    sys.path.insert(0, str(ROOT / "native"))
    try:
        windows_build = importlib.import_module("windows_build")
    finally:
        sys.path.pop(0)
    windows_build.ffibuilder.compile(tmpdir=str(tmp_path))
    generated = tmp_path / "lidguard" / "_native" / "_windows.py"
    namespace: dict[str, object] = {}
    exec(compile(generated.read_text(encoding="utf-8"), str(generated), "exec"), namespace)
    assert namespace["ffi"].integer_const("LIDGUARD_WINDOWS_ABI_VERSION") == _binding.EXPECTED_ABI_VERSION


def test_binding_is_unavailable_off_windows_and_under_test(monkeypatch):
    _binding._load_module.cache_clear()
    try:
        api, reason = _binding.load_windows_api()
        assert api is None and "only on Windows" in reason
        _binding._load_module.cache_clear()
        monkeypatch.setattr(sys, "platform", "win32")
        api, reason = _binding.load_windows_api()
        assert api is None and "refused under test" in reason
    finally:
        monkeypatch.undo()
        _binding._load_module.cache_clear()


def test_importing_the_windows_package_imports_no_windows_only_module():
    probe = (
        "import sys\n"
        "import lidguard.platform.windows.backend, lidguard.ipc.transport_windows\n"
        "import lidguard.platform.ancestry.windows\n"
        "from lidguard.platform import load_platform\n"
        "platform = load_platform('windows')\n"
        "platform.describe_capabilities()\n"
        "bad = {'winsound', 'winreg', '_winapi', 'msvcrt', '_overlapped', 'lidguard._native._windows'}\n"
        "print(sorted(name for name in sys.modules if name in bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_fake_implements_every_protocol_method():
    wanted = {name for name, value in vars(WindowsApi).items() if callable(value) and not name.startswith("_")}
    missing = {name for name in wanted if not callable(getattr(FakeWindowsApi, name, None))}
    assert len(wanted) > 30 and not missing
    cdef_methods = {name for name, value in vars(_binding.CffiWindowsApi).items()
                    if callable(value) and not name.startswith("_")}
    assert wanted <= cdef_methods
