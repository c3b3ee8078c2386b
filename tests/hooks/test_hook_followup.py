"""Blocking Stop hooks (ask-before-sleep, ASK_BEFORE_SLEEP.md): Claude ``Stop``, Codex ``Stop``, Copilot
``agentStop`` and OpenCode ``session.idle`` send ``WaitForFollowUp`` when the raw settings turn the
feature on, wait as long as the runtime may hold them, and print ``{"decision":"block","reason":...}``
on a reply. In-process with a stub runtime, then real processes: the runtime on the fake platform, a
local fake notification server, a real ``lidguard claude-hook`` waiting (replied, and killed mid-wait)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from lidguard.hooks.followup import follow_up_wait_seconds
from lidguard.hooks.runner import REPLY_TIMEOUT_SECONDS, run_hook

from .conftest import ENTRY, HOOK_COMMAND, run_hook_process
from .followup_server import FollowUpServer

ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
WAIT = 10 + 120 + 300 + 5  # the installed timeout (seed 000 + 20 s of margins) less the hook's 15 s give-up margin


@pytest.mark.parametrize(("changes", "expected"), [
    ({}, WAIT),
    ({"ClosedLidStopFollowUpWebhookUrl": "http://127.0.0.1:8080/x"}, WAIT),
    ({"ClosedLidStopFollowUpDelaySeconds": 20, "PostStopSuspendDelaySeconds": 3600}, 3600 + 20 + 305),
    ({"ClosedLidStopFollowUpWebhookUrl": ""}, None),
    ({"ClosedLidStopFollowUpWebhookUrl": "ftp://notify.example/x"}, None),
    ({"ClosedLidStopFollowUpWebhookUrl": "/relative/path"}, None),
    ({"ClosedLidStopFollowUpWebhookUrl": "https://"}, None),
    ({"ClosedLidStopFollowUpWebhookUrl": 5}, None),
    ({"ClosedLidStopFollowUpDelaySeconds": 19}, None),
    ({"PostStopSuspendDelaySeconds": 9}, None),
    ({"PostStopSuspendDelaySeconds": True}, None),
    ({"ClosedLidStopFollowUpDelaySeconds": "120"}, None),
    ({"ClosedLidStopFollowUpDelaySeconds": 10**9}, None),
    ({"PostStopSuspendDelaySeconds": None}, None),
])
def test_the_feature_is_on_only_for_the_spec_conditions(changes, expected):
    assert follow_up_wait_seconds({**ON, **changes}) == expected
    assert follow_up_wait_seconds(None) is None and follow_up_wait_seconds([]) is None


BLOCKING = [
    ("claude", [], {"session_id": "s", "hook_event_name": "Stop", "last_assistant_message": "Done."}),
    ("codex", [], {"session_id": "s", "hook_event_name": "Stop", "last_assistant_message": "Done."}),
    ("copilot", ["--event", "agentStop"], {"sessionId": "s", "stopReason": "end_turn"}),
    ("opencode", ["--event", "session.idle"], {"sessionID": "ses_1", "stop_hook_active": True}),
]
QUICK = [
    ("claude", [], {"session_id": "s", "hook_event_name": "SessionEnd"}),
    ("claude", [], {"session_id": "s", "hook_event_name": "StopFailure"}),
    ("claude", [], {"session_id": "s", "hook_event_name": "Stop", "is_interrupt": True}),
    ("codex", [], {"session_id": "s", "hook_event_name": "SessionEnd"}),
    ("copilot", ["--event", "sessionEnd"], {"sessionId": "s"}),
]
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


@pytest.mark.parametrize(("provider", "arguments", "payload"), BLOCKING)
def test_a_blocking_stop_waits_and_prints_the_continuation(stub_environment, provider, arguments, payload):
    runtime, environment = stub_environment(settings=ON, reply=REPLIED)
    output = run_hook(provider, arguments, json.dumps(payload).encode(), environment)
    assert output == {"decision": "block", "reason": "now run the tests"}
    [(message, auto_start, timeout)] = runtime.requests
    assert message["Command"] == "stop" and message["WaitForFollowUp"] is True and not auto_start
    assert timeout == WAIT and message["FollowUpWaitSeconds"] == WAIT  # the runtime learns when the hook gives up
    assert message["StopHookActive"] is (provider == "opencode")


@pytest.mark.parametrize("outcome", ["Expired", "Canceled", "NotAsked", "NotStarted", "Ended"])
def test_no_reply_prints_nothing(stub_environment, outcome):
    runtime, environment = stub_environment(settings=ON, reply={"Succeeded": True, "FollowUpOutcome": outcome})
    assert run_hook("claude", [], json.dumps(BLOCKING[0][2]).encode(), environment) is None
    assert runtime.requests[0][0]["WaitForFollowUp"] is True


@pytest.mark.parametrize("reply", [{"FollowUpReply": ""}, {"FollowUpReply": "  "}, {"FollowUpReply": 3},
                                   {"FollowUpReply": None}, {"RuntimeUnavailable": True}])
def test_odd_replies_print_nothing(stub_environment, reply):
    _, environment = stub_environment(settings=ON, reply={"Succeeded": True, **reply})
    assert run_hook("codex", [], json.dumps(BLOCKING[1][2]).encode(), environment) is None


def test_the_reply_text_is_bounded_and_valid_unicode(stub_environment):
    _, environment = stub_environment(settings=ON, reply={"FollowUpReply": "a\ud800b" + "x" * 20_000})
    output = run_hook("claude", [], json.dumps(BLOCKING[0][2]).encode(), environment)
    assert output is not None and output["reason"].startswith("a\ufffdb") and len(output["reason"]) == 16_000


@pytest.mark.parametrize(("provider", "arguments", "payload"), BLOCKING + QUICK)
def test_without_the_feature_every_stop_stays_quick(stub_environment, provider, arguments, payload):
    runtime, environment = stub_environment(settings={**ON, "ClosedLidStopFollowUpWebhookUrl": ""}, reply=REPLIED)
    assert run_hook(provider, arguments, json.dumps(payload).encode(), environment) is None
    [(message, _, timeout)] = runtime.requests
    assert "WaitForFollowUp" not in message and timeout == REPLY_TIMEOUT_SECONDS


@pytest.mark.parametrize(("provider", "arguments", "payload"), QUICK)
def test_session_ends_never_wait(stub_environment, provider, arguments, payload):
    runtime, environment = stub_environment(settings=ON, reply=REPLIED)
    assert run_hook(provider, arguments, json.dumps(payload).encode(), environment) is None
    [(message, _, timeout)] = runtime.requests
    assert "WaitForFollowUp" not in message and timeout == REPLY_TIMEOUT_SECONDS


def test_unreadable_settings_keep_the_quick_stop(stub_environment):
    runtime, environment = stub_environment(reply=REPLIED)

    def broken():
        raise OSError("disk gone")

    environment._settings = broken
    assert run_hook("claude", [], json.dumps(BLOCKING[0][2]).encode(), environment) is None
    assert "WaitForFollowUp" not in runtime.requests[0][0]


# -- real processes ------------------------------------------------------------------------------------
CLOSED = {"lid": "closed", "displays": [{"name": "eDP-1", "internal": True}]}
PROMPT = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "refactor it"}
STOP = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "Stop", "stop_hook_active": False,
        "last_assistant_message": "Refactoring finished."}


@pytest.fixture
def follow_up_server() -> Iterator[FollowUpServer]:
    server = FollowUpServer()
    yield server
    server.close()


def _sessions(lidguard):
    return {session["sessionIdentifier"]: session for session in lidguard.json("status")["sessions"]}


def _prepare(lidguard, server: FollowUpServer) -> None:
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "10", "--closed-lid-stop-follow-up-webhook-url",
                 server.url, "--closed-lid-stop-follow-up-delay-seconds", "20", check=True)
    lidguard.set_machine(**CLOSED)
    assert run_hook_process(lidguard, "claude", json.dumps(PROMPT)).returncode == 0
    assert lidguard.wait_until(lambda: "s1" in _sessions(lidguard), timeout=30)


# A command started in the background of a non-interactive shell (``.ci/run &``, nohup) inherits SIGINT
# ignored, and Python then installs no KeyboardInterrupt handler: the hook starts from SIGINT's default
# disposition, as under an agent in a terminal, whatever started pytest.
_WITH_DEFAULT_SIGINT = ("-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def _waiting_stop(lidguard, via: str = "python") -> subprocess.Popen[bytes]:
    if via == "client":  # the native hook client (issue 36): the runtime holds its connection; no fallback
        from lidguard.platform.hook_client import client_path

        command = [client_path(), sys.executable, "-c", "import sys; sys.stdout.write('FELL BACK')",
                   HOOK_COMMAND["claude"]]
    else:
        command = [sys.executable, *_WITH_DEFAULT_SIGINT, *ENTRY, HOOK_COMMAND["claude"]]
    hook = subprocess.Popen(command, env=lidguard.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(STOP).encode())
    hook.stdin.close()
    hook.stdin = None  # communicate() must not flush it again
    return hook


def _suspends(lidguard) -> list[dict]:
    return [entry for entry in lidguard.actions() if "suspend" in entry["action"].lower()]


@pytest.mark.parametrize("via", ["python", "client"])
def test_a_real_stop_hook_waits_and_continues_the_agent_with_the_reply(lidguard, follow_up_server, via):
    _prepare(lidguard, follow_up_server)
    hook = _waiting_stop(lidguard, via)
    try:
        assert follow_up_server.started.wait(40), "no StopFollowUp webhook"
        [event] = follow_up_server.events("StopFollowUp")
        assert event["sessionIdentifier"] == "s1" and event["lastAssistantMessage"] == "Refactoring finished."
        assert event["inputPromptPreview"] == "refactor it" and event["provider"] == "Claude"
        assert hook.poll() is None  # still waiting for the reply
        follow_up_server.reply("now run the integration tests")
        stdout, stderr = hook.communicate(timeout=30)
    finally:
        hook.kill()
    assert hook.returncode == 0, stderr
    assert json.loads(stdout) == {"decision": "block", "reason": "now run the integration tests"}
    assert stdout.endswith(b"\n") and stdout.count(b"\n") == 1
    status = lidguard.json("status")
    assert status["pendingSuspend"] is None
    assert "s1" in _sessions(lidguard)
    assert _suspends(lidguard) == [] and follow_up_server.events("PreSuspend") == []
    assert not (lidguard.data_dir / "exceptions.log").exists()


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGINT])
def test_a_stop_hook_killed_while_waiting_leaves_the_runtime_consistent(lidguard, follow_up_server, signal_number):
    _prepare(lidguard, follow_up_server)
    hook = _waiting_stop(lidguard)
    try:
        assert follow_up_server.started.wait(40), "no StopFollowUp webhook"
    finally:
        hook.send_signal(signal_number)  # the user pressed Esc
        stdout, stderr = hook.communicate(timeout=10)
    if signal_number == signal.SIGINT:  # an interrupted hook still exits 0 quietly
        assert (hook.returncode, stdout, stderr) == (0, b"", b"")
    polls = follow_up_server.polls
    assert lidguard.wait_until(lambda: follow_up_server.polls > polls)  # the wait goes on
    status = lidguard.json("status")
    assert status["pendingSuspend"] is not None and status["pendingSuspend"]["stage"] == "follow-up", status
    # A new prompt ends the wait, the session is protected again and nothing suspends.
    assert run_hook_process(lidguard, "claude", json.dumps({**PROMPT, "prompt": "and more"})).returncode == 0
    assert lidguard.wait_until(lambda: lidguard.json("status")["pendingSuspend"] is None)
    assert "s1" in _sessions(lidguard)
    follow_up_server.reply("too late")
    polls = follow_up_server.polls
    assert not lidguard.wait_until(lambda: follow_up_server.polls > polls + 1, timeout=5)  # polling stopped
    assert _suspends(lidguard) == [] and follow_up_server.events("PreSuspend") == []
    # The runtime still answers stops: a quick one (no reply wait for a stop hook after the next prompt).
    result = run_hook_process(lidguard, "claude", json.dumps({**STOP, "hook_event_name": "SessionEnd"}))
    assert result.returncode == 0 and result.stdout == b""
    assert not (lidguard.data_dir / "exceptions.log").exists()
