"""The two stdio MCP servers on the official SDK (``mcp`` 2.x: ``MCPServer``, formerly ``FastMCP``).

With ``wire.py`` (their stdio transport) the only modules that import the SDK; the two server commands
import them after ``require_sdk()``. ``serverInfo.version`` is lidguard's version.
Logs go to stderr (stdout is the protocol). Every tool returns a camelCase object as structured
content; a failure is an MCP tool error (``isError``) carrying the runtime's message.
"""

# No ``from __future__ import annotations``: the SDK reads the tool signatures, whose annotations use
# local aliases.
import functools
import inspect
import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..providers import PROVIDER_CHOICES_TEXT
from ..settings.model import NUMBER_RANGES
from . import pause_tools
from .settings_update import UPDATE_FIELDS, user_only_note
from .tools import ToolContext, ToolFailure
from .wire import serve_stdio

__all__ = ["PROVIDER_SERVER_NAME", "SERVER_NAME", "build_provider_server", "build_server", "run_stdio"]

SERVER_NAME = "lidguard"
PROVIDER_SERVER_NAME = "lidguard-provider"
_log = logging.getLogger("lidguard.mcp")
McpProviderName = Annotated[str | None, Field(description="Required with provider mcp: the MCP provider name.")]
SessionId = Annotated[str, Field(description="The session id returned by provider_start_session, verbatim.")]
_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, destructiveHint=False, openWorldHint=False)
_IDEMPOTENT = ToolAnnotations(readOnlyHint=False, idempotentHint=True, destructiveHint=False, openWorldHint=False)
_CHANGES = ToolAnnotations(readOnlyHint=False, idempotentHint=False, destructiveHint=False, openWorldHint=False)
_REMOVES = ToolAnnotations(readOnlyHint=False, idempotentHint=True, destructiveHint=True, openWorldHint=False)
SOFT_LOCK_REASONS = ("waiting_for_user_input, waiting_for_clarification, waiting_for_approval, "
                     "waiting_for_credentials or waiting_for_manual_step")


def _tool(function: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """ToolFailure -> MCP tool error with its message; anything else is logged and reported in one line."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return function(*args, **kwargs)
        except ToolFailure as error:
            _log.info("tool %s failed: %s", function.__name__, error)
            raise ToolError(str(error)) from error
        except Exception as error:
            _log.exception("tool %s crashed", function.__name__)
            raise ToolError(f"Unexpected error: {type(error).__name__}: {error}") from error

    return call


def _text(description: str) -> Any:
    return Annotated[str | None, Field(description=description)]


def _update_settings_parameters() -> list[inspect.Parameter]:
    """One optional argument per setting, typed as a person would expect (schema for the model)."""
    parameters = [inspect.Parameter("resetToDefaults", inspect.Parameter.KEYWORD_ONLY, default=False,
                                    annotation=Annotated[bool, Field(
                                        description="Start from the defaults before applying the other fields.")])]
    for name, field in UPDATE_FIELDS.items():
        key = field.json_path[-1]
        option = field.option
        if field.user_only:  # any value is refused by the tool itself, with this same command (not the schema)
            annotation: Any = Annotated[Any, Field(description=(
                f"User-only: refused here (MCP tools never change where data is sent or what is sent). "
                f"{option.help} The user sets it: {user_only_note(field)}."))]
        elif key in NUMBER_RANGES and NUMBER_RANGES[key].off_allowed:
            spec = NUMBER_RANGES[key]
            annotation = Annotated[int | str | None, Field(
                description=f"{option.help} An integer from {spec.minimum} to {spec.maximum}, or \"off\"/\"\".")]
        elif key in NUMBER_RANGES:
            spec = NUMBER_RANGES[key]
            annotation = Annotated[int | None, Field(
                description=f"{option.help} An integer from {spec.minimum} to {spec.maximum}.")]
        elif option.metavar == "true|false":
            annotation = Annotated[bool | None, Field(description=option.help)]
        else:
            extra = " \"\" or \"off\" clears it." if option.metavar == "URL" else ""
            annotation = _text(f"{option.help} ({option.metavar}).{extra}")
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=annotation))
    return parameters


def build_server(context: ToolContext) -> MCPServer:
    server: MCPServer = MCPServer(
        SERVER_NAME, instructions="Read and change LidGuard settings and sessions (keeps the laptop awake while "
                                  "coding agents work, suspends it when they are done).", log_level="WARNING",
        version=__version__)

    @server.tool(name="get_settings_status", annotations=_READ_ONLY, structured_output=True,
                 description="Show the stored LidGuard settings, the settings the runtime applies, whether the "
                             "runtime runs, the lid state and the active sessions.")
    @_tool
    def get_settings_status() -> dict[str, Any]:
        return context.get_settings_status()

    @server.tool(name="list_sessions", annotations=_READ_ONLY, structured_output=True,
                 description="List the active LidGuard sessions (provider, id, soft-lock state, working "
                             "directory, times). Never starts the runtime.")
    @_tool
    def list_sessions() -> dict[str, Any]:
        return context.list_sessions()

    def update_settings(**given: Any) -> dict[str, Any]:
        reset = bool(given.pop("resetToDefaults", False))
        return context.update_settings(given, reset_to_defaults=reset)

    wrapped = _tool(update_settings)
    wrapped.__signature__ = inspect.Signature(_update_settings_parameters(),  # type: ignore[attr-defined]
                                              return_annotation=dict[str, Any])
    server.add_tool(wrapped, name="update_settings", annotations=_IDEMPOTENT, structured_output=True,
                    description="Change one or more LidGuard settings at once (omitted fields keep their value). "
                                "Values are validated exactly like `lidguard settings`; the file is saved, then "
                                "a running runtime receives the update (it is never started for this). User-only "
                                "settings - the webhook URLs (the ask-before-sleep one too) and webhookPreviews - "
                                "are refused: the user sets them with `lidguard settings`.")

    @server.tool(name="remove_session", annotations=_REMOVES, structured_output=True,
                 description="Remove active sessions with this id (optionally only of one provider / provider "
                             "name) without ending them normally: no session-end webhook.")
    @_tool
    def remove_session(
        sessionIdentifier: Annotated[str, Field(description="The session id to remove.")],
        provider: Annotated[str | None, Field(
            description=f"Only this provider's session ({PROVIDER_CHOICES_TEXT}). Omit for all.")] = None,
        providerName: Annotated[str | None, Field(
            description="With provider mcp: only this MCP provider name's session.")] = None,
    ) -> dict[str, Any]:
        return context.remove_session(sessionIdentifier, provider, providerName)

    @server.tool(name="set_session_soft_lock", annotations=_IDEMPOTENT, structured_output=True,
                 description="Mark a session soft-locked: it waits for the user, so it no longer keeps the "
                             "laptop awake (it may suspend once every session is soft-locked or done).")
    @_tool
    def set_session_soft_lock(
        provider: Annotated[str, Field(description=f"{PROVIDER_CHOICES_TEXT}.")],
        sessionIdentifier: Annotated[str, Field(description="The session id.")],
        reason: Annotated[str, Field(description=f"Why it waits, e.g. {SOFT_LOCK_REASONS}.")],
        providerName: McpProviderName = None,
    ) -> dict[str, Any]:
        return context.session_command("mark-session-softlocked", provider, sessionIdentifier, reason,
                                       providerName, reason_required=True)

    @server.tool(name="clear_session_soft_lock", annotations=_IDEMPOTENT, structured_output=True,
                 description="Mark a soft-locked session active again (the user answered, work resumes).")
    @_tool
    def clear_session_soft_lock(
        provider: Annotated[str, Field(description=f"{PROVIDER_CHOICES_TEXT}.")],
        sessionIdentifier: Annotated[str, Field(description="The session id.")],
        reason: Annotated[str | None, Field(description="Why it resumes, e.g. resumed_after_user_reply.")] = None,
        providerName: McpProviderName = None,
    ) -> dict[str, Any]:
        return context.session_command("mark-session-active", provider, sessionIdentifier, reason, providerName,
                                       reason_required=False, default_reason="clear_session_soft_lock")

    @server.tool(name="pause", annotations=_CHANGES, structured_output=True,
                 description="Pause LidGuard: release keep-awake protection and the lid policy and hold every "
                             "suspend back until resume or the duration is up; sessions stay tracked. Starts "
                             "the runtime if needed.")
    @_tool
    def pause(duration: Annotated[str | None, Field(
            description="How long, e.g. 30m, 2h or 1h30m (at most 7d). Omit: until resume.")] = None,
              ) -> dict[str, Any]:
        return pause_tools.pause(context, duration)

    @server.tool(name="resume", annotations=_IDEMPOTENT, structured_output=True,
                 description="End a pause: protection follows the sessions again. Never starts the runtime.")
    @_tool
    def resume() -> dict[str, Any]:
        return pause_tools.resume(context)

    @server.tool(name="emergency_restore", annotations=_REMOVES, structured_output=True,
                 description="Pause until resume, clear every session and restore every pending backup (lid "
                             "policy, macOS hibernatemode). Works without a runtime and with broken settings.")
    @_tool
    def emergency_restore() -> dict[str, Any]:
        return pause_tools.emergency_restore(context)

    return server


PROVIDER_INSTRUCTIONS = """\
LidGuard keeps this computer awake (even with the lid closed) only while a session you started is active,
and lets it sleep when your work is done. It depends on you calling these tools; nothing else tells
LidGuard about your work:
1. At the start of every task, before any other action, call provider_start_session once and keep the
   returned session id.
2. Right before you stop to wait for the user (a question, an approval, credentials, a manual step),
   call provider_set_soft_lock with that id and a reason such as waiting_for_user_input.
3. As soon as work resumes after such a wait, call provider_clear_soft_lock with that id.
4. When the task is completely finished and you give your final answer, call provider_stop_session
   with that id. Not before, and not while you wait for the user.
Reuse the session id verbatim; never invent one."""


def build_provider_server(context: ToolContext, provider_name: str) -> MCPServer:
    server: MCPServer = MCPServer(PROVIDER_SERVER_NAME, instructions=PROVIDER_INSTRUCTIONS, log_level="WARNING",
                                  version=__version__)

    @server.tool(name="provider_start_session", annotations=_CHANGES, structured_output=True,
                 description="Call this FIRST, once, at the start of every task before any other action: LidGuard "
                             "keeps the computer awake while the session is active. Returns the session id "
                             "(sessionIdentifierToReuse) to pass verbatim to the other provider_* tools.")
    @_tool
    def provider_start_session(
        workingDirectory: Annotated[str | None, Field(
            description="The project folder you work in (default: the server's folder).")] = None,
    ) -> dict[str, Any]:
        return context.provider_start_session(provider_name, workingDirectory)

    @server.tool(name="provider_set_soft_lock", annotations=_IDEMPOTENT, structured_output=True,
                 description="Call right before you stop to wait for the user (a question, an approval, "
                             "credentials, a manual step): the computer may then sleep. Call "
                             "provider_clear_soft_lock when work resumes.")
    @_tool
    def provider_set_soft_lock(
        sessionIdentifier: SessionId,
        reason: Annotated[str, Field(description=f"Why you wait: {SOFT_LOCK_REASONS}.")],
    ) -> dict[str, Any]:
        return context.provider_command("mark-session-softlocked", provider_name, sessionIdentifier, reason,
                                        reason_required=True)

    @server.tool(name="provider_clear_soft_lock", annotations=_IDEMPOTENT, structured_output=True,
                 description="Call as soon as work resumes after provider_set_soft_lock (the user replied): the "
                             "computer is kept awake again.")
    @_tool
    def provider_clear_soft_lock(
        sessionIdentifier: SessionId,
        reason: Annotated[str | None, Field(description="Why work resumes, e.g. resumed_after_user_reply.")] = None,
    ) -> dict[str, Any]:
        return context.provider_command("mark-session-active", provider_name, sessionIdentifier, reason,
                                        default_reason="provider_clear_soft_lock")

    @server.tool(name="provider_stop_session", annotations=_IDEMPOTENT, structured_output=True,
                 description="Call once when the task is completely finished, right before your final answer: "
                             "ends the session normally (the computer may sleep). Not while you wait for the "
                             "user: use provider_set_soft_lock for that.")
    @_tool
    def provider_stop_session(sessionIdentifier: SessionId) -> dict[str, Any]:
        return context.provider_command("stop", provider_name, sessionIdentifier,
                                        default_reason="provider_stop_session")

    return server


def run_stdio(server: MCPServer) -> int:
    """Serves until the client closes stdin; logs (SDK and lidguard) on stderr only. A line the SDK cannot
    parse gets a JSON-RPC error instead of silence (``wire.py``)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="lidguard mcp: %(message)s")
    anyio.run(serve_stdio, server)
    return 0
