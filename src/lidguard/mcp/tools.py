"""What the MCP tools do, without the SDK: plain functions returning camelCase dicts (REFERENCE 12).

A failure the model should read raises ``ToolFailure`` with one readable line (the runtime's own
message where there is one); ``servers.py`` turns it into an MCP tool error.

No view shows a webhook URL (issue 39: where data goes is the user's, and a URL may carry a token): each
is ``"set"`` or ``"not set"``, and a settings problem about one names the key without its value. The
status views carry ``sessionsOmitted`` and ``lidPolicyHeldBack`` as ``lidguard status --json`` does.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..ipc.limits import MAX_PATH_CHARS, MAX_PROVIDER_NAME_CHARS, MAX_REASON_CHARS, MAX_SESSION_IDENTIFIER_CHARS
from ..platform.locking import ConfigLockError, config_lock
from ..platform.paths import LidGuardPaths
from ..providers import PROVIDER_CHOICES_TEXT, AgentProvider, parse_provider, provider_display
from ..settings import Settings, SettingsInputError, apply_changes, headless_defaults, load_settings_report
from ..settings.model import URL_SETTINGS
from ..settings.store import save_settings
from .settings_update import changed_fields, kept_user_only, parse_updates

__all__ = ["ToolContext", "ToolFailure", "checked_text"]

Requester = Callable[..., dict[str, Any]]


class ToolFailure(Exception):
    """A tool call that failed; the message is what the model reads."""


def checked_text(value: Any, what: str, limit: int, *, required: bool = False) -> str:
    """Trimmed text within the request bounds, without lone surrogates (the runtime refuses those)."""
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise ToolFailure(f"The {what} is required.")
    if len(text) > limit:
        raise ToolFailure(f"The {what} must be at most {limit} characters.")
    if any("\ud800" <= char <= "\udfff" for char in text):
        raise ToolFailure(f"The {what} must be valid Unicode text.")
    return text


_URL_KEYS = {key[:1].lower() + key[1:]: key for key in URL_SETTINGS}  # camelCase -> settings.json key


def redacted(settings: dict[str, Any]) -> dict[str, Any]:
    """camelCase settings with every webhook URL as ``"set"`` / ``"not set"``."""
    return {key: ("set" if value else "not set") if key in _URL_KEYS else value for key, value in settings.items()}


def _redacted_problems(problems: Any) -> list[str]:
    shown = []
    for problem in problems:
        key = str(problem).partition(":")[0]
        if key in URL_SETTINGS:
            problem = f"{key}: the stored value is not an absolute http or https URL (not shown); using off."
        shown.append(str(problem))
    return shown


def _runtime_settings(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    try:
        return redacted(Settings.from_raw(data).to_camel_json())
    except ValueError:
        return None


def _omitted(response: dict[str, Any]) -> int:
    omitted = response.get("SessionsOmitted") if response.get("Succeeded") else None
    return omitted if type(omitted) is int and omitted > 0 else 0


def _lid_held_back(response: dict[str, Any]) -> str | None:
    note = response.get("LidPolicyHeldBack") if response.get("Succeeded") else None
    return note if isinstance(note, str) and note else None


def _sessions(response: dict[str, Any]) -> list[dict[str, Any]]:
    from ..shared.session_json import session_json

    sessions = response.get("Sessions") if response.get("Succeeded") else None
    result = []
    for session in sessions if isinstance(sessions, list) else []:
        item = session_json(session)
        item["providerDisplay"] = provider_display(str(session.get("Provider", "")), session.get("ProviderName"))
        result.append(item)
    return result


def _paused(response: dict[str, Any]) -> dict[str, Any] | None:
    paused = response.get("Paused") if response.get("Succeeded") else None
    if not isinstance(paused, dict):
        return None
    until = paused.get("UntilUtc")
    return {"untilUtc": until if isinstance(until, str) else None}


def _held_back(response: dict[str, Any]) -> list[str]:
    reasons = response.get("ProtectionHeldBack") if response.get("Succeeded") else None
    return [str(reason) for reason in reasons if isinstance(reason, str)] if isinstance(reasons, list) else []


class ToolContext:
    """Paths and the runtime client shared by every tool of one server process."""

    def __init__(self, paths: LidGuardPaths, request: Requester | None = None) -> None:
        self.paths = paths
        self._request = request

    def request(self, command: str, *, auto_start: bool = False, **fields: Any) -> dict[str, Any]:
        if self._request is not None:
            return self._request(command, auto_start=auto_start, **fields)
        from ..ipc.client import send_request

        return send_request(self.paths.socket_file, {"Command": command, **fields}, auto_start=auto_start)

    # -- views ------------------------------------------------------------------------------------
    def runtime_view(self, response: dict[str, Any] | None = None) -> dict[str, Any]:
        response = response if response is not None else self.request("status")
        reachable = bool(response.get("Succeeded"))
        return {
            "runtimeReachable": reachable,
            "runtimeUnavailable": bool(response.get("RuntimeUnavailable")),
            "runtimeMessage": str(response.get("Message") or ""),
            "activeSessionCount": int(response.get("ActiveSessionCount") or 0) if reachable else 0,
            "lidSwitchState": str(response.get("LidSwitchState") or "Unknown") if reachable else "Unknown",
            "visibleDisplayMonitorCount": int(response.get("VisibleDisplayMonitorCount") or 0) if reachable else 0,
            "sessions": _sessions(response),
            "sessionsOmitted": _omitted(response),  # counted by the runtime, not listed (its reply bounds)
            "lidPolicyHeldBack": _lid_held_back(response),
            "runtimePlatform": response.get("Platform") if isinstance(response.get("Platform"), str) else None,
            "platformMismatch": response.get("PlatformMismatch") is True,  # a demo never talks to real use
        }

    def snapshot(self, response: dict[str, Any] | None = None) -> dict[str, Any]:
        response = response if response is not None else self.request("status")
        report = load_settings_report(self.paths.settings_file)  # never raises, never writes
        runtime_settings = _runtime_settings(response.get("Settings")) if response.get("Succeeded") else None
        view = self.runtime_view(response)
        return {
            "settingsFilePath": str(self.paths.settings_file),
            "storedSettings": redacted(report.settings.to_camel_json()),
            "settingsFileExists": report.exists,
            "settingsFileError": report.error,
            "settingsProblems": _redacted_problems(report.problems),
            "runtimeReachable": view["runtimeReachable"],
            "runtimeUnavailable": view["runtimeUnavailable"],
            "runtimeMessage": view["runtimeMessage"],
            "hasRuntimeSettings": runtime_settings is not None,
            "runtimeSettings": runtime_settings,
            "activeSessionCount": view["activeSessionCount"],
            "lidSwitchState": view["lidSwitchState"],
            "visibleDisplayMonitorCount": view["visibleDisplayMonitorCount"],
            "sessions": view["sessions"],
            "sessionsOmitted": view["sessionsOmitted"],
            "paused": _paused(response),
            "protectionHeldBack": _held_back(response),
            "lidPolicyHeldBack": view["lidPolicyHeldBack"],
            "runtimePlatform": view["runtimePlatform"],
            "platformMismatch": view["platformMismatch"],
        }

    # -- lidguard mcp-server ----------------------------------------------------------------------
    def get_settings_status(self) -> dict[str, Any]:
        snapshot = self.snapshot()
        running = "running" if snapshot["runtimeReachable"] else "not running"
        if snapshot["platformMismatch"]:
            running = f"refused ({snapshot['runtimeMessage']})"
        summary = (f"Settings file: {snapshot['settingsFilePath']}. LidGuard runtime is {running}; "
                   f"active sessions: {snapshot['activeSessionCount']}.")
        if snapshot["settingsFileError"]:
            summary += f" Settings file error: {snapshot['settingsFileError']}"
        return {"summary": summary, "snapshot": snapshot}

    def list_sessions(self) -> dict[str, Any]:
        view = self.runtime_view()
        if view["runtimeReachable"]:
            summary = f"LidGuard runtime is running with {view['activeSessionCount']} active session(s)."
            if view["sessionsOmitted"]:
                summary += f" {view['sessionsOmitted']} of them are not listed (the reply's bounds)."
        elif view["runtimeUnavailable"]:
            summary = "LidGuard runtime is not running; there are no active sessions."
        else:
            summary = f"The LidGuard runtime did not answer: {view['runtimeMessage']}"
        return {"summary": summary, **view}

    @staticmethod
    def _updated_settings(path: Path, changes: dict[tuple[str, ...], Any],
                          reset_to_defaults: bool) -> tuple[Settings, Settings]:
        report = load_settings_report(path)
        if report.error is not None and not reset_to_defaults:
            raise ToolFailure(f"{report.error} (resetToDefaults true replaces it with the defaults)")
        previous = report.settings
        # A reset keeps what only the user sets (the webhook destinations and previews: settings_update.py).
        base = apply_changes(headless_defaults(), kept_user_only(previous)) if reset_to_defaults else previous
        try:
            updated = apply_changes(base, changes)
        except ValueError as error:
            raise ToolFailure(f"The settings are invalid: {error}") from error
        try:
            save_settings(path, updated)
        except OSError as error:
            raise ToolFailure(f"Cannot write the settings file {path}: {error.strerror or error}") from error
        return previous, updated

    def update_settings(self, given: dict[str, Any], reset_to_defaults: bool = False) -> dict[str, Any]:
        try:
            changes = parse_updates(given)
        except SettingsInputError as error:
            raise ToolFailure(str(error)) from error
        from ..installers.common import stop_hook_timeout_seconds
        from ..installers.refresh import refresh_stop_hooks

        path = self.paths.settings_file
        previous_timeout = stop_hook_timeout_seconds(path)
        try:
            with config_lock(path):  # the read-modify-write under the file's lock (REFERENCE row 42)
                previous, updated = self._updated_settings(path, changes, reset_to_defaults)
        except ConfigLockError as error:
            raise ToolFailure(str(error)) from error
        applied = changed_fields(previous, updated)
        # Issue 32.5, as `lidguard settings` does: a new Stop hook timeout rewrites the installed Stop hooks
        # (or names the command that does), so no agent kills a Stop hook still waiting for a phone reply.
        stop_hooks = refresh_stop_hooks(path, previous_timeout)
        response = self.request("settings", HasSettings=True, Settings=updated.to_file_json())
        if response.get("Succeeded"):
            runtime_line = "Runtime settings updated."
        elif response.get("RuntimeUnavailable"):
            runtime_line = "Runtime is not running; saved settings will be used on the next start."
        else:
            raise ToolFailure(f"Settings saved to {path}, but the runtime refused them: {response.get('Message')}")
        changed = ", ".join(applied) if applied else "nothing changed"
        kept = (" The user-only settings (webhook URLs, webhookPreviews) were kept: only `lidguard settings` "
                "changes them." if reset_to_defaults else "")
        hooks = (" " + " ".join(stop_hooks)) if stop_hooks else ""
        return {
            "summary": f"Saved {path} ({changed}). {runtime_line}{kept}{hooks}",
            "stopHooks": stop_hooks,
            "resetToDefaults": reset_to_defaults,
            "hadEffectiveChanges": bool(applied),
            "appliedChanges": applied,
            "previousStoredSettings": redacted(previous.to_camel_json()),
            "updatedStoredSettings": redacted(updated.to_camel_json()),
            "snapshot": self.snapshot(),
        }

    def remove_session(self, session_identifier: Any, provider: Any = None,
                       provider_name: Any = None) -> dict[str, Any]:
        identifier = checked_text(session_identifier, "session identifier", MAX_SESSION_IDENTIFIER_CHARS,
                                  required=True)
        fields: dict[str, Any] = {"SessionIdentifier": identifier}
        parsed = _provider(provider) if provider not in (None, "") else None
        name = checked_text(provider_name, "provider name", MAX_PROVIDER_NAME_CHARS)
        if parsed is not None:
            fields.update(Provider=parsed.value, ProviderName=name)
        response = self.request("remove-session", **fields)
        if response.get("RuntimeUnavailable"):
            removed: list[str] = []
            summary = "LidGuard runtime is not running. No active session was removed."
        elif not response.get("Succeeded"):
            raise ToolFailure(str(response.get("Message") or "The runtime reported a failure."))
        else:
            removed = [str(item) for item in response.get("RemovedSessions") or []]
            summary = str(response.get("Message") or f"Removed {len(removed)} session(s).")
        return {
            "summary": summary,
            "requestedSessionIdentifier": identifier,
            "hasProviderFilter": parsed is not None,
            "requestedProvider": parsed.value if parsed is not None else None,
            "hasProviderNameFilter": parsed is not None and bool(name),
            "requestedProviderName": name or None,
            "removedSessions": removed,
            "snapshot": self.snapshot(response if response.get("Succeeded") else None),
        }

    def session_command(self, command: str, provider: Any, session_identifier: Any, reason: Any,
                        provider_name: Any, *, reason_required: bool, default_reason: str = "") -> dict[str, Any]:
        parsed = _provider(provider)
        name = checked_text(provider_name, "provider name", MAX_PROVIDER_NAME_CHARS)
        if parsed is AgentProvider.MCP and not name:
            raise ToolFailure("The providerName is required when the provider is mcp.")
        identifier = checked_text(session_identifier, "session identifier", MAX_SESSION_IDENTIFIER_CHARS,
                                  required=True)
        text = checked_text(reason, "reason", MAX_REASON_CHARS, required=reason_required) or default_reason
        response = self.request(command, Provider=parsed.value, ProviderName=name, SessionIdentifier=identifier,
                                SessionStateReason=text)
        return self.session_response(command, response, parsed, name, identifier)

    def session_response(self, command: str, response: dict[str, Any], provider: AgentProvider, name: str,
                         identifier: str, *, down_is_success: bool = False, extra: str = "") -> dict[str, Any]:
        if not response.get("Succeeded") and not (down_is_success and response.get("RuntimeUnavailable")):
            raise ToolFailure(str(response.get("Message") or "The runtime reported a failure."))
        summary = str(response.get("Message") or "")
        if extra:
            summary = f"{summary} {extra}".strip()
        return {
            "summary": summary,
            "requestedCommand": command,
            "requestedSessionIdentifier": identifier,
            "sessionIdentifierToReuse": identifier,
            "requestedProvider": provider.value,
            "requestedProviderName": name or None,
            "providerDisplay": provider_display(provider, name),
            "snapshot": self.snapshot(response if response.get("Succeeded") else None),
        }

    # -- lidguard provider-mcp-server -------------------------------------------------------------
    def provider_start_session(self, provider_name: str, working_directory: Any = None) -> dict[str, Any]:
        import os

        folder = checked_text(working_directory, "working directory", MAX_PATH_CHARS)
        if not folder:
            try:
                folder = os.getcwd()
            except OSError:
                folder = os.environ.get("PWD") or os.sep
        folder = os.path.abspath(os.path.expanduser(folder)).rstrip(os.sep) or os.sep
        identifier = secrets.token_hex(4)
        fields: dict[str, Any] = {
            "Provider": AgentProvider.MCP.value, "ProviderName": provider_name, "SessionIdentifier": identifier,
            "WatchedProcessIdentifier": 0, "WorkingDirectory": checked_text(folder, "working directory",
                                                                            MAX_PATH_CHARS),
        }
        from ..shared.raw_settings import read_settings_for_start

        raw = read_settings_for_start(self.paths.settings_file)
        if raw.settings is not None:
            fields.update(HasSettings=True, Settings=raw.settings)
        response = self.request("start", auto_start=True, **fields)
        extra = (f"Reuse session id '{identifier}' verbatim with provider_set_soft_lock, provider_clear_soft_lock, "
                 "and provider_stop_session until the work is truly complete.")
        if raw.warning:
            extra += f" Warning: {raw.warning}"
        return self.session_response("start", response, AgentProvider.MCP, provider_name, identifier, extra=extra)

    def provider_command(self, command: str, provider_name: str, session_identifier: Any, reason: Any = None,
                         *, reason_required: bool = False, default_reason: str = "") -> dict[str, Any]:
        identifier = checked_text(session_identifier, "session identifier", MAX_SESSION_IDENTIFIER_CHARS,
                                  required=True)
        text = checked_text(reason, "reason", MAX_REASON_CHARS, required=reason_required) or default_reason
        fields: dict[str, Any] = {"Provider": AgentProvider.MCP.value, "ProviderName": provider_name,
                                  "SessionIdentifier": identifier}
        if command == "stop":
            fields.update(IsProviderSessionEnd=True, SessionEndReason=text)
        else:
            fields["SessionStateReason"] = text
        response = self.request(command, **fields)
        down_ok = command == "stop"
        result = self.session_response(command, response, AgentProvider.MCP, provider_name, identifier,
                                       down_is_success=down_ok)
        if down_ok and response.get("RuntimeUnavailable"):
            result["summary"] = "LidGuard runtime is not running; the session has already ended."
        return result


def _provider(value: Any) -> AgentProvider:
    text = "" if value is None else str(value).strip()
    if not text:
        raise ToolFailure(f"A provider is required. Use {PROVIDER_CHOICES_TEXT}.")
    provider = parse_provider(text)
    if provider is None:
        raise ToolFailure(f"Unknown provider: {text[:64]}. Use {PROVIDER_CHOICES_TEXT}.")
    return provider
