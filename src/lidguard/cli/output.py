"""Human and JSON renderings of runtime responses. Stored times are UTC; printed times are local."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ..providers import provider_display, session_label
from ..shared.log_text import escape_text
from ..shared.session_json import parse_reply_utc, session_json

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "CliError",
    "block_json",
    "escape_control",
    "countdown",
    "format_local",
    "local_time",
    "omitted_line",
    "pending_suspend_json",
    "pending_suspend_line",
    "print_json",
    "response_block",
    "runtime_text",
    "session_json",
    "session_line",
    "sessions_omitted",
]


class CliError(Exception):
    """A failure shown as one line on stderr with exit code 1."""


def escape_control(text: str) -> str:
    """One printable line: control characters (newlines, ESC, ...) shown as ``\\n``, ``\\x1b``, ...
    (``shared.log_text.escape_text``, the same escape the logs are written with)."""
    return escape_text(text)


def format_local(value: str | None) -> str:
    if not value:
        return ""
    from datetime import datetime  # lazily: most hook replies print no time

    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return moment.astimezone().isoformat(timespec="seconds")


def local_time(value: str | None, now: datetime | None = None) -> str:
    """A reply's UTC time as the user reads it: local ``HH:MM``, with the date when it is not today."""
    from datetime import datetime

    moment = parse_reply_utc(value)
    if moment is None:
        return value or ""
    local = moment.astimezone()
    today = (now.astimezone() if now is not None else datetime.now().astimezone()).date()
    return local.strftime("%H:%M") if local.date() == today else local.strftime("%Y-%m-%d %H:%M")


def runtime_text(message: Any) -> str:
    """A runtime reply's (English) message in the user's language (``l10n/runtime_messages.py``)."""
    from ..l10n.runtime_messages import runtime_text as translate  # lazily, as ``_``

    return translate(str(message or ""))


def _(message: str) -> str:
    from ..l10n import _ as translate  # lazily: ``cli/fast.py`` imports this module

    return translate(message)


def N_(message: str) -> str:  # noqa: N802 - marks a table's text for the catalogs
    return message


def countdown(value: str | None, now: datetime | None = None) -> str:
    """``in 42 s`` / ``in 9 min`` until a reply's UTC time (``now`` soon; "" when it is not a time)."""
    from datetime import datetime, timezone

    moment = parse_reply_utc(value)
    if moment is None:
        return ""
    seconds = max(0, round((moment - (now or datetime.now(timezone.utc))).total_seconds()))
    if seconds < 120:
        return _("in {seconds} s").format(seconds=seconds)
    minutes = round(seconds / 60)
    return _("in {minutes} min").format(minutes=minutes) if minutes < 120 \
        else _("in {hours} h {minutes} min").format(hours=minutes // 60, minutes=minutes % 60)


def _lease_end(session: dict[str, Any], lease_hours: Any) -> str | None:
    """When the session's lease runs out (its last renewal, else its start, + ``SessionLeaseHours``), in UTC
    ISO form."""
    from datetime import timedelta

    started = parse_reply_utc(session.get("LeaseRenewedAt")) or parse_reply_utc(session.get("StartedAt"))
    if started is None or type(lease_hours) is not int or not 0 < lease_hours <= 10_000:
        return None
    return (started + timedelta(hours=lease_hours)).isoformat()


def session_line(session: dict[str, Any], lease_hours: Any = None) -> str:
    soft_lock = "None"
    if session.get("SoftLockState") == "SoftLocked":
        soft_lock = "SoftLocked"
        if session.get("SoftLockReason"):
            soft_lock += f":{session['SoftLockReason']}"
        if session.get("SoftLockedAt"):
            soft_lock += f"@{local_time(session['SoftLockedAt'])}"
    process = session.get("WatchedProcessIdentifier") or "none"
    display = provider_display(str(session.get("Provider", "")), session.get("ProviderName"))
    return (f"- {session_label(display, str(session.get('SessionIdentifier', '')))} process={process} "
            f"softLock={soft_lock} cwd=\"{session.get('WorkingDirectory', '')}\" "
            f"started={local_time(session.get('StartedAt'))} "
            f"lastActivity={local_time(session.get('LastActivityAt'))}"
            + _work_text(session, lease_hours))


def _work_text(session: dict[str, Any], lease_hours: Any) -> str:
    """`` source=hook|rollout pendingWork=true runningTools=N leaseEnds=<local>`` (each only when it applies)."""
    text = f" source={session.get('Source')}" if session.get("Source") in ("hook", "rollout") else ""
    if session.get("PendingProviderWork") is True:
        text += " pendingWork=true"
    tools = session.get("RunningToolCount")
    if type(tools) is int and tools > 0:
        text += f" runningTools={tools}"
    lease_end = _lease_end(session, lease_hours)
    if lease_end is not None:
        text += f" leaseEnds={local_time(lease_end)}"
    return text


def sessions_omitted(response: dict[str, Any]) -> int:
    """How many sessions the reply counted and did not list (``SessionsOmitted``; 0 when none)."""
    omitted = response.get("SessionsOmitted")
    return omitted if type(omitted) is int and omitted > 0 else 0


def omitted_line(response: dict[str, Any]) -> str:
    omitted = sessions_omitted(response)
    return _("... and {count} more session(s) not listed").format(count=omitted) if omitted else ""


def response_block(response: dict[str, Any], *, with_message: bool = True) -> list[str]:
    """The standard block (REFERENCE 1.2), every line escaped (ids and folders may hold anything)."""
    lines = []
    if with_message and response.get("Message"):
        lines.append(runtime_text(response["Message"]))
    lines += [
        _("Active sessions: {count}").format(count=response.get("ActiveSessionCount", 0)),
        _("Lid state: {state}").format(state=response.get("LidSwitchState", "Unknown")),
        _("Visible display monitor count: {count}").format(count=response.get("VisibleDisplayMonitorCount", 0)),
    ]
    settings = response.get("Settings")
    lease_hours = settings.get("SessionLeaseHours") if isinstance(settings, dict) else None
    lines += [session_line(session, lease_hours) for session in response.get("Sessions", [])]
    omitted = omitted_line(response)
    if omitted:
        lines.append(omitted)
    pending = pending_suspend_line(response.get("PendingSuspend"), lid=response.get("LidSwitchState"))
    if pending:
        lines.append(pending)
    return [escape_control(line) for line in lines]


_PENDING_REASONS = {
    "Completed": N_("the last active session completed"),
    "SoftLocked": N_("every remaining session is soft-locked"),
}


def _skipped_by_open_lid(pending: Any, lid: Any) -> bool:
    """The lid opened while a suspend waits: the re-check before the next stage will skip it."""
    return isinstance(pending, dict) and lid == "Open" and pending.get("Stage") != "requesting"


_OPEN_LID_NOTE = N_(" The lid is open now, so it will be skipped unless the lid is closed again before then.")


def pending_suspend_line(pending: Any, now: datetime | None = None, *, lid: Any = None) -> str | None:
    line = _pending_suspend_text(pending, now)
    if line is not None and _skipped_by_open_lid(pending, lid):
        line += _(_OPEN_LID_NOTE)
    return line


def _pending_suspend_text(pending: Any, now: datetime | None = None) -> str | None:
    """``Suspend scheduled: Sleep at <local time> (in N s) because ...`` for a reply's PendingSuspend."""
    if not isinstance(pending, dict):
        return None
    mode = str(pending.get("Mode") or "Sleep")
    reason = str(pending.get("Reason") or "")
    because = _(_PENDING_REASONS[reason]) if reason in _PENDING_REASONS else reason or _("no session is active")
    if pending.get("Stage") == "requesting":
        return _("Suspend in progress: {mode} is being requested because {because}.").format(mode=mode, because=because)
    deadline = parse_reply_utc(pending.get("DeadlineUtc"))
    if deadline is None:
        return _("Suspend scheduled: {mode} because {because}.").format(mode=mode, because=because)
    from datetime import datetime, timezone

    seconds = max(0, round((deadline - (now or datetime.now(timezone.utc))).total_seconds()))
    at = deadline.astimezone().strftime("%H:%M:%S")
    after_sound = _(" after the post-stop sound") if pending.get("Stage") == "sound" else ""
    return _("Suspend scheduled: {mode}{after_sound} at {at} (in {seconds} s) because {because}.").format(
        mode=mode, after_sound=after_sound, at=at, seconds=seconds, because=because)


def pending_suspend_json(pending: Any, *, lid: Any = None) -> dict[str, Any] | None:
    """camelCase for ``status --json``."""
    if not isinstance(pending, dict):
        return None
    return {"mode": pending.get("Mode"), "reason": pending.get("Reason"), "stage": pending.get("Stage"),
            "deadlineUtc": pending.get("DeadlineUtc"), "skippedBecauseLidOpen": _skipped_by_open_lid(pending, lid)}


_LIST_KEYS = frozenset({"commandCheck", "warning", "note", "backup"})


def _json_value(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    if text.isascii() and text.isdigit() and len(text) < 16:
        return int(text)
    return text


# One-word keys of the status blocks; any other one-word key is a hook event name (``Stop``, ``chat.message``).
_FIELD_WORDS = frozenset({"Provider", "Status", "Installed", "Config", "Executable", "Command", "Message",
                          "Transport", "Args", "Url", "CLI", "Warning", "Note", "Backup", "Changed"})


def block_json(lines: list[str]) -> dict[str, Any]:
    """A ``Key: value`` status block as one object: ``Config exists: True`` -> ``"configExists": true``;
    hook event lines (``Stop: Installed``) go to ``"events"`` under their own name; title lines
    (``Hook installation:``) are left out."""
    result: dict[str, Any] = {}
    events: dict[str, Any] = {}
    for line in lines:
        text = line.strip()
        if text.endswith(":") and line[:1].isspace():  # an indented field with an empty value
            text += " "
        key, separator, value = text.partition(": ")
        if not separator or not key:
            continue
        words = key.replace("-", " ").split()
        if len(words) == 1 and key not in _FIELD_WORDS:
            events[key] = _json_value(value)
            continue
        name = words[0].lower() + "".join(word[:1].upper() + word[1:] for word in words[1:])
        if name in _LIST_KEYS:
            result.setdefault(name, []).append(_json_value(value))
        else:
            result[name] = _json_value(value.strip())
    if events:
        result["events"] = events
    return result


def print_json(value: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def ask_yes_no(question: str, *, assume_yes: bool, default: bool, command: str) -> bool:
    """One question on stdin (``--yes`` answers yes, shown); input that ended is a one-line error
    naming ``lidguard <command> --yes``."""
    import sys

    hint = "[Y/n]" if default else "[y/N]"
    if assume_yes:
        print(_("{question} {hint} yes (--yes)").format(question=question, hint=hint))
        return True
    sys.stdout.write(_("{question} {hint} ").format(question=question, hint=hint))
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        print()
        raise CliError(_("No answer (input ended); run `lidguard {command} --yes` to accept every step.").format(
            command=command))
    answer = line.strip().lower()
    return default if not answer else answer in ("y", "yes")
