"""A private "system bus" (dbus-daemon) with python-dbusmock's logind template, for tests and benchmarks.

Recipe: shared/spec/LINUX_TESTING.md. The mock runs under Debian's ``/usr/bin/python3`` (it needs
PyGObject and dbus-python); the helpers here talk to it through ``/usr/bin/python3`` too, never through
the code under test, and the code under test never needs dbus-python.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def poll_pause(last_poll_seconds: float, minimum: float) -> float:
    """As the root conftest's ``poll_pause``: ``minimum``, or twice what the last poll took (each question
    here starts a /usr/bin/python3, so a waiting poll keeps at most a third of a core busy)."""
    return max(minimum, 2.0 * last_poll_seconds)


MOCK_PYTHON = os.environ.get("LIDGUARD_DBUSMOCK_PYTHON", "/usr/bin/python3")
LOGIND_NAME = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MANAGER_INTERFACE = "org.freedesktop.login1.Manager"
MOCK_INTERFACE = "org.freedesktop.DBus.Mock"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow send_type="method_call"/>
  </policy>
</busconfig>
"""

# One short-lived /usr/bin/python3 per question: reads a JSON request on argv, prints a JSON answer.
_BUS_CLIENT = r"""
import json, sys
import dbus
request = json.loads(sys.argv[1])
bus = dbus.SystemBus()
def plain(value):
    if isinstance(value, (list, tuple, dbus.Array, dbus.Struct)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (int, dbus.Byte)):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
try:
    proxy = bus.get_object(request["name"], request["path"])
    method = proxy.get_dbus_method(request["member"], request["interface"])
    result = method(*request.get("args", []), signature=request.get("signature"))
    print(json.dumps({"ok": plain(result)}))
except dbus.exceptions.DBusException as error:
    print(json.dumps({"error": error.get_dbus_name(), "message": error.get_dbus_message()}))
"""


def dbus_required() -> bool:
    """``LIDGUARD_REQUIRE_DBUS=1`` (ci/test.sh under CI=true): missing tools fail instead of skipping."""
    return os.environ.get("LIDGUARD_REQUIRE_DBUS", "").strip().lower() in ("1", "true", "yes", "on")


def skip_unless_available(reason: str | None) -> None:
    """Skips the calling test (fails it when D-Bus tests are required) when ``reason`` is not None."""
    if reason is None:
        return
    import pytest

    if dbus_required():
        pytest.fail(f"LIDGUARD_REQUIRE_DBUS is set but the D-Bus tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


def missing_tools_reason() -> str | None:
    """Why the private-bus tests cannot run here, or None. Never decided by OS name."""
    if shutil.which("dbus-daemon") is None:
        return "dbus-daemon is not installed"
    probe = (
        subprocess.run(
            [MOCK_PYTHON, "-c", "import dbusmock, dbus, gi"], capture_output=True, text=True, check=False
        )
        if Path(MOCK_PYTHON).exists()
        else None
    )
    if probe is None or probe.returncode != 0:
        return f"python-dbusmock is not importable by {MOCK_PYTHON} (apt-get install python3-dbusmock)"
    return None


class PrivateSystemBus:
    """``dbus-daemon --nofork`` with a system-type allow-all config in a short temp dir."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lgbus-"))
        config = self.directory / "bus.conf"
        config.write_text(BUS_CONFIG.format(socket=self.directory / "system_bus_socket"), encoding="utf-8")
        self.process = subprocess.Popen(
            ["dbus-daemon", "--nofork", f"--config-file={config}", "--print-address=1"],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        # The first line is the address, printed once the daemon listens.
        self.address = self.process.stdout.readline().strip()
        if not self.address:
            self.stop()
            raise RuntimeError("dbus-daemon printed no address")

    def environment(self) -> dict[str, str]:
        return {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        shutil.rmtree(self.directory, ignore_errors=True)


@contextmanager
def private_system_bus(missing_reason: str | None) -> Iterator[PrivateSystemBus]:
    """A private system bus for one test (skipped, or failed under LIDGUARD_REQUIRE_DBUS, when the tools
    are missing: ``missing_reason`` is ``missing_tools_reason()``, possibly cached by the caller)."""
    skip_unless_available(missing_reason)
    bus = PrivateSystemBus()
    try:
        yield bus
    finally:
        bus.stop()


BLOCKED_BY_INHIBITOR = "org.freedesktop.login1.BlockedByInhibitorLock"
SLEEP_METHODS = ("Suspend", "Hibernate", "HybridSleep", "SuspendThenHibernate")

# A strict logind: any block inhibitor whose "what" includes sleep - the caller's own included - refuses
# every sleep request; an accepted one is appended to a JSON-lines file with the monotonic time (one
# clock for every process here) and the inhibitors held at that moment. Runs inside the mock, where
# the logind template keeps its inhibitors on dbusmock.mockobject (this code's globals).
_STRICT_SLEEP_CODE = """
import json
_held = [[str(part) for part in entry[:4]] for entry in globals().get('inhibitors', [])]
_blocking = [entry for entry in _held if entry[3] == 'block' and 'sleep' in entry[0].split(':')]
if _blocking:
    raise dbus.exceptions.DBusException(
        'Operation denied due to active block inhibitor from ' + ', '.join(entry[1] for entry in _blocking),
        name={error!r})
with open({path!r}, 'a') as _accepted:
    _accepted.write(json.dumps({{'method': {method!r}, 'args': [bool(arg) for arg in args],
                                 'at': time.monotonic(), 'held': _held}}) + '\\n')
"""


# Inhibit as the logind template has it (the same inhibitors list, uid 1000, pid 123456), plus what a
# real logind does on every block inhibitor's start and stop: BlockInhibited changes and is announced
# with PropertiesChanged (Mock.UpdateProperties emits it).
_FOLLOWING_INHIBIT_CODE = """
import os
from gi.repository import GLib
_store = globals()
_store.setdefault('inhibitors', [])
_read, _write = os.pipe()
_entry = (args[0], args[1], args[2], args[3], dbus.UInt32(1000), dbus.UInt32(123456))
_store['inhibitors'].append(_entry)
def _announce(_self=self, _store=_store):
    _kinds = []
    for _held in _store['inhibitors']:
        if _held[3] == 'block':
            _kinds += [_kind for _kind in _held[0].split(':') if _kind not in _kinds]
    _self.UpdateProperties('org.freedesktop.login1.Manager', {'BlockInhibited': dbus.String(':'.join(_kinds))})
def _dropped(fd, condition, _entry=_entry, _store=_store, _announce=_announce):
    os.close(fd)
    _store['inhibitors'].remove(_entry)
    _announce()
    return False
GLib.unix_fd_add_full(GLib.PRIORITY_HIGH, _read, GLib.IO_HUP, _dropped)
GLib.idle_add(os.close, _write)
_announce()
ret = _write
"""


class LogindMock:
    """A fresh ``python3 -m dbusmock --system --template logind`` process on ``bus``.

    ``strict`` (the default) models the logind the product has to survive: Suspend, Hibernate,
    HybridSleep and SuspendThenHibernate fail with BlockedByInhibitorLock while any block inhibitor on
    sleep is held, the caller's own included; ``accepted_calls()`` lists the requests it accepted.
    """

    def __init__(self, bus: PrivateSystemBus, parameters: dict[str, Any] | None = None, *,
                 strict: bool = True) -> None:
        self.bus = bus
        self.accepted_file = Path(tempfile.mkstemp(prefix="accepted-", suffix=".jsonl", dir=bus.directory)[1])
        command = [MOCK_PYTHON, "-m", "dbusmock", "--system", "--template", "logind"]
        if parameters:
            command += ["-p", json.dumps(parameters)]
        self.process = subprocess.Popen(
            command,
            env=bus.environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_for_owner(timeout=15.0)
        if strict:
            for method in SLEEP_METHODS:
                self.add_method(method, "b", "", _STRICT_SLEEP_CODE.format(
                    error=BLOCKED_BY_INHIBITOR, path=str(self.accepted_file), method=method))

    def follow_block_inhibited(self) -> None:
        """Adds logind's ``BlockInhibited`` property, kept up to date with PropertiesChanged on every
        inhibitor's start and stop, as a real logind does (issue 34.3's listener)."""
        self.add_property("BlockInhibited", "")
        self.add_method("Inhibit", "ssss", "h", _FOLLOWING_INHIBIT_CODE)

    def accepted_calls(self, method: str | None = None) -> list[dict[str, Any]]:
        """The sleep requests the strict mock accepted: {"method", "args", "at" (monotonic), "held"}."""
        lines = self.accepted_file.read_text(encoding="utf-8").splitlines()
        calls = [json.loads(line) for line in lines if line.strip()]
        return [call for call in calls if method is None or call["method"] == method]

    def _wait_for_owner(self, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"dbusmock logind exited early: {stderr}")
            began = time.monotonic()
            if self.has_owner():
                return
            time.sleep(poll_pause(time.monotonic() - began, 0.02))
        raise RuntimeError("dbusmock logind did not own org.freedesktop.login1 in time")

    def has_owner(self) -> bool:
        # busctl would be faster, but dbus-python is guaranteed wherever dbusmock is.
        return bool(
            self.call(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "NameHasOwner",
                [LOGIND_NAME],
                "s",
            )
        )

    def call(
        self,
        name: str,
        path: str,
        interface: str,
        member: str,
        args: list[Any] | None = None,
        signature: str | None = None,
    ) -> Any:
        request = {
            "name": name,
            "path": path,
            "interface": interface,
            "member": member,
            "args": args or [],
            "signature": signature,
        }
        completed = subprocess.run(
            [MOCK_PYTHON, "-c", _BUS_CLIENT, json.dumps(request)],
            env=self.bus.environment(),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"bus client failed: {completed.stderr}")
        answer = json.loads(completed.stdout)
        if "error" in answer:
            raise RuntimeError(f"{answer['error']}: {answer['message']}")
        return answer["ok"]

    def _mock(self, member: str, args: list[Any], signature: str) -> Any:
        return self.call(LOGIND_NAME, LOGIND_PATH, MOCK_INTERFACE, member, args, signature)

    # -- helpers the tests use ----------------------------------------------------------------------

    def get_method_calls(self, name: str) -> list[tuple[int, list[Any]]]:
        """(timestamp, args) for every call of ``name`` so far (Mock.GetMethodCalls)."""
        return [(int(stamp), list(args)) for stamp, args in self._mock("GetMethodCalls", [name], "s")]

    def add_method(
        self, name: str, in_signature: str, out_signature: str, code: str, interface: str = MANAGER_INTERFACE
    ) -> None:
        self._mock("AddMethod", [interface, name, in_signature, out_signature, code], "sssss")

    def add_property(self, name: str, value: Any, interface: str = MANAGER_INTERFACE) -> None:
        self._mock("AddProperty", [interface, name, value], "ssv")

    def list_inhibitors(self) -> list[tuple[str, str, str, str, int, int]]:
        entries = self.call(LOGIND_NAME, LOGIND_PATH, MANAGER_INTERFACE, "ListInhibitors")
        return [tuple(entry) for entry in entries]  # type: ignore[misc]

    def wait_for_inhibitors(self, predicate: Any, *, timeout: float = 30.0) -> list[tuple[Any, ...]]:
        """Polls ListInhibitors until ``predicate(list)`` holds; returns the last list (assert on it)."""
        deadline = time.monotonic() + timeout
        began = time.monotonic()
        entries = self.list_inhibitors()
        while not predicate(entries) and time.monotonic() < deadline:
            time.sleep(poll_pause(time.monotonic() - began, 0.02))  # each question is a /usr/bin/python3
            began = time.monotonic()
            entries = self.list_inhibitors()
        return entries

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.process.stderr is not None:
            self.process.stderr.close()
