"""The OpenCode-style plugin, shared by OpenCode and its fork Kilo Code (AGENT_CLIS.md, AGENT_CLIS_NEW.md
section 3): a managed plugin file, ``<agent config folder>/plugin/lidguard.js`` (each agent module names its
folder: ``agents/opencode.py``, ``agents/kilo.py``).
These agents have no command hooks: the plugin runs in the agent's process and forwards chat.message,
tool.execute.before/after and the permission.asked/replied and session.idle bus events to
``lidguard <key>-hook --event <name>`` (JSON on stdin). It answers a permission from the hook's
``{"behavior": "allow"|"deny"}``. Ask-before-sleep (ASK_BEFORE_SLEEP.md, AGENT_CLIS.md second round):
the session.idle hook may wait for the user's reply and print ``{"decision": "block", "reason"}``; the
TUI then gets the text with ``client.session.prompt()``. ``<agent> run`` exits as soon as the session
is idle, so there the stop hook runs (and waits) inside the awaited ``experimental.text.complete`` of
the final text part (an assistant message without tool parts) and the continuation goes out with
``promptAsync``. The plugin counts its own continuations (``stop_hook_active: true`` on the stop that
follows one) and a user's chat.message cancels a pending wait (the hook is killed; the runtime ends the
wait on the new prompt). The file is ours as a whole; one that does not carry our marker line is never
overwritten or removed. :class:`PluginInstaller` is one agent's plugin. Imported only by hook-install /
hook-remove / hook-status, never on a hook's path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from .common import InstallError, InstallResult, hook_process_argv, read_config_text, remove_file, write_config

__all__ = ["EVENTS", "MARKER", "PluginInstaller"]

MARKER = "// Managed by LidGuard:"
EVENTS = ("chat.message", "tool.execute.before", "tool.execute.after", "permission.asked", "permission.replied",
          "session.idle")

_TEMPLATE = """\
// Managed by LidGuard: `lidguard hook-install --provider __KEY__` rewrites this file and
// `lidguard hook-remove --provider __KEY__` deletes it. Local edits are lost on the next install.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const LIMIT = 1048576;
// `__KEY__ run` exits right after its session goes idle: there the wait happens in the awaited
// experimental.text.complete hook of the final text part instead of in session.idle.
const RUN_MODE = process.argv.slice(2).includes("run");

function run(event, payload, limitMs, pending) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), "__KEY__-hook", "--event", event],
                    { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    if (pending) pending.child = child;
    const timer = limitMs ? setTimeout(() => child.kill(), limitMs) : null;
    child.stdout.on("data", (chunk) => { if (out.length < LIMIT) out += chunk; });
    child.on("error", () => resolve(""));
    child.on("close", () => { if (timer) clearTimeout(timer); resolve(out); });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function parse(text) {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

const textOf = (parts) => (Array.isArray(parts) ? parts : [])
  .filter((p) => p?.type === "text" && typeof p.text === "string").map((p) => p.text).join("\\n");

export const LidGuard = async ({ client, directory }) => {
  const continued = new Set(); // the session's running turn is our continuation: next stop_hook_active
  const injecting = new Set(); // our continuation's own chat.message is not the user typing
  const stopped = new Set();   // run mode: the stop already went out from text.complete
  const waits = new Map();     // session -> the pending stop wait
  const send = (event, fields, limitMs = 30000, pending = null) =>
    run(event, { ...fields, hook_event_name: event, cwd: directory, pid: process.pid }, limitMs, pending);
  const cancel = (id) => {
    const pending = waits.get(id);
    if (pending) { pending.canceled = true; pending.child?.kill(); waits.delete(id); }
  };
  // The stop hook (no time limit: it may wait for the user's reply); the continuation text or null.
  const stop = async (id, fields) => {
    cancel(id);
    const pending = { child: null, canceled: false };
    waits.set(id, pending);
    const active = continued.delete(id);
    const fieldsOut = { ...fields, sessionID: id, stop_hook_active: active };
    const answer = parse(await send("session.idle", fieldsOut, 0, pending));
    if (waits.get(id) === pending) waits.delete(id);
    if (pending.canceled || answer?.decision !== "block" || typeof answer.reason !== "string" || !answer.reason) {
      return null;
    }
    continued.add(id);
    injecting.add(id);
    return { path: { id }, body: { parts: [{ type: "text", text: answer.reason }] } };
  };
  const lastAssistant = async (id) => {
    try {
      const list = (await client.session.messages({ path: { id } }))?.data;
      const last = (Array.isArray(list) ? list : []).filter((m) => m?.info?.role === "assistant").pop();
      return textOf(last?.parts);
    } catch {
      return "";
    }
  };
  const queued = async (id, after) => {
    for (let i = 0; i < 100; i++) {
      try {
        const list = (await client.session.messages({ path: { id } }))?.data;
        if ((Array.isArray(list) ? list : []).some((m) => m?.info?.role === "user" && m.info.id > after)) return;
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return {
    "chat.message": async (input, output) => {
      const id = input?.sessionID;
      // The user typed: no continuation. Our own keeps `stopped`: the bus session.idle of the turn we
      // continued comes after it (Kilo 7.7.9 run mode) and must not send that turn's stop again.
      if (!injecting.delete(id)) { cancel(id); continued.delete(id); stopped.delete(id); }
      await send("chat.message", { ...input, prompt: textOf(output?.parts).slice(0, 4000) });
    },
    "tool.execute.before": async (input) => { await send("tool.execute.before", input); },
    "tool.execute.after": async (input) => { await send("tool.execute.after", input); },
    "experimental.text.complete": async (input, output) => {
      const id = input?.sessionID;
      if (!RUN_MODE || !id || !input.messageID) return;
      let parts;
      try {
        parts = (await client.session.message({ path: { id, messageID: input.messageID } }))?.data?.parts;
      } catch {
        return;
      }
      if (!Array.isArray(parts) || parts.some((p) => p?.type === "tool")) return; // not the final text
      stopped.add(id);
      const next = await stop(id, { ...input, last_assistant_message: output?.text ?? "" });
      if (!next) return;
      await client.session.promptAsync(next).catch(() => {});
      await queued(id, input.messageID); // returning earlier lets the loop end and `run` exit first
    },
    event: async ({ event }) => {
      const props = event?.properties ?? {};
      if (event?.type === "permission.asked") {
        const answer = parse(await send("permission.asked", props));
        const response = answer?.behavior === "allow" ? "once" : answer?.behavior === "deny" ? "reject" : null;
        if (response && props.id && props.sessionID) {
          await client.postSessionIdPermissionsPermissionId({
            path: { id: props.sessionID, permissionID: props.id }, body: { response },
          }).catch(() => {});
        }
      } else if (event?.type === "permission.replied") {
        await send("permission.replied", props);
      } else if (event?.type === "session.idle" && props.sessionID) {
        const id = props.sessionID;
        if (stopped.delete(id)) return;
        const next = await stop(id, { ...props, last_assistant_message: await lastAssistant(id) });
        if (next) client.session.prompt(next).catch(() => {});
      }
    },
  };
};
"""


class PluginInstaller:
    """The managed plugin of one OpenCode-style agent: ``key`` names its hook command (``<key>-hook``) and
    its ``--provider`` word, ``product`` its messages, ``config_dir`` the folder holding ``plugin/``."""

    EVENTS = EVENTS

    def __init__(self, key: str, product: str, config_dir: Callable[[], Path]) -> None:
        self.key = key
        self.product = product
        self.config_dir = config_dir

    def config_root(self) -> Path:
        return self.config_dir()

    def locked_files(self, config: Path | None) -> list[Path]:
        return [self.plugin_file(config).absolute()]

    def plugin_file(self, config: Path | None = None) -> Path:
        return (config if config is not None else self.config_dir() / "plugin" / "lidguard.js").absolute()

    def plugin_source(self, command: list[str] | None = None) -> str:
        """The plugin text; ``command`` (default: the installed hook command) is what it runs."""
        text = _TEMPLATE.replace("__KEY__", self.key)
        return text.replace("__COMMAND__", json.dumps(command if command is not None else hook_process_argv()))

    def _what(self) -> str:
        return f"{self.product} plugin file"

    def _current(self, path: Path) -> str | None:
        text = read_config_text(path, self._what())
        if text is not None and MARKER not in text:
            raise InstallError(f"The {self._what()} {path} was not written by LidGuard; it was left as it is.")
        return text

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        path = self.plugin_file(config)
        current = self._current(path)
        wanted = self.plugin_source()
        result = InstallResult(self.product, path, current != wanted, "")
        if result.changed:
            saved = write_config(path, wanted, self._what())
            result.backups += [saved] if saved else []
            result.message = f"Installed the LidGuard {self.product} plugin."
        else:
            result.message = f"The LidGuard {self.product} plugin is already installed."
        return result

    def remove(self, config: Path | None) -> InstallResult:
        path = self.plugin_file(config)
        current = self._current(path)
        result = InstallResult(self.product, path, current is not None, "")
        if current is not None:
            saved = remove_file(path, self._what())
            result.backups += [saved] if saved else []
            result.message = f"Removed the LidGuard {self.product} plugin."
        else:
            result.message = f"No LidGuard {self.product} plugin was installed."
        return result

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        path = self.plugin_file(config)
        text = read_config_text(path, self._what())
        if text is None:
            status = "NotInstalled"
        elif MARKER not in text:
            status = "Unknown"
        else:
            status = "Installed" if text == self.plugin_source() else "NeedsUpdate"
        lines = [f"Status: {status}", f"Config: {path}", f"Config exists: {text is not None}"]
        return lines + [f"{event}: {text is not None and MARKER in text and repr(event)[1:-1] in text}"
                        for event in EVENTS]

