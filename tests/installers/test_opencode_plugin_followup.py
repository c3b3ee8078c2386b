"""The managed OpenCode plugin's ask-before-sleep logic, run in node with a fake plugin client and a stub
hook command: `node --check`; in the TUI session.idle waits for the hook and re-prompts with
``client.session.prompt``; the plugin counts its own continuations (``stop_hook_active``); a user's
chat.message cancels a pending wait; in ``opencode run`` the final text part's awaited
``experimental.text.complete`` runs the stop and continues with ``promptAsync``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.agents import opencode

plugin_source = opencode.installer().plugin_source
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

STUB = """\
import json, os, sys, time
event = sys.argv[sys.argv.index("--event") + 1]
payload = json.loads(sys.stdin.read() or "{}")
with open(os.environ["STUB_LOG"], "a") as log:
    log.write(json.dumps({"event": event, "payload": payload}) + "\\n")
if event == "session.idle":
    if os.environ.get("STUB_SLEEP"):
        time.sleep(float(os.environ["STUB_SLEEP"]))
    if not payload.get("stop_hook_active"):
        print(json.dumps({"decision": "block", "reason": "now run the tests"}))
"""

DRIVER = """\
import { pathToFileURL } from "node:url";
const calls = [];
const messages = [{ info: { role: "user", id: "m-a" }, parts: [{ type: "text", text: "hi" }] },
                  { info: { role: "assistant", id: "m-b" }, parts: [{ type: "text", text: "Done." }] }];
const client = { session: {
  prompt: async (a) => { calls.push(["prompt", a]); },
  promptAsync: async (a) => {
    calls.push(["promptAsync", a]);
    // The agent runs the chat.message hooks of the queued text before storing it (Kilo and OpenCode).
    if (process.env.SCENARIO === "run-continued") await user(a.body.parts[0].text);
    // Stored a moment later (OpenCode awaits the chat.message hooks first); the plugin waits for it.
    setTimeout(() => { calls.push(["stored"]); messages.push({ info: { role: "user", id: "m-zz" }, parts: [] }); },
               300);
  },
  messages: async () => ({ data: [...messages] }),
  message: async ({ path }) => ({ data: { parts: path.messageID === "m-tool"
    ? [{ type: "text", text: "Let me check." }, { type: "tool" }] : [{ type: "text", text: "All done." }] } }),
} };
const { LidGuard } = await import(pathToFileURL(process.env.PLUGIN).href);
const hooks = await LidGuard({ client, directory: "/w/app" });
const idle = { event: { type: "session.idle", properties: { sessionID: "s1" } } };
const user = (text) => hooks["chat.message"]({ sessionID: "s1" }, { parts: [{ type: "text", text }] });
const tick = () => new Promise((resolve) => setTimeout(resolve, 50));
const scenario = process.env.SCENARIO;
if (scenario === "tui") {
  await hooks.event(idle);                 // reply -> prompt
  await tick();
  await user("now run the tests");          // our own continuation arrives
  await hooks.event(idle);                 // stop_hook_active: true -> the stub gives no reply
  await user("the user types");
  await hooks.event(idle);                 // a user turn again: stop_hook_active: false
  await tick();
} else if (scenario === "cancel") {
  const waiting = hooks.event(idle);
  const { readFileSync } = await import("node:fs");
  const logged = () => { try { return readFileSync(process.env.STUB_LOG, "utf8").includes("session.idle"); }
                         catch { return false; } };
  for (let i = 0; i < 400 && !logged(); i++) await tick();  // the hook is running and waiting
  await user("the user types meanwhile");
  await waiting;
  await tick();
} else if (scenario === "run") {
  await hooks["experimental.text.complete"]({ sessionID: "s1", messageID: "m-tool", partID: "p1" },
                                            { text: "Let me check." });
  await hooks["experimental.text.complete"]({ sessionID: "s1", messageID: "m-final", partID: "p2" },
                                            { text: "All done." });
  calls.push(["returned"]);
  await hooks.event(idle);                 // the stop already went out: nothing more
} else if (scenario === "run-continued") {
  await hooks["experimental.text.complete"]({ sessionID: "s1", messageID: "m-final", partID: "p2" },
                                            { text: "All done." });
  await hooks.event(idle);                 // the continued turn's own idle, after our chat.message: no stop
  await hooks["experimental.text.complete"]({ sessionID: "s1", messageID: "m-zz2", partID: "p3" },
                                            { text: "Tests pass." });
  await hooks.event(idle);
}
console.log(JSON.stringify(calls));
"""


def _drive(tmp_path: Path, scenario: str, *, run_mode: bool = False, sleep: str = "") -> tuple[list, list]:
    stub = tmp_path / "stub_hook.py"
    stub.write_text(STUB)
    plugin = tmp_path / "lidguard.mjs"
    plugin.write_text(plugin_source([sys.executable, str(stub)]))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    log = tmp_path / "hook.log"
    env = {"PATH": "/usr/bin:/bin", "PLUGIN": str(plugin), "SCENARIO": scenario, "STUB_LOG": str(log),
           "STUB_SLEEP": sleep}
    argv = [str(NODE), str(driver), *(["run"] if run_mode else [])]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    hooks = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return json.loads(result.stdout), hooks


def test_the_plugin_is_valid_javascript(tmp_path):
    plugin = tmp_path / "lidguard.mjs"
    plugin.write_text(plugin_source())
    result = subprocess.run([str(NODE), "--check", str(plugin)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


CONTINUE = {"path": {"id": "s1"}, "body": {"parts": [{"type": "text", "text": "now run the tests"}]}}


def test_tui_idle_waits_reprompts_and_counts_its_own_continuations(tmp_path):
    calls, hooks = _drive(tmp_path, "tui")
    assert calls == [["prompt", CONTINUE], ["prompt", CONTINUE]]
    idles = [hook["payload"] for hook in hooks if hook["event"] == "session.idle"]
    assert [idle["stop_hook_active"] for idle in idles] == [False, True, False]
    assert all(idle["sessionID"] == "s1" and idle["hook_event_name"] == "session.idle"
               and idle["cwd"] == "/w/app" and idle["last_assistant_message"] == "Done." for idle in idles)
    assert [hook["event"] for hook in hooks].count("chat.message") == 2


def test_the_user_typing_cancels_a_pending_wait(tmp_path):
    calls, hooks = _drive(tmp_path, "cancel", sleep="20")
    assert calls == []  # the killed hook's continuation never goes out
    assert [hook["event"] for hook in hooks] == ["session.idle", "chat.message"]


def test_run_mode_waits_in_the_final_text_part_and_continues_with_prompt_async(tmp_path):
    calls, hooks = _drive(tmp_path, "run", run_mode=True)
    # text.complete returns only once the continuation is stored (else `opencode run` ends first).
    assert calls == [["promptAsync", CONTINUE], ["stored"], ["returned"]]
    [idle] = [hook["payload"] for hook in hooks if hook["event"] == "session.idle"]
    assert idle["last_assistant_message"] == "All done." and idle["stop_hook_active"] is False
    assert idle["messageID"] == "m-final"


def test_run_mode_sends_the_continued_turns_stop_once(tmp_path):
    """Kilo 7.7.9 (and the order OpenCode stores a queued prompt in): our continuation's chat.message comes
    before the bus session.idle of the turn it continues; that idle sends no second stop."""
    calls, hooks = _drive(tmp_path, "run-continued", run_mode=True)
    assert calls == [["promptAsync", CONTINUE], ["stored"]]
    idles = [hook["payload"] for hook in hooks if hook["event"] == "session.idle"]
    assert [(idle["messageID"], idle["stop_hook_active"]) for idle in idles] == [("m-final", False), ("m-zz2", True)]


def test_outside_run_mode_text_complete_does_nothing(tmp_path):
    calls, hooks = _drive(tmp_path, "run", run_mode=False)
    # Only the session.idle stop runs (and re-prompts the TUI way).
    assert calls == [["returned"], ["prompt", CONTINUE]]
    assert [hook["event"] for hook in hooks] == ["session.idle"]
