"""One reader for the LIDGUARD_* switches; the build (setup.py) and the runtime modules agree (issue 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard import switches

ROOT = Path(__file__).resolve().parents[2]
ON = ["1", "true", "TRUE", "yes", "on", " On "]
OFF = ["0", "false", "False", "no", "off", "", "  "]
BAD = ["2", "banana", "enabled", "y"]


@pytest.mark.parametrize("value", ON)
def test_on_words(value):
    assert switches.parse_switch("LIDGUARD_NO_EXTENSIONS", value) is True


@pytest.mark.parametrize("value", [*OFF, None])
def test_off_words_and_unset(value):
    assert switches.parse_switch("LIDGUARD_NO_EXTENSIONS", value) is False


@pytest.mark.parametrize("value", BAD)
def test_anything_else_is_a_clear_error(value):
    with pytest.raises(switches.SwitchError) as raised:
        switches.no_extensions({"LIDGUARD_NO_EXTENSIONS": value})
    message = str(raised.value)
    assert "LIDGUARD_NO_EXTENSIONS" in message and repr(value) in message and "\n" not in message
    assert isinstance(raised.value, ValueError)


def test_logind_binding_is_on_unless_switched_off():
    assert switches.logind_binding_enabled({}) is True
    assert switches.logind_binding_enabled({"LIDGUARD_LOGIND_BINDING": "off"}) is False
    assert switches.logind_binding_enabled({"LIDGUARD_LOGIND_BINDING": "yes"}) is True


def _build_view(value: str | None) -> dict[str, object]:
    """What setup.py decides for LIDGUARD_NO_EXTENSIONS=value, without building anything."""
    probe = (
        "import json, runpy, setuptools, sys\n"
        "import Cython.Build\n"
        "Cython.Build.cythonize = lambda extensions, **options: list(extensions)\n"
        "def fake_setup(**kwargs):\n"
        "    print(json.dumps({'ext': [e.name for e in kwargs['ext_modules']], 'cffi': 'cffi_modules' in kwargs}))\n"
        "setuptools.setup = fake_setup\n"
        "sys.argv = ['setup.py', '--name']\n"
        "runpy.run_path('setup.py', run_name='__main__')\n"
    )
    env = {key: val for key, val in os.environ.items() if not key.startswith("LIDGUARD_")}
    if value is not None:
        env["LIDGUARD_NO_EXTENSIONS"] = value
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else result.returncode}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _runtime_view(value: str | None) -> dict[str, object]:
    """What lidguard._native decides for the same value, in a fresh process."""
    probe = (
        "import json\n"
        "from lidguard import switches\n"
        "from lidguard._native import load_native_module\n"
        "from lidguard.platform.ancestry.linux import NATIVE_ABI_VERSION\n"
        "try:\n"
        "    module = load_native_module('_proctree', NATIVE_ABI_VERSION)\n"
        "except switches.SwitchError as error:\n"
        "    print(json.dumps({'error': str(error)}))\n"
        "else:\n"
        "    print(json.dumps({'active': module is not None}))\n"
    )
    env = {key: val for key, val in os.environ.items() if not key.startswith("LIDGUARD_")}
    if value is not None:
        env["LIDGUARD_NO_EXTENSIONS"] = value
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60,
                            check=True)
    return json.loads(result.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the compiled modules are Linux-only today")
@pytest.mark.parametrize("value", [None, "1", "false", "off", "no", "on", "yes", "banana"])
def test_setup_py_and_the_runtime_modules_agree(value):
    pytest.importorskip("Cython")
    build, runtime = _build_view(value), _runtime_view(value)
    if value == "banana":
        assert "LIDGUARD_NO_EXTENSIONS" in str(build["error"]) and "banana" in str(build["error"])
        assert "LIDGUARD_NO_EXTENSIONS" in str(runtime["error"])
        return
    built = bool(build["ext"])
    assert built == build["cffi"], build
    assert "error" not in build and "error" not in runtime, (build, runtime)
    assert built is not switches.parse_switch("LIDGUARD_NO_EXTENSIONS", value)
    if built and not list((ROOT / "src" / "lidguard" / "_native").glob("_proctree*.so")):
        pytest.skip("compiled module not built in place")
    assert runtime["active"] is built, (value, build, runtime)


def test_a_required_missing_module_names_it_and_says_why(monkeypatch):
    from lidguard import _native

    monkeypatch.delenv("LIDGUARD_NO_EXTENSIONS", raising=False)
    monkeypatch.setenv("LIDGUARD_REQUIRE_EXTENSIONS", "yes")
    with pytest.raises(_native.RequiredExtensionError) as raised:
        _native.load_native_module("_no_such_module", 1)
    message = str(raised.value)
    assert "lidguard._native._no_such_module" in message and "not built or not importable" in message
    assert "LIDGUARD_REQUIRE_EXTENSIONS" in message and "\n" not in message
    assert isinstance(raised.value, ImportError)
    assert _native.RequiredExtensionError is switches.RequiredExtensionError, "catchable without _native"


def test_a_required_stale_module_names_it_and_says_why(monkeypatch):
    from lidguard import _native

    if not list((ROOT / "src" / "lidguard" / "_native").glob("_proctree*.so")):
        pytest.skip("compiled module not built in place")
    monkeypatch.delenv("LIDGUARD_NO_EXTENSIONS", raising=False)
    monkeypatch.setenv("LIDGUARD_REQUIRE_EXTENSIONS", "1")
    from lidguard.platform.ancestry import linux as procfs

    stale = rf"lidguard\._native\._proctree .*stale build \(ABI {procfs.NATIVE_ABI_VERSION}, expected 99\)"
    with pytest.raises(_native.RequiredExtensionError, match=stale):
        _native.load_native_module("_proctree", 99)


def test_the_switch_reader_is_standard_library_only():
    source = (ROOT / "src" / "lidguard" / "switches.py").read_text()
    imports = [line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert set(imports) <= {"__future__", "os", "collections.abc"}, imports


def test_path_switches_are_trimmed_and_empty_means_unset():
    environ = {"LIDGUARD_SYSFS_ROOT": " /tmp/sys ", "LIDGUARD_FAKE_STATE": "", "LIDGUARD_PLATFORM": " Fake ",
               "LIDGUARD_TEST_MODE": "1"}  # the path switches are honoured in test mode only
    assert switches.sysfs_root(environ) == "/tmp/sys"
    assert switches.fake_state_file(environ) is None and switches.fake_actions_file(environ) is None
    assert switches.polkit_rule_path({}) is None
    assert switches.platform_name(environ) == "fake"
    assert switches.in_test_mode({"LIDGUARD_TEST_MODE": "1"}) and not switches.in_test_mode({})
    assert switches.allow_systemctl_in_tests({"LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS": "yes"})
