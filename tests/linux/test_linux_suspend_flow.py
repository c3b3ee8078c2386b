"""The suspend flow and Emergency Hibernation on the Linux backend against dbusmock's logind, with a
real local HTTP receiver (a thread serving 127.0.0.1): in-process runtime on the real clock, and end
to end through real `lidguard` processes.

Nothing here can reach the machine's real logind or suspend it: every D-Bus call goes to the private
bus of ``system_bus``; lid, displays and thermal zones come from a temporary tree (LIDGUARD_SYSFS_ROOT).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from lidguard.ipc.client import send_request
from lidguard.platform import load_platform
from lidguard.platform.linux.power import INHIBITOR_WHO
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.runtime.components import emergency
from lidguard.settings.model import Settings, headless_defaults

pytestmark = pytest.mark.dbus

ACCESS_DENIED = ("raise dbus.exceptions.DBusException('Permission denied', "
                 "name='org.freedesktop.DBus.Error.AccessDenied')")


class Receiver:
    """A local HTTP server recording every POST (monotonic arrival time, path, JSON body)."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                receiver.posts.append({"at": time.monotonic(), "path": self.path, "body": body,
                                       "contentType": self.headers.get("Content-Type")})
                if delay:
                    time.sleep(delay)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def build_machine(root: Path, *, lid: str, connectors: dict[str, str], millicelsius: list[int] = ()) -> None:
    state = root / "proc" / "acpi" / "button" / "lid" / "LID0" / "state"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(f"state:      {lid}\n")
    drm = root / "sys" / "class" / "drm"
    drm.mkdir(parents=True, exist_ok=True)
    for name, status in connectors.items():
        (drm / name).mkdir(exist_ok=True)
        (drm / name / "status").write_text(f"{status}\n")
    for index, value in enumerate(millicelsius):
        zone = root / "sys" / "class" / "thermal" / f"thermal_zone{index}"
        zone.mkdir(parents=True, exist_ok=True)
        (zone / "type").write_text("x86_pkg_temp\n")
        (zone / "temp").write_text(f"{value}\n")


def record_inhibitors_on(mock: Any, method: str, signature: str, path: Path) -> None:
    """``method`` appends LidGuard's inhibitors held at the moment of the call to ``path``."""
    # The logind template keeps its inhibitors on the dbusmock.mockobject module.
    mock.add_method(method, signature, "", (
        "from dbusmock import mockobject as held; "
        f"open({str(path)!r}, 'a').write(repr([i[0] for i in getattr(held, 'inhibitors', []) "
        f"if i[1] == {INHIBITOR_WHO!r}]) + '\\n')"))


def ours(entries: list[tuple]) -> list[tuple]:
    return [entry for entry in entries if entry[1] == INHIBITOR_WHO]


def _settings(**changes: Any) -> Settings:
    return Settings.from_raw({**headless_defaults().to_file_json(), **changes})


async def _wait_for(predicate: Any, seconds: float = 30.0) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.05)


@pytest.fixture
def linux_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = tmp_path / "machine"
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(root))
    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")
    return root


def test_main_scenario_in_process_one_suspend_after_pre_suspend_with_keep_awake_released_first(
        binding_active, logind_mock, linux_machine, receiver, tmp_path):
    build_machine(linux_machine, lid="closed", connectors={"card0-eDP-1": "connected"})
    at_suspend = tmp_path / "inhibitors-at-suspend"
    record_inhibitors_on(logind_mock, "Suspend", "b", at_suspend)
    runtime = Runtime(platform=load_platform("linux"), paths=resolve_paths(),
                      settings=_settings(PostStopSuspendDelaySeconds=1, PreSuspendWebhookUrl=receiver.url))
    stopped_at: list[float] = []

    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Claude",
                                                    "SessionIdentifier": "s1", "WorkingDirectory": "/w"})
            assert started["Succeeded"], started["Message"]
            assert len(ours(logind_mock.list_inhibitors())) == 3  # sleep, idle, handle-lid-switch
            stopped_at.append(time.monotonic())
            reply = await runtime.handle_message({
                "Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1", "IsProviderSessionEnd": True,
                "SessionEndReason": "Stop", "LastAssistantMessage": "All done."})
            assert reply["PendingSuspend"]["Stage"] == "delay"
            await _wait_for(lambda: runtime.suspend_history.newest_first())
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(main, backend="trio")
    [post] = receiver.posts
    assert post["at"] - stopped_at[0] >= 1.0  # after the delay
    assert post["body"]["eventType"] == "PreSuspend" and post["body"]["sessionIdentifier"] == "s1"
    assert post["body"]["lastAssistantMessage"] == "All done." and post["body"]["workingDirectory"] == "/w"
    assert [args for _, args in logind_mock.get_method_calls("Suspend")] == [[False]]
    # Keep-awake was released before the request; the lid inhibitor only after it (on a real logind with
    # HandleLidSwitch=suspend its release with the lid closed is a suspend of its own: tests/reallogind).
    [held_at_suspend] = at_suspend.read_text().splitlines()
    assert "handle-lid-switch" in held_at_suspend and "sleep" not in held_at_suspend
    [entry] = runtime.suspend_history.newest_first()
    assert entry["Succeeded"] is True and entry["SuspendMode"] == "Sleep" and entry["Reason"] == "Completed"
    assert not ours(logind_mock.list_inhibitors())


def test_emergency_hibernate_access_denied_falls_back_to_sleep_and_records_both(
        binding_active, logind_mock, linux_machine, monkeypatch, tmp_path):
    monkeypatch.setattr(emergency, "POLL_SECONDS", 0.3)  # the 10 s period, shortened for the real clock
    build_machine(linux_machine, lid="closed", connectors={"card0-eDP-1": "connected"},
                  millicelsius=[94000, 96000])
    logind_mock.add_method("Hibernate", "b", "", ACCESS_DENIED)
    at_sleep = tmp_path / "inhibitors-at-sleep"
    record_inhibitors_on(logind_mock, "Suspend", "b", at_sleep)
    runtime = Runtime(platform=load_platform("linux"), paths=resolve_paths(), settings=_settings())

    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Codex",
                                                    "SessionIdentifier": "hot"})
            assert started["Succeeded"], started["Message"]
            await _wait_for(lambda: len(runtime.suspend_history.newest_first()) >= 2)
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(main, backend="trio")
    sleep, hibernate = runtime.suspend_history.newest_first()[:2]
    assert hibernate["SuspendMode"] == "Hibernate" and hibernate["Succeeded"] is False
    assert "AccessDenied" in hibernate["Message"] and hibernate["ObservedTemperatureCelsius"] == 95
    assert sleep["SuspendMode"] == "Sleep" and sleep["Succeeded"] is True
    assert sleep["Reason"] == hibernate["Reason"] == "EmergencyHibernation"
    assert len(logind_mock.get_method_calls("Hibernate")) >= 1
    assert len(logind_mock.get_method_calls("Suspend")) >= 1
    # The session still runs, yet lidguard's keep-awake inhibitors are released right before the emergency
    # request, as for the post-stop suspend (a strict logind refuses while any sleep block is held); the
    # lid inhibitor goes only after the request.
    first = at_sleep.read_text().splitlines()[0]
    assert "handle-lid-switch" in first and "sleep'" not in first and "idle" not in first


def test_end_to_end_pre_suspend_after_the_delay_then_exactly_one_suspend(
        binding_active, logind_mock, lidguard, tmp_path, receiver):
    root = tmp_path / "machine"
    build_machine(root, lid="closed", connectors={"card0-eDP-1": "connected", "card0-HDMI-A-1": "disconnected"})
    lidguard.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(root),
                         "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"]})
    lidguard.env.pop("LIDGUARD_LOGIND_BINDING", None)
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "2", "--pre-suspend-webhook-url", receiver.url,
                 check=True)
    lidguard.run("start", "--provider", "claude", "--session", "e2e", check=True)
    assert lidguard.wait_until(lambda: len(ours(logind_mock.list_inhibitors())) == 3)
    stopped_at = time.monotonic()
    # What a Claude `Stop` hook sends (issue 7 builds the hook command itself): a provider-reported end
    # with the payload's last_assistant_message.
    reply = send_request(lidguard.socket, {
        "Command": "stop", "ClientPlatform": "linux", "Provider": "Claude", "SessionIdentifier": "e2e",
        "IsProviderSessionEnd": True,
        "SessionEndReason": "Stop", "StopHookActive": False, "LastAssistantMessage": "Refactoring finished.",
        "InputPromptPreview": "refactor the parser"})
    assert reply["Succeeded"], reply
    assert reply["PendingSuspend"]["Stage"] == "delay"
    assert lidguard.wait_until(lambda: lidguard.json("suspend-history")["entries"], timeout=30)
    [post] = receiver.posts
    assert post["at"] - stopped_at >= 2.0
    assert post["contentType"] == "application/json; charset=utf-8"
    body = post["body"]
    assert body["eventType"] == "PreSuspend" and body["reason"] == "Completed"
    assert body["provider"] == "Claude" and body["sessionIdentifier"] == "e2e"
    assert body["lastAssistantMessage"] == "Refactoring finished."
    assert body["inputPromptPreview"] == "refactor the parser"
    assert [args for _, args in logind_mock.get_method_calls("Suspend")] == [[False]]
    [entry] = lidguard.json("suspend-history")["entries"]
    assert entry["Succeeded"] is True and entry["SessionIdentifier"] == "e2e"
    assert not ours(logind_mock.list_inhibitors())
    log = (lidguard.data_dir / "session-execution.log").read_text()
    assert "stop-suspend-scheduled" in log and "stop-suspend-requested" in log
