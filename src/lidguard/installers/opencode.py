"""OpenCode: a managed plugin file, ``$XDG_CONFIG_HOME/opencode/plugin/lidguard.js`` (default
``~/.config``). OpenCode has no command hooks: the plugin runs in the agent's process and forwards
chat.message, tool.execute.before/after and the permission.asked/replied and session.idle bus events
to ``lidguard opencode-hook --event <name>`` (JSON on stdin). It answers a permission from the hook's
``{"behavior": "allow"|"deny"}`` and sends a Stop-style ``{"decision": "block", "reason"}`` printed
after session.idle back into the same session (ASK_BEFORE_SLEEP.md). The file is ours as a whole; one
that does not carry our marker line is never overwritten or removed.
"""

from __future__ import annotations

import json
from pathlib import Path

from .common import InstallError, InstallResult, env_dir, home, hook_argv, read_config_text, remove_file, write_config

__all__ = ["EVENTS", "MARKER", "install", "plugin_file", "plugin_source", "remove", "status_lines"]

MARKER = "// Managed by LidGuard:"
EVENTS = ("chat.message", "tool.execute.before", "tool.execute.after", "permission.asked", "permission.replied",
          "session.idle")

_TEMPLATE = """\
// Managed by LidGuard: `lidguard hook-install --provider opencode` rewrites this file and
// `lidguard hook-remove --provider opencode` deletes it. Local edits are lost on the next install.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const LIMIT = 1048576;

function run(event, payload, limitMs) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), "opencode-hook", "--event", event],
                    { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
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

export const LidGuard = async ({ client, directory }) => {
  const continued = new Set();
  const send = (event, fields, limitMs = 30000) =>
    run(event, { ...fields, hook_event_name: event, cwd: directory, pid: process.pid }, limitMs);
  return {
    "chat.message": async (input, output) => {
      const parts = output?.parts ?? [];
      const prompt = parts.filter((p) => p?.type === "text").map((p) => p.text).join("\\n").slice(0, 4000);
      await send("chat.message", { ...input, prompt });
    },
    "tool.execute.before": async (input) => { await send("tool.execute.before", input); },
    "tool.execute.after": async (input) => { await send("tool.execute.after", input); },
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
      } else if (event?.type === "session.idle") {
        const id = props.sessionID;
        const active = continued.delete(id);
        const answer = parse(await send("session.idle", { ...props, stop_hook_active: active }, 0));
        if (id && answer?.decision === "block" && typeof answer.reason === "string" && answer.reason) {
          continued.add(id);
          client.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: answer.reason }] } })
            .catch(() => {});
        }
      }
    },
  };
};
"""


def config_dir() -> Path:
    return env_dir("XDG_CONFIG_HOME", home() / ".config") / "opencode"


def plugin_file(config: Path | None = None) -> Path:
    return (config if config is not None else config_dir() / "plugin" / "lidguard.js").absolute()


def plugin_source() -> str:
    return _TEMPLATE.replace("__COMMAND__", json.dumps(hook_argv()))


def _current(path: Path) -> str | None:
    text = read_config_text(path, "OpenCode plugin file")
    if text is not None and MARKER not in text:
        raise InstallError(f"The OpenCode plugin file {path} was not written by LidGuard; it was left as it is.")
    return text


def install(config: Path | None, stop_timeout: int) -> InstallResult:
    path = plugin_file(config)
    current = _current(path)
    wanted = plugin_source()
    result = InstallResult("OpenCode", path, current != wanted, "")
    if result.changed:
        saved = write_config(path, wanted, "OpenCode plugin file")
        result.backups += [saved] if saved else []
        result.message = "Installed the LidGuard OpenCode plugin."
    else:
        result.message = "The LidGuard OpenCode plugin is already installed."
    return result


def remove(config: Path | None) -> InstallResult:
    path = plugin_file(config)
    current = _current(path)
    result = InstallResult("OpenCode", path, current is not None, "")
    if current is not None:
        saved = remove_file(path, "OpenCode plugin file")
        result.backups += [saved] if saved else []
        result.message = "Removed the LidGuard OpenCode plugin."
    else:
        result.message = "No LidGuard OpenCode plugin was installed."
    return result


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    path = plugin_file(config)
    text = read_config_text(path, "OpenCode plugin file")
    if text is None:
        status = "NotInstalled"
    elif MARKER not in text:
        status = "Unknown"
    else:
        status = "Installed" if text == plugin_source() else "NeedsUpdate"
    lines = [f"Status: {status}", f"Config: {path}", f"Config exists: {text is not None}"]
    return lines + [f"{event}: {text is not None and MARKER in text and repr(event)[1:-1] in text}"
                    for event in EVENTS]
