"""Cline CLI 3.0 (npm ``cline``, AGENT_CLIS_NEW.md section 2): ``lidguard cline-hook`` from one hook file per
event in ``$CLINE_DIR/hooks`` (default ``~/.cline/hooks``, the CLI's ``--hooks-dir``; ``--config`` names another
folder, such as a workspace's ``.clinerules/hooks``). The CLI also reads ``~/Documents/Cline/Hooks`` and runs
every file of every folder, so lidguard writes one folder only.

Hook files are named after the event (``TaskStart``, ...; any of a few extensions), and Cline runs each one
through its shebang (``sh``), so lidguard's file is three lines that ``exec`` the hook: the hook's parent is
the ``cline`` process. Payloads name the event in ``hookName`` (``agent_start``, ``tool_call``, ...); the session
is ``taskId`` (the root agent's conversation: the same for every prompt of a TUI session; a subagent has its own,
so it is a session of its own; ``sessionContext.rootSessionId``, the Cline session id, is not used). TaskStart
starts the turn, tool calls are activity paired by ``tool_call.id``, TaskComplete (``agent_end``) ends it; Cline
ignores its output, so ask-before-sleep never waits there. TaskError/TaskCancel end only the turn,
SessionShutdown the session. TaskStart and TaskComplete hooks are fire-and-forget (spawned detached, not
awaited). Ancestry: ``hook <- cline`` (a native Bun program); the detached ``cline --cline-hub-daemon`` that
the CLI leaves running is never the agent to watch. Stdlib only.
"""

from __future__ import annotations

from ..ipc.limits import MAX_TOOL_CALL_ID_CHARS
from . import IGNORE, Action, stop_action, turn_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.common import InstallResult
    from ..platform.process_info import ProcessInfo

KEY = "cline"
PROVIDER = "Cline"
DISPLAY = "Cline CLI"
ALIASES = ("cline-cli",)
CONFIG_TEXT = "one file per event in hooks/ ($CLINE_DIR or ~/.cline)"
STOP_TIMEOUT = False  # Cline's hook files carry no timeout; its TaskComplete is never waited on
HOOK_HELP = ("Cline CLI hook (run from lidguard's hook files; reads the event JSON on stdin).",
             "Cline CLI hook file command: TaskStart/TaskResume start the session, tool use is activity, "
             "TaskComplete ends the turn (Cline ignores its output, so ask-before-sleep cannot continue a Cline "
             "turn), TaskError/TaskCancel end only the turn, SessionShutdown the session. Always exits 0.")
SESSION_KEYS = ("taskId",)
PROCESS_COMMANDS: frozenset[str] = frozenset()  # "cline", minus its hub daemon: matches_process
PROCESS_PACKAGES = ("cline",)
HUB_DAEMON_OPTION = "--cline-hub-daemon"
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("agentId", ("agent_id",)), ("parentAgentId", ("parent_agent_id",)), ("iteration", ("iteration",)),
               ("reason", ("reason",)))
_STARTS = frozenset({"agent_start", "agent_resume"})
_TOOLS = {"tool_call": ("tool_call", "Running"), "tool_result": ("tool_result", "Finished")}
_TURN_FAILURES = {"agent_error": "TaskError", "agent_abort": "TaskCancel"}


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name in _STARTS:
        return Action("start")
    if name == "prompt_submit":  # not installed: 3.0.65 never sent it for a typed prompt
        prompt = payload.nested("userPromptSubmit", "prompt")
        return Action("start", prompt=type(payload)({"prompt": prompt}).text("prompt"))
    tool = _TOOLS.get(name)
    if tool is not None:
        return _tool(event, payload, *tool)
    if name == "agent_end":
        action = stop_action(payload, "TaskComplete", turn_end=True)  # blocking=False: Cline drops its output
        action.last_assistant_message = type(payload)({"text": payload.nested("turn", "outputText")}).text("text")
        return action
    if name in _TURN_FAILURES:
        return stop_action(payload, _TURN_FAILURES[name], provider_session_end=False, turn_end=True)
    if name == "session_shutdown":
        detail = payload.text("reason")
        return stop_action(payload, f"SessionShutdown:{detail}" if detail else "SessionShutdown")
    return IGNORE


def _tool(event: str, payload: Payload, key: str, state: str) -> Action:
    call = payload.data.get(key)
    call = call if isinstance(call, dict) else {}
    fields = type(payload)(call)
    tool = fields.text("name")
    if tool.lower() in QUIET_TOOLS:
        return IGNORE
    call_id = fields.text("id") or f"tool:{tool}"
    return Action("activity", f"{event}:{tool}", tool_call_id=call_id[:MAX_TOOL_CALL_ID_CHARS], tool_state=state,
                  turn_id=turn_of(payload))


def permission_output(decision: str) -> dict[str, Any] | None:
    """Cline has no permission event (PreToolUse's ``cancel`` would deny every tool, asked or not): none."""
    return None


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """The ``cline`` program, but never its detached hub daemon (it outlives every CLI run)."""
    return "cline" in names and HUB_DAEMON_OPTION not in process.cmdline[1:]


# -- its installer: one executable file per event (Cline's own format, shared with nobody) --------------------
EVENTS = ("TaskStart", "TaskResume", "PreToolUse", "PostToolUse", "TaskComplete", "TaskError", "TaskCancel",
          "SessionShutdown")
SHEBANG = "#!/bin/sh"
MARKER = "# lidguard cline-hook: written by `lidguard hook-install --provider cline`; `lidguard hook-remove` deletes it"
FILE_MODE = 0o700  # the user's alone
MAX_HOOK_FILE_BYTES = 4096
_NAMES = ("{event}", "{event}.sh")  # the user's own <event> file keeps its name: ours is then <event>.sh


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("CLINE_DIR", home() / ".cline")


def hook_text() -> str:
    from ..installers.common import hook_command

    return f"{SHEBANG}\n{MARKER}\nexec {hook_command(f'{KEY}-hook')}\n"


def installer() -> _Installer:
    return _Installer()


def _read_ours(path: Path) -> str | None:
    """The text of lidguard's hook file at ``path`` (a regular file in our three-line shape), else None."""
    import os
    import stat

    from ..installers.common import is_managed_command

    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_HOOK_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            text = handle.read(MAX_HOOK_FILE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    ours = (len(lines) == 4 and lines[3] == "" and lines[:2] == [SHEBANG, MARKER] and lines[2].startswith("exec ")
            and is_managed_command(lines[2][len("exec "):], f"{KEY}-hook"))
    return text if ours else None


def _unlink(path: Path) -> None:
    from ..installers.common import InstallError

    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        raise InstallError(f"Cannot remove the Cline hook file {path}: {error.strerror or error}") from error


def _mode(path: Path) -> int:
    try:
        return path.lstat().st_mode & 0o7777
    except OSError:
        return -1


class _Installer:
    """hook-install / hook-remove / hook-status for the hooks folder (``config`` names another folder)."""

    WHAT = "Cline hooks folder"
    EVENTS = EVENTS

    def config_root(self) -> Path:
        return config_root()

    def folder(self, config: Path | None) -> Path:
        return (config if config is not None else config_root() / "hooks").absolute()

    def locked_files(self, config: Path | None) -> list[Path]:
        return [self.folder(config)]  # one sidecar beside the folder, none in it

    def ours(self, folder: Path, event: str) -> list[tuple[Path, str]]:
        candidates = [folder / name.format(event=event) for name in _NAMES]
        return [(path, text) for path, text in ((path, _read_ours(path)) for path in candidates) if text is not None]

    def _check_folder(self, folder: Path) -> None:
        from ..installers.common import InstallError

        if folder.exists() and not folder.is_dir():
            raise InstallError(f"The {self.WHAT} path is not a folder: {folder}; it was left as it is.")

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        import os

        from ..fileio import write_atomic
        from ..installers.common import InstallError, InstallResult
        from ..platform.host import host_os_name

        folder = self.folder(config)
        if host_os_name() == "windows":
            raise InstallError("Cline CLI hooks are written as sh scripts: not supported on Windows yet.")
        self._check_folder(folder)
        wanted = hook_text()
        changed = False
        for event in EVENTS:
            ours = self.ours(folder, event)
            for extra, _ in ours[1:]:  # a duplicate of ours would run the hook twice
                _unlink(extra)
                changed = True
            if ours:
                path, text = ours[0]
                if text == wanted and _mode(path) == FILE_MODE:
                    continue
            else:
                free = [folder / name.format(event=event) for name in _NAMES
                        if not os.path.lexists(folder / name.format(event=event))]
                if not free:
                    raise InstallError(f"Both {folder / event} and {folder / event}.sh are the user's own "
                                       f"hook files; lidguard's {event} hook was not written.")
                path = free[0]
            try:
                write_atomic(path, wanted, mode=FILE_MODE)
            except OSError as error:
                raise InstallError(f"Cannot write the Cline hook file {path}: {error.strerror or error}") from error
            changed = True
        result = InstallResult(DISPLAY, folder, changed, "The LidGuard Cline CLI hooks are already installed.")
        if changed:
            result.message = "Installed the LidGuard Cline CLI hooks."
        result.notes.append("Cline ignores TaskComplete's output: ask-before-sleep cannot continue a Cline turn "
                            "(the session still ends there).")
        return result

    def remove(self, config: Path | None) -> InstallResult:
        from ..installers.common import InstallResult

        folder = self.folder(config)
        self._check_folder(folder)
        removed = []
        for event in EVENTS:
            for path, _ in self.ours(folder, event):
                _unlink(path)
                removed.append(path.name)
        result = InstallResult(DISPLAY, folder, bool(removed), "No LidGuard Cline CLI hooks were installed.")
        if removed:
            result.message = f"Removed the LidGuard Cline CLI hooks ({', '.join(removed)})."
        return result

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        from ..installers.common import HookStatus
        from ..installers.hooks_json import overall

        folder = self.folder(config)
        wanted = hook_text()
        states: dict[str, str] = {}
        for event in EVENTS:
            ours = self.ours(folder, event)
            if not ours:
                states[event] = HookStatus.NOT_INSTALLED
            else:
                exact = len(ours) == 1 and ours[0][1] == wanted and _mode(ours[0][0]) == FILE_MODE
                states[event] = HookStatus.INSTALLED if exact else HookStatus.NEEDS_UPDATE
        lines = [f"Status: {overall(states)}", f"Config: {folder}", f"Config exists: {folder.is_dir()}"]
        lines += [f"{event}: {states[event]}" for event in EVENTS]
        if config is None:
            lines += self._elsewhere()
        lines.append("Note: Cline ignores TaskComplete's output, so ask-before-sleep cannot continue a Cline turn.")
        return lines

    def _elsewhere(self) -> list[str]:
        """Our files in the other folder Cline reads as well (every file there runs too: events counted twice)."""
        from ..installers.common import home

        other = home() / "Documents" / "Cline" / "Hooks"
        found = [path.name for event in EVENTS for path, _ in self.ours(other, event)]
        if not found:
            return []
        return [f"Warning: {other} also holds LidGuard hook files ({', '.join(found)}); Cline runs both folders, "
                f"so each event would count twice: run `lidguard hook-remove --provider cline --config {other}`."]
