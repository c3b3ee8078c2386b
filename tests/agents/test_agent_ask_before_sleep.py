"""Ask-before-sleep, the whole loop (issue 9 acceptance): a real agent CLI (Claude Code, Codex, Gemini CLI
through AfterAgent, Qwen Code and Factory Droid through Stop) against the fake model, lidguard's installed
hooks, the runtime on the Linux backend (dbusmock's logind on a private system bus, a temporary sysfs tree
with the lid closed and no external display), the real ``lidguard-notify`` server, and a local push service
standing in for the phone.

1. The agent ends its turn; its Stop hook waits.  After the post-stop delay the runtime posts
   StopFollowUp to lidguard-notify, which pushes the follow-up page URL to the "phone".
2. The test replies through the server's JSON API (Bearer token), as the follow-up page would.
3. The runtime's poll sees ``Replied``; the waiting Stop hook prints ``{"decision": "block", ...}`` and the
   agent sends exactly one more model request carrying the reply.
4. The agent stops again (``stop_hook_active``): a second follow-up is pushed; nobody answers.
5. The reply window expires: logind receives exactly one ``Suspend`` and lidguard holds no inhibitor.

Timers come from settings only (post-stop delay 10 s, reply window 20 s: the smallest the feature
accepts). Nothing here can reach the machine's real logind: every D-Bus call goes to the private bus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent.parent
for folder in ("linux", "notify"):  # --import-mode=importlib: the shared harnesses by path
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from agents_harness import AgentRun  # noqa: E402

pytestmark = [pytest.mark.dbus, pytest.mark.slow, pytest.mark.timeout(420)]

NOTIFY_PACKAGES = ("starlette", "uvicorn", "jinja2", "pywebpush", "py_vapid", "http_ece", "httpx")  # tests/notify
REPLY = "also add a changelog entry for the parser"
POST_STOP_DELAY_SECONDS = 10
REPLY_WINDOW_SECONDS = 20


def _require_notify_extra() -> None:
    import importlib.util

    missing = [name for name in NOTIFY_PACKAGES if importlib.util.find_spec(name) is None]
    if missing and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip(f"the notify extra is not installed (missing {', '.join(missing)})")


@pytest.fixture
def system_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from dbus_harness import missing_tools_reason, private_system_bus

    with private_system_bus(missing_tools_reason()) as bus:
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address)
        yield bus


@pytest.fixture
def logind(system_bus: Any) -> Iterator[Any]:
    from dbus_harness import LogindMock

    mock = LogindMock(system_bus, None)
    try:
        yield mock
    finally:
        mock.stop()


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``lidguard-notify init --json`` then ``serve`` as a real process; a push receiver subscribed."""
    _require_notify_extra()
    import httpx
    from notify_harness import PushReceiver, ServerProcess, free_port

    port = free_port()
    config = tmp_path / "notify" / "notify.json"
    init = subprocess.run([sys.executable, "-m", "lidguard.notify", "init", "--config", str(config),
                           "--public-base-url", f"http://127.0.0.1:{port}", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert init.returncode == 0, init.stderr
    created = json.loads(init.stdout)
    server = ServerProcess(config, port).start()
    try:
        with PushReceiver().running() as phone:
            headers = {"Authorization": f"Bearer {created['accessToken']}"}
            subscribed = httpx.post(f"{server.base}/api/push/subscriptions", json=phone.subscription(),
                                    headers=headers, timeout=10)
            assert subscribed.status_code == 204, subscribed.text
            yield {"base": server.base, "webhook": created["webhookUrl"], "headers": headers, "phone": phone,
                   "server": server}
    finally:
        server.stop()


def _pushed_follow_ups(phone: Any) -> list[dict[str, Any]]:
    """The follow-up notifications the phone received, decrypted, in arrival order."""
    pushes = [phone.decrypt(item) for item in list(phone.received)]
    return [push for push in pushes if "/follow-ups/" in push.get("url", "")]


def _linux_machine(lidguard: Any, root: Path) -> None:
    from test_linux_suspend_flow import build_machine

    build_machine(root, lid="closed", connectors={"card0-eDP-1": "connected", "card0-HDMI-A-1": "disconnected"})
    lidguard.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(root),
                         "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"]})
    lidguard.env.pop("LIDGUARD_LOGIND_BINDING", None)


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "qwen", "droid"])
def test_reply_from_the_phone_continues_the_agent_then_silence_suspends_once(
        agent: Any, lidguard: Any, logind: Any, notify: dict[str, Any], tmp_path: Path, name: str) -> None:
    import httpx
    from test_linux_suspend_flow import ours

    _linux_machine(lidguard, tmp_path / "machine")
    run: AgentRun = agent(name)
    run.lidguard_run("settings", "--post-stop-suspend-delay-seconds", str(POST_STOP_DELAY_SECONDS),
                     "--closed-lid-stop-follow-up-webhook-url", notify["webhook"],
                     "--closed-lid-stop-follow-up-delay-seconds", str(REPLY_WINDOW_SECONDS))
    run.hook_install()  # after the settings: the Stop hook's timeout covers delay + window + extensions
    # The agent runs the native hook client (issue 36; its blocking Stop held by the runtime) where it is built.
    from lidguard.installers.common import hook_client

    if hook_client().usable:
        assert "Hook runner: native client" in run.lidguard_run("hook-status", "--provider", name).stdout
    run.start_runtime()
    phone = notify["phone"]

    outcome: dict[str, Any] = {}

    def agent_turn() -> None:
        try:
            outcome["result"] = run.run_headless(timeout=300)
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            outcome["error"] = error

    turn = threading.Thread(target=agent_turn, daemon=True)
    turn.start()

    # 1. The agent stops: after the post-stop delay the follow-up reaches the phone; nothing suspends.
    stopped = run.wait_until(lambda: run.model.model_requests() and _pushed_follow_ups(phone), timeout=120)
    assert stopped, f"no follow-up reached the phone\n{run.describe()}"
    [first] = _pushed_follow_ups(phone)
    first_id = first["url"].rsplit("/", 1)[1]
    assert first["url"] == f"{notify['base']}/follow-ups/{first_id}"
    requests_before_reply = len(run.model.model_requests())
    assert logind.get_method_calls("Suspend") == []
    assert len(ours(logind.list_inhibitors())) >= 1, "protection is held while the phone is asked"
    api = f"{notify['base']}/api/follow-ups/{first_id}"
    state = httpx.get(api, headers=notify["headers"], timeout=10).json()
    assert state["status"] == "Pending", state
    assert turn.is_alive(), "the agent waits in its Stop hook for the reply"

    # 2. The reply, through the API the follow-up page uses.
    answered = httpx.post(f"{api}/reply", json={"text": REPLY}, headers=notify["headers"], timeout=10)
    assert answered.status_code == 200, answered.text

    # 3. The agent continues with one more model request that carries the reply.
    assert run.wait_until(lambda: any(REPLY in r.text() for r in run.model.model_requests()), timeout=60), \
        f"the reply never reached the model\n{run.describe()}"

    # 4. It stops again: a second follow-up, left unanswered.
    assert run.wait_until(lambda: len(_pushed_follow_ups(phone)) == 2, timeout=120), \
        f"no second follow-up\n{run.describe()}"
    second_pushed_at = time.monotonic()
    second_id = _pushed_follow_ups(phone)[1]["url"].rsplit("/", 1)[1]
    assert second_id != first_id
    assert logind.get_method_calls("Suspend") == [], "no suspend while the second follow-up is open"

    # 5. Silence: the window expires, then exactly one Suspend.
    assert run.wait_until(lambda: logind.get_method_calls("Suspend"), timeout=REPLY_WINDOW_SECONDS + 60), \
        f"no Suspend after the unanswered follow-up\n{run.describe()}"
    assert time.monotonic() - second_pushed_at >= REPLY_WINDOW_SECONDS - 3
    turn.join(120)
    assert not turn.is_alive(), "the agent did not exit after its second stop"
    assert "error" not in outcome, outcome.get("error")
    result = outcome["result"]
    context = run.describe(result)
    assert result.returncode == 0, context

    carrying = [r for r in run.model.model_requests() if REPLY in r.text()]
    assert len(carrying) == 1, f"exactly one model request carries the reply\n{context}"
    assert len(run.model.model_requests()) > requests_before_reply
    assert [args for _, args in logind.get_method_calls("Suspend")] == [[False]]
    assert not run.wait_until(lambda: len(logind.get_method_calls("Suspend")) > 1, timeout=3)
    assert run.wait_until(lambda: not ours(logind.list_inhibitors()), timeout=10), "an inhibitor was left behind"

    states = {follow_up: httpx.get(f"{notify['base']}/api/follow-ups/{follow_up}", headers=notify["headers"],
                                   timeout=10).json() for follow_up in (first_id, second_id)}
    assert states[first_id]["status"] == "Replied" and states[first_id]["reply"] == REPLY, states
    assert states[second_id]["status"] == "Expired", states
    [entry] = lidguard.json("suspend-history")["entries"]
    assert entry["Succeeded"] is True
    assert len(run.events("session-started")) >= 1
