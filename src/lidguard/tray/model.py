"""The tray's pure part: a status reply (or none) in, what the indicator shows and offers out.

No toolkit, no IPC, no clock of its own: ``tray_view(status, now=..., settings_error=...)`` turns the
same body a ``status`` reply carries (``runtime/responses.py``: ``Sessions``, ``Settings``,
``LidSwitchState``, ``PendingSuspend``, ``Paused``, ``ProtectionHeldBack``) into a ``TrayView``;
``menu_entries(view)`` lists the menu with what is enabled, checked and the click (default) action.
``None`` as the status means the runtime is unreachable.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..l10n import N_, _
from ..providers import provider_display
from ..shared.session_json import parse_reply_utc

__all__ = ["MAX_MENU_SESSIONS", "MenuEntry", "SessionLine", "TrayState", "TrayView", "menu_entries",
           "tray_view"]

MAX_MENU_SESSIONS = 10  # the menu lists at most this many sessions, then "... and N more"
_MAX_TEXT = 60  # one menu line's folder or name, shortened in the middle past this


class TrayState(enum.Enum):
    IDLE = "idle"  # no session: the runtime up with nothing to do, or not running (it exits when idle)
    PROTECTING = "protecting"  # sessions keep the machine awake
    # ... and closing the lid will not suspend it either (ChangeLidAction): says nothing of the lid's position
    PROTECTING_THROUGH_LID_CLOSE = "protecting-through-lid-close"
    SUSPEND_PENDING = "suspend-pending"  # the post-stop countdown runs
    PAUSED = "paused"
    HELD_BACK = "held-back"  # sessions want protection, something holds it back (battery floor, ...)
    ERROR = "error"  # runtime unreachable, or a broken settings file


@dataclass(frozen=True)
class SessionLine:
    provider: str
    folder: str
    state: str  # "active" / "waiting for the user" / "running tools"
    since: str  # local time the session started, HH:MM
    session_id: str = ""  # the session identifier, shown (a prefix) when another line has the same folder


@dataclass(frozen=True)
class TrayView:
    state: TrayState
    tooltip: str
    session_count: int
    sessions: tuple[SessionLine, ...]
    sessions_omitted: int
    reachable: bool  # a status reply came
    paused: bool
    change_lid_action: bool | None  # None: unknown (no runtime)
    suspend_mode: str | None  # "Sleep" / "Hibernate" / None
    readiness: str = ""  # "Safe to close the lid: yes - ..." / "... not yet - ..." (shared/readiness.py)

    @property
    def title(self) -> str:
        """What the indicator shows on hover: the state, then the lid answer on its own line."""
        return f"{self.tooltip}\n{self.readiness}" if self.readiness else self.tooltip


@dataclass(frozen=True)
class MenuEntry:
    key: str  # "session", "pause-30m", "pause-2h", "resume", "sleep-now", "change-lid-action",
    # "suspend-mode", "open-status", "quit", "separator"
    label: str
    enabled: bool = True
    checked: bool | None = None  # None: not a toggle
    default: bool = False  # the click on the icon (a backend without a menu runs only this one)


def _short(text: str, limit: int = _MAX_TEXT) -> str:
    text = "".join(character if character.isprintable() else "?" for character in text)
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


def _clock(value: Any) -> str:
    moment = parse_reply_utc(value)
    return moment.astimezone().strftime("%H:%M") if moment is not None else "?"


def _countdown(deadline: Any, now: datetime) -> str:
    moment = parse_reply_utc(deadline)
    if moment is None:
        return _("soon")
    seconds = max(0, int((moment - now).total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return _("in {minutes}:{seconds}").format(minutes=minutes, seconds=f"{seconds:02d}") if minutes \
        else _("in {seconds} s").format(seconds=seconds)


def _session_line(session: Any) -> SessionLine | None:
    if not isinstance(session, dict):
        return None
    provider = provider_display(str(session.get("Provider", "")), session.get("ProviderName") or "")
    if session.get("SoftLockState") == "SoftLocked":
        state = N_("waiting for the user")
    elif type(session.get("RunningToolCount")) is int and session["RunningToolCount"] > 0:
        state = N_("running tools")
    else:
        state = N_("active")
    return SessionLine(provider=_short(provider, 30), folder=_short(str(session.get("WorkingDirectory", ""))),
                       state=state, since=_clock(session.get("StartedAt")),
                       session_id=_short(str(session.get("SessionIdentifier") or ""), 200))


def _toggles(settings: dict[str, Any]) -> tuple[bool | None, str | None]:
    lid_action = settings.get("ChangeLidAction") if isinstance(settings.get("ChangeLidAction"), bool) else None
    mode = settings.get("SuspendMode") if settings.get("SuspendMode") in ("Sleep", "Hibernate") else None
    return lid_action, mode


def _sessions_word(count: int) -> str:
    return _("1 session") if count == 1 else _("{count} sessions").format(count=count)


def tray_view(status: dict[str, Any] | None, *, now: datetime, settings_error: str | None = None,
              runtime_running: bool = False, stored_settings: dict[str, Any] | None = None) -> TrayView:
    """The view of ``_state_view`` with the "Safe to close the lid?" answer of the same reply."""
    from dataclasses import replace

    from ..shared.readiness import readiness

    view = _state_view(status, now=now, settings_error=settings_error, runtime_running=runtime_running,
                       stored_settings=stored_settings)
    answer = readiness(status if view.reachable else ({"RuntimeNotAnswering": True} if runtime_running else None))
    return replace(view, readiness=answer.localized(_))


def _state_view(status: dict[str, Any] | None, *, now: datetime, settings_error: str | None = None,
                runtime_running: bool = False, stored_settings: dict[str, Any] | None = None) -> TrayView:
    """What the indicator shows for a status reply. ``None``: no reply; then ``runtime_running`` (its
    lock is held) tells an error (running but not answering) from the normal idle state (the runtime
    exits when it has nothing to do). ``stored_settings`` (the file) fills the toggles without a reply."""
    stored = stored_settings if isinstance(stored_settings, dict) else {}
    if status is None or status.get("RuntimeUnavailable") or not status.get("Succeeded", True):
        lid_action, mode = _toggles(stored)
        failed = status is not None and not status.get("RuntimeUnavailable")
        if settings_error is not None:
            tooltip = _("LidGuard: the settings file is unusable ({error}).").format(error=_short(settings_error, 120))
        elif failed and status is not None and status.get("PlatformMismatch") is True:
            tooltip = _("LidGuard: platform mismatch. {message}").format(
                message=_short(str(status.get("Message")), 240))
        elif failed:
            message = status.get("Message") if status is not None else None
            tooltip = _("LidGuard runtime error: {message}.").format(
                message=_short(str(message or _("no answer")), 120))
        elif runtime_running:
            tooltip = _("LidGuard runtime is running but does not answer.")
        else:  # the normal state some minutes after the last session: not an error
            return TrayView(TrayState.IDLE, _("LidGuard: idle, no session (the runtime is not running; it starts "
                                              "with the first agent session)."), 0, (), 0, False, False, lid_action,
                            mode)
        return TrayView(TrayState.ERROR, tooltip, 0, (), 0, False, False, lid_action, mode)
    raw_sessions: list[Any] = status["Sessions"] if isinstance(status.get("Sessions"), list) else []
    lines = tuple(line for line in map(_session_line, raw_sessions) if line is not None)
    count = status.get("ActiveSessionCount")
    count = count if type(count) is int and count >= 0 else len(lines)
    omitted = max(0, count - min(len(lines), MAX_MENU_SESSIONS))
    reply_settings = status.get("Settings")
    lid_action, mode = _toggles(reply_settings if isinstance(reply_settings, dict) else stored)
    paused = isinstance(status.get("Paused"), dict)
    pending = status.get("PendingSuspend") if isinstance(status.get("PendingSuspend"), dict) else None
    held = [str(reason) for reason in status.get("ProtectionHeldBack") or [] if reason] \
        if isinstance(status.get("ProtectionHeldBack"), list) else []
    if settings_error is not None:
        state = TrayState.ERROR
        tooltip = _("LidGuard: the settings file is unusable ({error}); keep-awake only.").format(
            error=_short(settings_error, 120))
    elif paused:
        state = TrayState.PAUSED
        until = status["Paused"].get("UntilUtc")
        tooltip = (_("LidGuard paused until {time}").format(time=_clock(until)) if parse_reply_utc(until)
                   else _("LidGuard paused until resume"))
        tooltip += _(" ({sessions} tracked).").format(sessions=_sessions_word(count))
    elif pending is not None:
        state = TrayState.SUSPEND_PENDING
        word = "Hibernate" if pending.get("Mode") == "Hibernate" else "Sleep"
        tooltip = _("LidGuard: {mode} {countdown}.").format(mode=word, countdown=_countdown(pending.get("DeadlineUtc"),
                                                                                            now))
    elif count and held:
        state = TrayState.HELD_BACK
        tooltip = _("LidGuard: protection held back ({reason}); {sessions}.").format(
            reason=_short(held[0], 120), sessions=_sessions_word(count))
    elif count:
        state = TrayState.PROTECTING_THROUGH_LID_CLOSE if lid_action else TrayState.PROTECTING
        tooltip = _("LidGuard: protecting {sessions}").format(sessions=_sessions_word(count))
        tooltip += _("; closing the lid keeps it awake.") if lid_action else "."
    else:
        state = TrayState.IDLE
        tooltip = _("LidGuard: idle, no session.")
    if isinstance(status.get("WatchRefused"), str):  # ipc.watch polls while the runtime refuses the stream
        tooltip += _(" Live updates refused (all watcher slots taken): polling.")
    return TrayView(state, tooltip, count, lines[:MAX_MENU_SESSIONS], omitted, True, paused, lid_action, mode)


def _id_tags(lines: tuple[SessionLine, ...]) -> list[str]:
    """`` [ab12cd34]`` after the folder of each session that shares its provider and folder with another
    line: the shortest prefix of its id (8 characters at least) that tells the group apart; "" for the rest."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, line in enumerate(lines):
        groups.setdefault((line.provider, line.folder), []).append(index)
    tags = [""] * len(lines)
    for members in groups.values():
        if len(members) < 2:
            continue
        ids = [lines[index].session_id for index in members]
        longest = max(len(identifier) for identifier in ids)
        width = next((size for size in range(8, longest + 1) if len({i[:size] for i in ids}) == len(ids)), longest)
        for index, identifier in zip(members, ids, strict=True):
            tags[index] = f" [{_short(identifier[:width], 40)}]" if identifier else ""
    return tags


def menu_entries(view: TrayView) -> tuple[MenuEntry, ...]:
    """The menu for a view. The click (default) pauses for 30 min, or resumes when paused."""
    entries: list[MenuEntry] = []
    if not view.reachable and view.state is TrayState.ERROR:
        entries.append(MenuEntry("session", _("Runtime not reachable"), enabled=False))
    elif not view.sessions:
        entries.append(MenuEntry("session", _("No session"), enabled=False))
    tags = _id_tags(view.sessions)
    for line, tag in zip(view.sessions, tags, strict=True):
        entries.append(MenuEntry("session", _("{provider} - {folder}{tag} - {state} since {since}").format(
            provider=line.provider, folder=line.folder, tag=tag, state=_(line.state), since=line.since),
            enabled=False))
    if view.sessions_omitted:
        entries.append(MenuEntry("session", _("... and {count} more").format(count=view.sessions_omitted),
                                 enabled=False))
    entries.append(MenuEntry("separator", ""))
    entries.append(MenuEntry("pause-30m", _("Pause for 30 min"), default=not view.paused))
    entries.append(MenuEntry("pause-2h", _("Pause for 2 h")))
    entries.append(MenuEntry("resume", _("Resume"), enabled=view.paused, default=view.paused))
    # Sleeping now while sessions are protected would undo what protection is for; paused or idle it
    # is the user's call (the OS refuses it anyway while another inhibitor holds the machine).
    entries.append(MenuEntry("sleep-now", _("Sleep now"), enabled=view.state in (TrayState.IDLE, TrayState.PAUSED)))
    entries.append(MenuEntry("separator", ""))
    entries.append(MenuEntry("change-lid-action", _("Change lid action"), enabled=view.change_lid_action is not None,
                             checked=bool(view.change_lid_action)))
    entries.append(MenuEntry("suspend-mode", _("Suspend mode: hibernate"), enabled=view.suspend_mode is not None,
                             checked=view.suspend_mode == "Hibernate"))
    entries.append(MenuEntry("separator", ""))
    entries.append(MenuEntry("open-status", _("Open status")))
    entries.append(MenuEntry("quit", _("Quit tray")))
    return tuple(entries)
