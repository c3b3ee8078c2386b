"""`lidguard <agent>-hook`: one agent hook event in, the runtime told, the agent's output out.

The provider-free engine: everything about one agent - its event names, payload mapping, output shapes,
ancestry rules - comes from its module in :mod:`lidguard.agents` (only that agent's module is imported).

The hot path: stdlib only, dispatched by ``lidguard.cli.main`` before any parser is built. Every run
exits 0 (REFERENCE 5 "hooks always exit 0"): garbage stdin, unknown events, a dead or hung runtime
(short, bounded waits) and internal errors print nothing and leave a line in the provider's hook event
log. Start events (the turn's prompt) launch the runtime; any other event launches it only when the
runtime's session journal holds something (a runtime that died left sessions to bring back). Decision
events ask ``status`` and answer only when the lid is closed and no display is visible.

Everything the run touches comes through :class:`HookEnvironment`, so tests drive the entry function
in-process with a stub runtime (fuzzing) and real processes use the defaults.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..agents import AGENTS, IGNORE, agent_for_hook_command
from ..agents import agent as agent_module
from ..ipc.limits import (
    MAX_ASSISTANT_MESSAGE_CHARS,
    MAX_PATH_CHARS,
    MAX_PROCESS_IDENTIFIER,
    MAX_PROMPT_PREVIEW_CHARS,
    MAX_REASON_CHARS,
    SESSION_JOURNAL_FILE_NAME,
)
from .eventlog import HookEventLog, hook_log_file, hook_log_file_beside_refused_runtime
from .payload import Payload, PayloadError, bounded, fallback_session, parse_payload, read_stdin

TYPE_CHECKING = False  # typing costs the hook path ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Mapping
    from types import ModuleType
    from typing import Any, BinaryIO, TextIO

    from ..agents import Action
    from ..platform.paths import LidGuardPaths
    from ..shared.raw_settings import RawSettings

    Send = Callable[[dict[str, Any], bool, float], dict[str, Any]]
    # One request the engine asks its driver to send: (message, auto_start, reply_timeout).
    HookRequest = tuple[dict[str, Any], bool, float]
    Steps = Generator[HookRequest, dict[str, Any], Any]

__all__ = [
    "ASK_REASON",
    "HOOK_BUDGET_SECONDS",
    "REPLY_TIMEOUT_SECONDS",
    "HookEnvironment",
    "hook_output_bytes",
    "hook_steps",
    "run_hook",
    "run_hook_command",
]

ASK_REASON = "closed_lid_permission_request_ask"
# A hook must never hold the agent up for long: activity, soft-lock, stop and status get a short reply
# window (plus the client's 0.75 s connect window); a start may launch the runtime (client: 5-30 s).
REPLY_TIMEOUT_SECONDS = 2.0
START_REPLY_TIMEOUT_SECONDS = 10.0
# One request in all (connect, a held lock, the reply): a runtime launched for a start gets it again once up.
REQUEST_BUDGET_SECONDS = 2.5
HOOK_BUDGET_SECONDS = 2 * (0.75 + REPLY_TIMEOUT_SECONDS) + 1.0  # a decision: status + soft-lock, plus slack
DECISION_SETTING = "ClosedLidPermissionRequestDecision"


class HookEnvironment:
    """Paths, the runtime channel, the ancestry reader and the settings reader of one hook run."""

    def __init__(self, paths: LidGuardPaths | None = None, *, send: Send | None = None,
                 agent_process: Callable[[str], int] | None = None,
                 settings: Callable[[], RawSettings] | None = None, recover: bool = True,
                 agent_arguments: Callable[[str], tuple[str, ...]] | None = None,
                 environ: Mapping[str, str] | None = None, cwd: str | None = None,
                 ancestry_pid: int | None = None) -> None:
        self._paths = paths
        # The hook's context: its environment, its working folder (None: this process's) and the process
        # whose ancestors are the agent's (None: this process; the runtime answering the native client
        # passes the client's pid, its peer).
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.cwd = cwd
        self.ancestry_pid = ancestry_pid
        self._send = send
        self._agent_process = agent_process
        self._agent_arguments = agent_arguments
        self._settings = settings
        self._recover = recover
        self._raw: RawSettings | None = None  # the file read once per hook run (real processes only)

    @property
    def paths(self) -> LidGuardPaths:
        if self._paths is None:
            from ..platform.paths import resolve_paths

            self._paths = resolve_paths()
        return self._paths

    def send(self, message: dict[str, Any], *, auto_start: bool = False,
             reply_timeout: float = REPLY_TIMEOUT_SECONDS) -> dict[str, Any]:
        if self._send is not None:
            return self._send(message, auto_start, reply_timeout)
        from ..ipc.client import send_request

        paths = self.paths
        # Every request decides within REQUEST_BUDGET_SECONDS whatever the runtime does (one that holds its
        # lock and never gets ready, or is stopped); only a blocking Stop's follow-up wait is longer.
        budget = None if reply_timeout > START_REPLY_TIMEOUT_SECONDS else REQUEST_BUDGET_SECONDS
        return send_request(paths.socket_file_str, message, auto_start=auto_start, reply_timeout=reply_timeout,
                            lock_file=paths.lock_file_str, budget=budget)

    def sessions_to_bring_back(self) -> bool:
        """The runtime's journal holds something (a runtime that died left sessions behind): then any
        hook event may launch the runtime, which replays the journal before it answers. One ``stat``."""
        if self._send is not None:
            return False
        try:
            return os.stat(os.path.join(self.paths.data_dir_str, SESSION_JOURNAL_FILE_NAME)).st_size > 0
        except (OSError, ValueError):
            return False

    def launch_if_dead(self) -> None:
        """Launches the runtime at once when no runtime holds the lock (a crashed one left sessions):
        the client would otherwise spend its whole connect window on a socket nobody serves."""
        if self._send is not None:
            return
        from ..platform.locking import held_by_another_process

        if not held_by_another_process(self.paths.lock_file_str):
            from ..ipc.client import launch_runtime

            launch_runtime()

    def agent_process(self, provider: str, hint: int = 0) -> int:
        """The agent above this hook (0: none). ``hint`` (the OpenCode plugin's ``pid``) wins only when it
        is one of this hook's own ancestors: a payload never makes the runtime watch a stranger."""
        if self._agent_process is not None:
            return self._agent_process(provider)
        from .. import proctree
        from ..agents.ancestry import resolve_agent_process

        chain = proctree.read_ancestry(self.ancestry_pid)
        if hint > 0 and any(process.pid == hint for process in chain[1:]):
            return hint
        agent = resolve_agent_process(chain, provider)
        return agent.pid if agent is not None else 0

    def agent_arguments(self, provider: str) -> tuple[str, ...]:
        """The command line of the agent above this hook; () when there is none."""
        if self._agent_arguments is not None:
            return self._agent_arguments(provider)
        from .. import proctree
        from ..agents.ancestry import resolve_agent_process

        agent = resolve_agent_process(proctree.read_ancestry(self.ancestry_pid), provider)
        return tuple(agent.cmdline) if agent is not None else ()

    def raw_settings(self) -> RawSettings:
        if self._settings is not None:
            return self._settings()
        if self._raw is None:
            from ..shared.raw_settings import read_settings_for_start

            self._raw = read_settings_for_start(self.paths.settings_file_str)
        return self._raw

    def log_full_text(self) -> bool:
        """``LogFullText`` (default off): prompt and reply text go into the hook event log (issue 19)."""
        try:
            raw = self.raw_settings().settings
        except Exception:  # noqa: BLE001 - unsure: the private default
            return False
        return raw is not None and raw.get("LogFullText") is True

    def recover(self) -> None:
        """REFERENCE 1.1 crash recovery, paid for only when a lid backup exists and no runtime runs."""
        if not self._recover or not os.path.exists(self.paths.lid_backup_file_str):
            return
        from ..platform.locking import InstanceLock

        lock = InstanceLock(self.paths.lock_file_str)
        if not lock.try_acquire():
            return  # a live runtime owns the backup
        lock.release()
        from ..platform import load_platform
        from ..shared.recovery import recover_if_no_runtime

        recover_if_no_runtime(self.paths, load_platform)


class _Run:
    """One hook event: the fields every request carries, the log, the output."""

    def __init__(self, provider: str, event: str, payload: Payload, environment: HookEnvironment,
                 log: HookEventLog, module: ModuleType) -> None:
        self.provider = provider
        self.module = module  # the agent's module: its outputs and rules
        # The wire value (plain text: the enum costs the hook path ~0.2 ms; no MCP name: never an MCP session).
        self.agent = AGENTS[provider]
        self.provider_name = ""  # a Custom provider's name (another agent running this hook, issue 35.4)
        self.event = event
        self.payload = payload
        self.environment = environment
        self.log = log
        self.folder = payload.working_directory(environment.cwd, environment.environ)
        keys = getattr(module, "SESSION_KEYS", ("session_id", "sessionId", "sessionID"))  # Cursor: conversation_id
        session = payload.session_identifier(*keys)
        self.session = session or fallback_session(self.agent, self.folder)
        transcript = payload.text("transcript_path", "transcriptPath")
        self.transcript = transcript if len(transcript) <= MAX_PATH_CHARS else ""
        self.output: dict[str, Any] | None = None
        self.reachable = False
        log.event, log.session, log.folder = event, self.session, self.folder

    def fields(self) -> dict[str, Any]:
        return {"Provider": self.agent, "ProviderName": self.provider_name, "SessionIdentifier": self.session,
                "WorkingDirectory": self.folder}

    def request(self, command: str, fields: dict[str, Any], *, auto_start: bool = False,
                reply_timeout: float = REPLY_TIMEOUT_SECONDS) -> Steps:
        if not auto_start and self.environment.sessions_to_bring_back():
            auto_start = True
            self.environment.launch_if_dead()
        # Replay-safe events: a resent request is applied once; the time lets the runtime refuse the future.
        # ReplySessions false: the reply counts the sessions instead of listing them (never read here).
        message = {"Command": command, **fields, "RequestId": os.urandom(12).hex(),
                   "SentAtUnixMilliseconds": time.time_ns() // 1_000_000, "ReplySessions": False}
        reply = yield message, auto_start, reply_timeout  # the driver sends it (hook process or runtime)
        if not isinstance(reply, dict):
            reply = {"Succeeded": False, "Message": "The runtime sent no reply object."}
        details = [("command", command)]
        if fields.get("TranscriptPath"):
            details.append(("transcriptPath", str(fields["TranscriptPath"])))
        sessions = reply.get("ActiveSessionCount")
        details += [("succeeded", _bool(reply.get("Succeeded"))),
                    ("runtimeUnavailable", _bool(reply.get("RuntimeUnavailable"))),
                    ("activeSessions", str(sessions) if type(sessions) is int else ""),
                    ("message", str(reply.get("Message") or ""))]
        self.log.write("runtime-result", details)
        return reply

    # -- actions -----------------------------------------------------------------------------------
    def start(self, action: Action) -> Steps:
        fields = self.fields()
        raw = self.environment.raw_settings()
        if raw.warning:
            self.log.message(raw.warning)
        if raw.settings is not None:
            fields.update(HasSettings=True, Settings=raw.settings)
        elif raw.problem:
            fields["SettingsProblem"] = raw.problem  # the runtime fails closed (issue 19)
        watch = not (raw.settings is not None and raw.settings.get("WatchParentProcess") is False)
        fields["WatchedProcessIdentifier"] = self._watched_process() if watch else 0
        fields["TranscriptPath"] = self.transcript
        fields["InputPromptPreview"] = bounded(action.prompt, MAX_PROMPT_PREVIEW_CHARS)
        if action.turn_id:
            fields["TurnId"] = action.turn_id
        if action.if_not_running:  # a running session's activity (a runtime before IfNotRunning starts it again)
            fields.update(IfNotRunning=True, SessionStateReason=bounded(action.reason, MAX_REASON_CHARS))
        yield from self.request("start", fields, auto_start=True, reply_timeout=START_REPLY_TIMEOUT_SECONDS)

    def _watched_process(self) -> int:
        try:
            key = getattr(self.module, "PID_HINT_KEY", "")
            hint = self.payload.data.get(key) if key else None
            hint = hint if type(hint) is int and 0 < hint <= MAX_PROCESS_IDENTIFIER else 0
            return int(self.environment.agent_process(self.provider, hint))
        except Exception as error:  # noqa: BLE001 - no ancestry: process=none, still protect
            self.log.message(f"The agent process could not be resolved from the hook ancestry: "
                             f"{type(error).__name__}: {error}")
            return 0

    def mark(self, command: str, reason: str, action: Action | None = None) -> Steps:
        fields = {**self.fields(), "SessionStateReason": bounded(reason, MAX_REASON_CHARS)}
        if action is not None:
            if action.turn_id:
                fields["TurnId"] = action.turn_id
            if action.tool_call_id and action.tool_state:
                fields.update(ToolCallId=action.tool_call_id, ToolCallState=action.tool_state)
                if action.background:  # a subagent or task: may outlive the turn (issue 35.3)
                    fields["BackgroundWork"] = True
        return (yield from self.request(command, fields))

    def stop(self, action: Action) -> Steps:
        fields = {**self.fields(), "IsProviderSessionEnd": action.provider_session_end,
                  "SessionEndReason": bounded(action.reason, MAX_REASON_CHARS),
                  "TranscriptPath": self.transcript, "StopHookActive": action.stop_hook_active,
                  "LastAssistantMessage": bounded(action.last_assistant_message, MAX_ASSISTANT_MESSAGE_CHARS)}
        if action.turn_id:
            fields["TurnId"] = action.turn_id
        if action.turn_end:  # the turn ends, the agent stays: deferred while its background work runs
            fields["IsTurnEnd"] = True
        if action.pending_work:  # a deferred stop: background tasks still run (Claude background_tasks)
            fields["HasPendingProviderWork"] = True
            self.log.message(f"Deferred stop: {action.pending_work} background task(s) still running.")
        wait = self._follow_up_wait() if action.blocking else None
        if wait is None:
            yield from self.request("stop", fields)
            return
        # Ask-before-sleep: the runtime holds this connection until the user replies, cancels, the
        # window expires or the wait ends otherwise; the agent waits on this hook meanwhile.
        self.log.message(f"Waiting up to {int(wait)} s for a closed-lid follow-up reply.")
        reply = yield from self.request("stop", {**fields, "WaitForFollowUp": True, "FollowUpWaitSeconds": int(wait)},
                             reply_timeout=wait)
        from .followup import continuation_output

        self.output = continuation_output(reply)
        shape = getattr(self.module, "continuation_output", None)  # an agent's own continuation shape
        if self.output is not None and shape is not None:
            self.output = shape(self.output["reason"])

    def _follow_up_wait(self) -> float | None:
        try:
            raw = self.environment.raw_settings()
        except Exception as error:  # noqa: BLE001 - unreadable settings: the quick stop of old
            self.log.message(f"The settings could not be read: {type(error).__name__}: {error}")
            return None
        from .followup import follow_up_wait_seconds  # a blocking Stop only, like the outputs below

        return follow_up_wait_seconds(raw.settings)

    def closed_lid(self) -> Steps:
        """(True, settings) when the lid is closed and no suspend-blocking display remains.

        The runtime's ``ClosedLidSuspendEligible`` is the suspend path's own rule (internal panels do not
        count: on Linux an eDP connector stays "connected" with the lid closed); a runtime without it
        gets the original tool's rule (REFERENCE 5: lid Closed and ``VisibleDisplayMonitorCount <= 0``).
        """
        reply = yield from self.request("status", {})
        self.reachable = reply.get("RuntimeUnavailable") is not True
        if reply.get("Succeeded") is not True or reply.get("LidSwitchState") != "Closed":
            return False, {}
        eligible = reply.get("ClosedLidSuspendEligible")
        if isinstance(eligible, bool):
            if not eligible:
                return False, {}
        else:
            displays = reply.get("VisibleDisplayMonitorCount")
            if type(displays) is not int or displays > 0:
                return False, {}
        settings = reply.get("Settings")
        return True, settings if isinstance(settings, dict) else {}

    def permission(self, action: Action) -> Steps:
        closed, settings = yield from self.closed_lid()
        if not closed:
            if action.softlock_without_decision and self.reachable:
                yield from self.mark("mark-session-softlocked", action.softlock_without_decision)
            elif action.deny_only and self.reachable:
                yield from self.mark("mark-session-active", action.reason, action)
            return
        decision = _decision(settings.get(DECISION_SETTING))
        self.log.message(f"Closed lid: {DECISION_SETTING} is {decision}.")
        if action.deny_only and (decision != "Deny" or self._approved_without_asking(action)):
            # Nothing can approve here (Gemini BeforeTool): the tool runs, or the CLI's own dialog asks
            # (its Notification soft-locks the session); a tool the agent runs unasked is never denied.
            yield from self.mark("mark-session-active", action.reason, action)
            return
        if decision == "Ask":
            yield from self.mark("mark-session-softlocked", ASK_REASON)
            return
        self.output = self.module.permission_output(decision)

    def run(self, action: Action) -> Steps:
        kind = action.kind
        if kind == "ignore":
            return
        try:
            self.environment.recover()
        except Exception as error:  # noqa: BLE001 - a failed recovery must not cost the session its protection
            self.log.message(f"Crash recovery failed: {type(error).__name__}: {error}")
        if kind == "start":
            yield from self.start(action)
        elif kind == "activity":
            yield from self.mark("mark-session-active", action.reason, action)
        elif kind == "softlock":
            yield from self.mark("mark-session-softlocked", action.reason, action)
        elif kind == "stop":
            yield from self.stop(action)
        elif kind == "permission":
            yield from self.permission(action)
        elif kind in ("elicitation", "ask_user") and (yield from self.closed_lid())[0]:
            self.output = self.module.elicitation_output() if kind == "elicitation" else self.module.ask_user_output()

    def _approved_without_asking(self, action: Action) -> bool:
        approved = getattr(self.module, "approved_without_asking", None)
        if approved is None:
            return False
        try:
            arguments = self.environment.agent_arguments(self.provider)
        except Exception as error:  # noqa: BLE001 - no ancestry: decide as if the agent asks
            self.log.message(f"The agent's command line could not be read: {type(error).__name__}: {error}")
            return False
        if approved(arguments, action.tool):
            self.log.message(f"The agent runs {action.tool} without asking (its command line); no decision.")
            return True
        return False


def _bool(value: Any) -> str:
    return "true" if value is True else "false"


def _decision(value: Any) -> str:
    """Allow/Deny/Ask from the runtime's settings; anything else is the default, Deny."""
    word = value.strip().lower() if isinstance(value, str) else ""
    return {"allow": "Allow", "ask": "Ask"}.get(word, "Deny")


EVENT_KEYS = ("hook_event_name", "hookEventName", "hookName", "event")


def event_name(option: str, payload: Payload | None, keys: tuple[str, ...] = EVENT_KEYS) -> str:
    """The event: ``--event`` for agents that take it, else the payload's own name under ``keys`` (an agent
    module's optional ``EVENT_KEYS``: OpenHands names it ``event_type``)."""
    if option:
        return option
    if payload is None:
        return ""
    return payload.text(*keys)


def text_summary(text: str) -> str:
    """What the hook event log keeps of a prompt or reply by default: its length and a short hash (CRC-32:
    enough to tell two texts apart or match one the user still has; no hashlib, whose OpenSSL load costs
    a hook milliseconds)."""
    from binascii import crc32

    return f"<{len(text)} chars crc32:{crc32(text.encode('utf-8', 'surrogatepass')):08x}>"


def log_details(module: ModuleType, payload: Payload, action: Action,
                full_text: bool = False) -> list[tuple[str, str]]:
    """REFERENCE 3.3: the agent's ``LOG_DETAILS`` keys of the "received" line, and the prompt."""
    details: list[tuple[str, str]] = []
    for key, names in module.LOG_DETAILS:
        value = payload.data.get(names[0]) if len(names) == 1 else None
        if isinstance(value, bool):
            details.append((key, "true" if value else "false"))
        else:
            details.append((key, payload.text(*names)))
    if action.kind == "start":
        prompt = action.prompt
        details.append(("prompt", prompt if full_text or not prompt else text_summary(prompt)))
    return details


def _foreign_caller(module: ModuleType, payload: Payload, log: HookEventLog,
                    environment: HookEnvironment) -> tuple[str, str, bool, str] | None:
    """The agent module's ``foreign_caller`` (optional): another agent running this hook; None on any error."""
    detect = getattr(module, "foreign_caller", None)
    if detect is None:
        return None
    try:
        pid = environment.ancestry_pid
        ancestry = module.caller_ancestry if pid is None else (lambda: module.caller_ancestry(pid))
        return detect(payload, environment.environ, ancestry)  # type: ignore[no-any-return]
    except Exception as error:  # noqa: BLE001 - undetected: the agent itself, as before
        log.message(f"The hook's caller could not be told: {type(error).__name__}: {error}")
        return None


def _event_option(arguments: list[str]) -> str:
    """``--event NAME`` or ``--event=NAME`` (case-insensitive option name, last one wins)."""
    event = ""
    for index, token in enumerate(arguments):
        name, equals, value = token.partition("=")
        if name.lower() != "--event":
            continue
        if equals:
            event = value
        elif index + 1 < len(arguments) and not arguments[index + 1].startswith("--"):
            event = arguments[index + 1]
    return event.strip()[:128]


def _map_event(module: ModuleType, event: str, payload: Payload, environment: HookEnvironment) -> Action:
    """The agent module's ``map_event``; with ``MAP_EVENT_CONTEXT = True`` it also gets the hook's context
    (``environment``: its environ, cwd and ``ancestry_pid``), which is not this process's when the runtime
    answers the native hook client (issue 36): a module must never read ``os.environ``, the cwd or its own
    ancestry for the hook's."""
    if getattr(module, "MAP_EVENT_CONTEXT", False):
        return module.map_event(event, payload, environment)  # type: ignore[no-any-return]
    return module.map_event(event, payload)  # type: ignore[no-any-return]


def run_hook(provider: str, arguments: list[str], stdin: bytes, environment: HookEnvironment | None = None,
             ) -> dict[str, Any] | None:
    """One hook event; returns the agent's output to print (None: print nothing). Never raises (but a
    KeyboardInterrupt while a request waits). The hook process's driver of :func:`hook_steps`: each request
    goes through ``environment.send``."""
    environment = environment or HookEnvironment()
    steps = hook_steps(provider, arguments, stdin, environment)
    try:
        request = steps.send(None)  # type: ignore[arg-type]
        while True:
            message, auto_start, reply_timeout = request
            try:
                reply = environment.send(message, auto_start=auto_start, reply_timeout=reply_timeout)
            except Exception as error:  # noqa: BLE001 - the engine logs it as before
                request = steps.throw(error)
            else:
                request = steps.send(reply)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def hook_steps(provider: str, arguments: list[str], stdin: bytes, environment: HookEnvironment) -> Steps:
    """The one hook engine: the payload bytes and their context (``environment``) in; yields each request
    for its driver to send (the hook process: :func:`run_hook`; the runtime answering the native hook
    client: ``runtime/hook_requests.py``), receives its reply and returns the agent's output (None: print
    nothing). Never raises."""
    log = HookEventLog(None)
    try:
        module = agent_module(provider)
        if module is None:
            return None
        option = _event_option(arguments) if getattr(module, "EVENT_OPTION", False) else ""
        try:
            log.path = hook_log_file(environment.paths.data_dir_str, provider)
        except Exception as error:  # noqa: BLE001 - no safe data folder: run without a log
            log.path = hook_log_file_beside_refused_runtime(provider)
            if log.path is not None:  # issue 39.7: a squatted socket folder is said, never silent
                log.event = option
                log.message(f"Not protected: the runtime cannot be reached: {error}")
                return None
        try:
            payload = parse_payload(stdin)
        except PayloadError as error:
            log.event = option
            log.message(f"Ignored the hook input: {error}.")
            return None
        event = event_name(option, payload, getattr(module, "EVENT_KEYS", EVENT_KEYS))
        caller = _foreign_caller(module, payload, log, environment)
        if caller is not None and caller[2]:  # that agent's own lidguard hook counts this event
            log.event = event
            log.message(f"Ignored: {caller[0]} runs this hook and has its own lidguard hook installed.")
            return None
        action = _map_event(module, event, payload, environment) if event else IGNORE
        run = _Run(provider, event, payload, environment, log, module)
        if caller is not None:  # issue 35.4: another agent loaded this agent's hooks
            run.agent, run.provider_name = caller[0], caller[1]
            run.provider = caller[3]  # whose rules find the watched process
            log.message(f"Run by {caller[1] or caller[0]}, not {module.DISPLAY}: the session is attributed to it.")
        full_text = action.kind == "start" and bool(action.prompt) and environment.log_full_text()
        log.write("received", [("action", action.kind), *log_details(module, payload, action, full_text)])
        yield from run.run(action)
        if run.output is not None:
            output = json.dumps(run.output, separators=(",", ":"))
            log.write("message", [("output", output if environment.log_full_text() else text_summary(output))])
        return run.output
    except Exception as error:  # noqa: BLE001 - a hook never fails its agent
        log.message(f"Internal error: {type(error).__name__}: {error}")
        return None


def run_hook_command(arguments: list[str], stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """The console entry for ``<agent>-hook ...`` (``arguments[0]`` is the command). Always 0."""
    provider = agent_for_hook_command(arguments[0]) if arguments else None
    if provider is None:
        return 0
    if stdin is None:
        stream = getattr(sys.stdin, "buffer", None)
        try:
            stdin = None if stream is None or stream.isatty() else stream
        except (OSError, ValueError):
            stdin = None
    try:
        output = run_hook(provider, arguments[1:], read_stdin(stdin))
    except KeyboardInterrupt:  # interrupted (e.g. while a Stop waits for a reply): quietly, no output
        return 0
    if output is not None:
        out = stdout or sys.stdout
        try:
            out.write(hook_output_bytes(output).decode("ascii"))
            out.flush()
        except (OSError, ValueError):
            pass
    return 0


def hook_output_bytes(output: dict[str, Any] | None) -> bytes:
    """What the hook prints for ``output``: one ASCII JSON line, or nothing (the native client prints
    the runtime's copy of these bytes)."""
    if output is None:
        return b""
    return (json.dumps(output, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
