"""The hook path: start, stop, mark-session-*, remove-session and stop-runtime without argparse.

Agents run these on every prompt and tool call, so they import only the standard library and
lidguard's stdlib modules (paths, ipc, providers, proctree for ``--parent-pid auto``): ``main``
dispatches them here before the full parser is built. Options follow REFERENCE 1.1: ``--name value``
or ``--name=value``, names case-insensitive, the last occurrence wins; ``--help``/``-h`` anywhere
hands the command to the full parser, which prints its help.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from ..ipc.limits import (
    MAX_PATH_CHARS,
    MAX_PROCESS_IDENTIFIER,
    MAX_PROVIDER_NAME_CHARS,
    MAX_REASON_CHARS,
    MAX_SESSION_IDENTIFIER_CHARS,
)
from ..providers import PROVIDER_CHOICES_TEXT, AgentProvider, agent_process_word, parse_provider, provider_display
from .output import CliError, escape_control, response_block, runtime_text

__all__ = ["COMMANDS", "COMMAND_HELP", "OPTION_HELP", "options_of", "run_fast", "safe_text"]

def N_(message: str) -> str:  # noqa: N802 - marks a help text for lidguard.l10n (translated where shown)
    return message


# option key -> (names, help); flags take no value (``--all``, ``--all=false``, ``--all true``).
OPTION_HELP: dict[str, tuple[tuple[str, ...], str]] = {
    "provider": (("--provider",), PROVIDER_CHOICES_TEXT),
    "session": (("--session", "--session-id", "--session-identifier"),
                N_("session identifier (default: <Provider>:<working directory>)")),
    "provider_name": (("--provider-name", "--mcp-provider-name"), N_("required with --provider mcp")),
    "parent_pid": (("--parent-pid", "--watched-process-id", "--watched-process-identifier"),
                   N_("a running process whose exit ends the session, or 'auto': the provider's agent found "
                   "above this command (custom/unknown: the script or shell that ran lidguard)")),
    "working_directory": (("--working-directory", "--cwd"),
                          N_("working directory recorded for the session (default: current)")),
    "reason": (("--reason", "--session-state-reason"), N_("why the session's state changed (logged)")),
    "all": (("--all",), N_("remove every session")),
    "force": (("--force",), N_("stop the runtime even while sessions are active (their protection ends)")),
}
FLAGS = frozenset({"all", "force"})
_SESSION = ("provider", "session", "provider_name", "parent_pid", "working_directory")
_COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "start": _SESSION,
    "stop": _SESSION,
    "mark-session-active": (*_SESSION, "reason"),
    "mark-session-softlocked": (*_SESSION, "reason"),
    "remove-session": ("all", "session", "provider", "provider_name"),
    "stop-runtime": ("force",),
}
COMMAND_HELP = {
    "start": N_("Start or update a session (starts the runtime if needed)."),
    "stop": N_("Stop a session (never sends a session-end webhook)."),
    "mark-session-active": N_("Mark a session active again (hooks: a prompt or tool use after a soft-lock)."),
    "mark-session-softlocked": N_("Mark a session soft-locked (hooks: waiting for the user)."),
    "remove-session": N_("Remove sessions without ending them normally."),
    "stop-runtime": N_("Stop the runtime (refuses while sessions are active unless --force)."),
}
COMMANDS = tuple(_COMMAND_OPTIONS)
HELP_TOKENS = frozenset({"--help", "-h", "/?"})
_NAME_TO_KEY = {name: key for key, (names, _) in OPTION_HELP.items() for name in names}


def options_of(command: str) -> tuple[str, ...]:
    return _COMMAND_OPTIONS[command]


def _(message: str) -> str:
    """``message`` in the user's language (issue 38.2). Called only on the way to an error or a printed line:
    ``lidguard.l10n`` (and gettext, for another language) is imported then, never on a hook's path."""
    from ..l10n import _ as translate

    return translate(message)


# -- parsing ---------------------------------------------------------------------------------------
def _parse(command: str, arguments: list[str]) -> dict[str, str | bool]:
    allowed = _COMMAND_OPTIONS[command]
    values: dict[str, str | bool] = {}
    index = 0
    while index < len(arguments):
        token = arguments[index]
        index += 1
        if not token.startswith("--"):
            raise CliError(_("Unexpected argument: {argument}").format(argument=_shown(token)))
        name, has_value, value = token[2:].partition("=")
        if not name:
            raise CliError(_("An option name is required after --."))
        key = _NAME_TO_KEY.get("--" + name.lower())
        if key is None or key not in allowed:
            raise CliError(_("Unknown option --{option} for {command} (see `lidguard help {command}`).").format(
                option=_shown(name), command=command))
        if not has_value and index < len(arguments) and not arguments[index].startswith("--"):
            value, has_value = arguments[index], "="
            index += 1
        if key in FLAGS:
            values[key] = _boolean(key, value) if has_value else True
        elif not has_value:
            raise CliError(_("The --{option} option requires a value.").format(option=name.lower()))
        else:
            values[key] = value
    return values


def _boolean(key: str, value: str) -> bool:
    word = value.strip().lower()
    if word in ("true", "1", "yes", "y", "on"):
        return True
    if word in ("false", "0", "no", "n", "off"):
        return False
    raise CliError(_("The --{option} option must be true or false.").format(option=key))


def _shown(text: str, limit: int = 64) -> str:
    """User text inside an error line: escaped, valid Unicode, bounded."""
    text = escape_control(safe_text(text))
    return text if len(text) <= limit else text[:limit] + "..."


def safe_text(text: str) -> str:
    """Text that encodes as UTF-8: bytes that were not UTF-8 (surrogate escapes) shown as ``\\xff``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(
            (f"\\x{ord(char) - 0xDC00:02x}" if "\udc80" <= char <= "\udcff" else f"\\u{ord(char):04x}")
            if "\ud800" <= char <= "\udfff" else char
            for char in text
        )
    return text


def _bounded(text: str, limit: int, what: str) -> str:
    if len(text) > limit:
        raise CliError(_("The {what} must be at most {limit} characters.").format(what=what, limit=limit))
    return text


# -- session fields --------------------------------------------------------------------------------
def _provider(values: dict[str, Any]) -> AgentProvider:
    text = str(values.get("provider") or "").strip()
    if not text:
        raise CliError(_("A provider is required. Use {choices}.").format(choices=PROVIDER_CHOICES_TEXT))
    provider = parse_provider(text)
    if provider is None:
        raise CliError(_("Unknown provider: {provider}. Use {choices}.").format(provider=_shown(text),
                                                                         choices=PROVIDER_CHOICES_TEXT))
    return provider


def _watched_process(values: dict[str, Any], provider: AgentProvider) -> int:
    text = str(values.get("parent_pid") or "").strip()
    if not text:
        return 0
    if text.lower() == "auto":
        if provider in _NO_AGENT_PROCESS:
            return _caller()
        return _agent_from_own_ancestry(provider)
    if not (text.isascii() and text.isdigit() and len(text) <= 10 and int(text) <= MAX_PROCESS_IDENTIFIER):
        raise CliError(_("The watched process identifier must be a non-negative integer of at most {limit}.").format(
            limit=MAX_PROCESS_IDENTIFIER))
    pid = int(text)
    if pid:
        from .. import proctree

        if not proctree.is_process_alive(pid):
            raise CliError(_("No process {pid} is running: --parent-pid names a running process whose exit ends the "
                             "session (or 'auto').").format(pid=pid))
    return pid


# No agent CLI to look for: `auto` is the process that ran lidguard (the script or shell).
_NO_AGENT_PROCESS = frozenset({AgentProvider.CUSTOM, AgentProvider.UNKNOWN})


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _caller() -> int:
    pid = os.getppid()
    if pid <= 1:  # orphaned: adopted by init, nothing meaningful to watch
        raise CliError(_("The process that ran lidguard has already exited; --parent-pid auto has nothing to watch."))
    return pid


def caller_note(provider: str, watched: int, session: str | None) -> str:
    """Plain words for a custom session: what ends it."""
    given = f" --session {shlex_quote(session)}" if session else ""
    stop = f"`lidguard stop --provider {provider.lower()}{given}`"
    if not watched:
        return f"Nothing is watched: the session lasts until {stop} (or the session timeout)."
    from .. import proctree

    name = ""
    try:
        name = next((process.name for process in proctree.read_ancestry() if process.pid == watched), "")
    except Exception:  # noqa: BLE001 - the name is a courtesy
        name = ""
    shown = f"process {watched}" + (f" ({name})" if name else "")
    return f"The session ends when {shown} exits, or with {stop}."


def _agent_from_own_ancestry(provider: AgentProvider) -> int:
    """The provider's agent process above this command (0 = none found); never the working directory."""
    from .. import proctree
    from ..agents.ancestry import resolve_agent_process
    from ..platform.errors import Unsupported

    try:
        chain = proctree.read_ancestry()
    except (Unsupported, OSError) as error:
        raise CliError(_("The process ancestry cannot be read: {error}").format(error=error)) from error
    agent = resolve_agent_process(chain, agent_process_word(provider))
    return agent.pid if agent is not None else 0


def _working_directory(values: dict[str, Any]) -> str:
    given = str(values.get("working_directory") or "")
    if not given.strip():
        try:
            given = os.getcwd()
        except OSError:  # the folder was deleted under the agent: still protect
            given = os.environ.get("PWD") or os.sep
    folder = safe_text(os.path.abspath(given)).rstrip(os.sep) or os.sep
    return _bounded(folder, MAX_PATH_CHARS, "working directory")


def _fallback_session(display: str, folder: str) -> str:
    session = f"{display}:{folder}"
    if len(session) <= MAX_SESSION_IDENTIFIER_CHARS:
        return session
    import hashlib  # only for folders deeper than an identifier may be long

    digest = hashlib.sha256(session.encode("utf-8")).hexdigest()[:16]
    keep = MAX_SESSION_IDENTIFIER_CHARS - len(display) - len(digest) - 5
    return f"{display}:{digest}:...{folder[-keep:]}"


def _session_fields(values: dict[str, Any]) -> dict[str, Any]:
    provider = _provider(values)
    name = _bounded(safe_text(str(values.get("provider_name") or "").strip()), MAX_PROVIDER_NAME_CHARS,
                    "provider name")
    if provider is AgentProvider.MCP and not name:
        raise CliError(_("The --provider-name option is required when --provider mcp is used."))
    watched = _watched_process(values, provider)
    folder = _working_directory(values)
    display = provider_display(provider, name if provider is AgentProvider.MCP else "")  # the fallback id's part
    session = safe_text(str(values.get("session") or "").strip())
    session = _bounded(session, MAX_SESSION_IDENTIFIER_CHARS, "session identifier") or _fallback_session(
        display, folder)
    return {"Provider": provider.value, "ProviderName": name, "SessionIdentifier": session,
            "WatchedProcessIdentifier": watched, "WorkingDirectory": folder}


def _reason(values: dict[str, Any]) -> str:
    return _bounded(safe_text(str(values.get("reason") or "").strip()), MAX_REASON_CHARS, "reason")


# -- commands --------------------------------------------------------------------------------------
class _Session:
    """Paths resolved once; the crash-recovery step only when a lid backup was left behind."""

    def __init__(self) -> None:
        from ..platform.paths import resolve_paths

        try:
            self.paths = resolve_paths()
        except ValueError as error:  # RuntimeDirError: an unsafe folder, one line
            raise CliError(str(error)) from error

    def recover(self) -> None:
        """REFERENCE 1.1 recovery, paid for only when a backup exists AND no runtime holds the lock.

        A live runtime keeps the lid backup while it protects a session, so the backup alone is the
        common case; the full recovery (platform, restore code) loads only after a crash.
        """
        if not any(path.exists() for path in self.paths.pending_backup_files):
            return
        from ..platform.locking import held_by_another_process

        if held_by_another_process(self.paths.lock_file):
            return  # a runtime is alive and owns the backup
        from .context import CliContext

        CliContext().recover_if_no_runtime()

    def request(self, command: str, *, auto_start: bool = False, **fields: Any) -> dict[str, Any]:
        from ..ipc.client import send_request

        return send_request(self.paths.socket_file, {"Command": command, **fields}, auto_start=auto_start)


def _print_response(response: dict[str, Any]) -> int:
    if not response.get("Succeeded"):
        raise CliError(runtime_text(response.get("Message")) or _("The runtime reported a failure."))
    sys.stdout.write("\n".join(response_block(response)) + "\n")
    return 0


def _start(session: _Session, values: dict[str, Any]) -> int:
    fields = _session_fields(values)
    from ..shared.raw_settings import first_warning_for_runtime, read_settings_for_start

    paths = session.paths
    raw = read_settings_for_start(paths.settings_file)
    if raw.settings is not None:
        fields.update(HasSettings=True, Settings=raw.settings)
    elif raw.problem:
        fields["SettingsProblem"] = raw.problem  # the runtime fails closed (issue 19)
    response = session.request("start", auto_start=True, **fields)
    if raw.warning and (raw.problem is None or not response.get("Succeeded") or first_warning_for_runtime(
            paths.runtime_dir, paths.socket_file, paths.settings_file, raw.problem)):
        sys.stderr.write(_("lidguard: warning: {warning}").format(warning=escape_control(raw.warning)) + "\n")
    code = _print_response(response)
    if fields["Provider"] in (AgentProvider.CUSTOM.value, AgentProvider.UNKNOWN.value):
        note = caller_note(fields["Provider"], fields["WatchedProcessIdentifier"],
                           fields["SessionIdentifier"] if values.get("session") else None)
        sys.stdout.write(escape_control(note) + "\n")
    return code


def _stop(session: _Session, values: dict[str, Any]) -> int:
    fields = _session_fields(values)
    return _print_response(session.request("stop", IsProviderSessionEnd=False, **fields))


def _mark(command: str) -> Callable[[_Session, dict[str, Any]], int]:
    def run(session: _Session, values: dict[str, Any]) -> int:
        fields = _session_fields(values)
        return _print_response(session.request(command, SessionStateReason=_reason(values), **fields))

    return run


def _remove_session(session: _Session, values: dict[str, Any]) -> int:
    fields: dict[str, Any]
    if values.get("all"):
        for key, flag in (("session", "--session"), ("provider", "--provider"), ("provider_name", "--provider-name")):
            if values.get(key):
                raise CliError(_("The --all option cannot be combined with {option}.").format(option=flag))
        fields = {"MatchAllSessions": True}
    else:
        identifier = safe_text(str(values.get("session") or "").strip())
        if not identifier:
            raise CliError(_("A session identifier is required."))
        fields = {"SessionIdentifier": _bounded(identifier, MAX_SESSION_IDENTIFIER_CHARS, "session identifier")}
        if values.get("provider"):
            fields["Provider"] = _provider(values).value
            fields["ProviderName"] = _bounded(safe_text(str(values.get("provider_name") or "").strip()),
                                              MAX_PROVIDER_NAME_CHARS, "provider name")
    response = session.request("remove-session", **fields)
    if response.get("RuntimeUnavailable"):
        print(_("LidGuard runtime is not running. No active session was removed."))
        return 0
    return _print_response(response)


def _stop_runtime(session: _Session, values: dict[str, Any]) -> int:
    response = session.request("shutdown", Force=bool(values.get("force")))
    if response.get("RuntimeUnavailable"):
        print(_("LidGuard runtime is not running."))
        return 0
    if not response.get("Succeeded"):
        message = str(response.get("Message") or "The runtime refused to stop.")
        if not (values.get("force") and "does not answer" in message):
            raise CliError(runtime_text(message))
        from ..platform.locking import stop_lock_holder  # alive but unreachable: signal it instead

        if not stop_lock_holder(session.paths.lock_file):
            raise CliError(runtime_text(message))
        print(_("LidGuard runtime is stopping (it did not answer on its socket; it was asked to exit)."))
        return 0
    print(escape_control(runtime_text(response.get("Message") or "LidGuard runtime is stopping.")))
    _wait_until_gone(session)
    return 0


def _wait_until_gone(session: _Session, timeout: float = 5.0) -> None:
    """Until the socket stops answering, so a following ``start`` meets a new runtime."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(0.25)
        try:
            probe.connect(os.fspath(session.paths.socket_file))
        except OSError:
            return
        finally:
            probe.close()
        time.sleep(0.05)


_HANDLERS: dict[str, Callable[[_Session, dict[str, Any]], int]] = {
    "start": _start,
    "stop": _stop,
    "mark-session-active": _mark("mark-session-active"),
    "mark-session-softlocked": _mark("mark-session-softlocked"),
    "remove-session": _remove_session,
    "stop-runtime": _stop_runtime,
}


def run_fast(arguments: list[str]) -> int | None:
    """The exit code, or None when the full CLI must handle the arguments (other commands, help)."""
    if not arguments:
        return None
    command = arguments[0].lower()
    if command not in _HANDLERS or any(token.lower() in HELP_TOKENS for token in arguments[1:]):
        return None
    values = _parse(command, arguments[1:])
    session = _Session()
    session.recover()
    return _HANDLERS[command](session, values)
