"""The runtime's reply messages in the user's language (issue 38.2): the runtime writes English (logs, JSON,
other clients), the CLI shows each known sentence translated with its fields, and what it does not know stays
English. The messages here are the ones the runtime's own code makes, so a runtime text changed without its
template fails here rather than showing English to a Korean user."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from lidguard import l10n
from lidguard.ipc.protocol import RUNTIME_STOPPING_MESSAGE
from lidguard.l10n.runtime_messages import RUNTIME_MESSAGES, runtime_text, translate_runtime_message
from lidguard.platform.api import PowerSource
from lidguard.platform.linux.power import LINUX_LID_HINT
from lidguard.platform.macos.power import MAC_LID_HINT
from lidguard.platform.windows.power import WINDOWS_LID_HINT
from lidguard.runtime.components.emergency import HOLD_REASON
from lidguard.runtime.components.pause import HELD_BACK as PAUSE_HELD_BACK
from lidguard.runtime.components.power_policy import decide
from lidguard.runtime.components.status_stream import RUNNING_MESSAGE
from lidguard.runtime.policy import MarkActive, MarkSoftLocked, RemoveSessions, Start, Stop, transition
from lidguard.runtime.sessions import AgentProvider, RegistryState, SessionKey
from lidguard.settings.model import PowerPolicy

from .conftest import CULTURES, translated

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
KEY = SessionKey.create(AgentProvider.CLAUDE, "s.1 with. dots")  # a field may hold ". "-free dots and spaces


def _policy_messages() -> list[str]:
    """Every reply the session policy gives on the way through a session's life."""
    messages = []
    state = RegistryState()

    def step(event: Any) -> None:
        nonlocal state
        outcome = transition(state, event, T0 + timedelta(seconds=len(messages)))
        messages.append(outcome.message)
        state = outcome.state

    step(Start(SessionKey.create(AgentProvider.CLAUDE, "  ")))  # no identifier
    step(Start(KEY))  # no watched process
    step(Start(KEY, watched_process_identifier=4242))
    step(MarkActive(KEY, reason="pre-tool-use"))  # already active
    step(MarkSoftLocked(KEY, reason="permission-prompt"))
    step(MarkSoftLocked(KEY, reason="permission-prompt"))  # already soft-locked
    step(MarkActive(KEY, reason="user-prompt-submit"))  # clears the soft-lock
    step(MarkActive(KEY, reason="pre-tool-use", tool_call_id="t1", tool_state="Running", background=True))
    step(MarkSoftLocked(KEY, reason="permission-prompt"))  # held by background work
    step(Stop(KEY, turn_end=True))  # deferred: background work
    step(Stop(KEY, pending_provider_work=True))
    step(Stop(KEY))
    step(Stop(KEY))  # already stopped
    step(MarkActive(KEY))  # not active
    step(MarkSoftLocked(KEY, reason="idle"))  # not active
    step(RemoveSessions(session_identifier="nobody"))
    step(Start(KEY))
    step(RemoveSessions(session_identifier=KEY.session_identifier))
    return messages


def _held_back_reasons() -> list[str]:
    """Why protection is held back while sessions stay, as the runtime's components say it."""
    reasons = [HOLD_REASON, PAUSE_HELD_BACK.format(until=""), PAUSE_HELD_BACK.format(until=" or the pause ends")]
    for policy in PowerPolicy:
        for source in (OSError("no battery file"), PowerSource(False, 12), PowerSource(None, 12),
                       PowerSource(False, None), PowerSource(None, None)):
            reason = decide(policy=policy, floor_percent=30, source=source).reason
            if reason:
                reasons.append(reason)
    return reasons


RUNTIME_TEXTS = [
    *_held_back_reasons(),
    RUNNING_MESSAGE,
    RUNTIME_STOPPING_MESSAGE,
    "LidGuard runtime is stopping.",
    "LidGuard runtime is stopping. This ends the pause: the next agent hook starts a runtime that protects again "
    "(run `lidguard pause` after it to pause again).",
    "2 active session(s) are still running; use --force to stop the runtime anyway.",
    "Runtime settings updated.",
    "Paused for 30 min: protection, the lid policy and suspends are off until then or `lidguard resume`.",
    "Paused: protection, the lid policy and suspends are off until `lidguard resume`. Releasing protection "
    "failed: OSError: boom",
    "Resumed: protection follows the sessions again.",
    "LidGuard is not paused.",
    *(f"Started {KEY}. Lid-close action held back: keeping awake; {hint}"
      for hint in (MAC_LID_HINT, LINUX_LID_HINT, WINDOWS_LID_HINT)),
]


def _marked(template: str) -> str:
    return f"\x00{template}\x01"


def _uncovered(message: str) -> str:
    """What of ``message`` no template took (fields are inside the marks, so a mark is removed whole)."""
    shown = translate_runtime_message(message, _marked)
    while "\x00" in shown:
        shown = re.sub(r"\x00[^\x00\x01]*\x01", "", shown)
    return shown.strip()


@pytest.mark.parametrize("message", [*_policy_messages(), *RUNTIME_TEXTS])
def test_every_sentence_the_runtime_writes_is_a_known_template(message: str) -> None:
    assert _uncovered(message) == "", message


def test_fields_come_back_as_they_were_and_unknown_text_stays_english() -> None:
    echo = translate_runtime_message(f"Started {KEY}. No watched process was resolved; a stop hook is required.",
                                     lambda template: template.upper().replace("{KEY}", "{key}"))
    assert echo == f"STARTED {KEY}. NO WATCHED PROCESS WAS RESOLVED; A STOP HOOK IS REQUIRED."
    # An OS error's text, a newer runtime's sentence: kept as written, from there to the end.
    odd = "Stopped Claude:s1. The disk said no! Stopped Claude:s2"
    assert translate_runtime_message(odd, lambda t: "<" + t + ">") == \
        "<Stopped Claude:s1.> The disk said no! Stopped Claude:s2"
    # A field may hold anything: where the whole message reads as one sentence, it is that one sentence
    # (the field shown as it came, so nothing is lost).
    assert translate_runtime_message("Stopped a. b! c.", lambda t: "<" + t + ">") == "<Stopped a. b! c.>"
    assert translate_runtime_message("Something new. Stopped x.", lambda t: "<" + t + ">") == \
        "Something new. Stopped x."
    # A translation with a field the template lacks falls back to the English sentence, never raises.
    assert translate_runtime_message(f"Stopped {KEY}.", lambda t: "{nope}") == f"Stopped {KEY}."
    assert translate_runtime_message("", str.upper) == ""


@pytest.mark.parametrize("culture", CULTURES)
def test_a_start_reply_with_a_held_back_lid_change_is_shown_whole_in_each_language(culture: str) -> None:
    message = f"Started {KEY}. No watched process was resolved; a stop hook is required. Lid-close action " \
              f"held back: keeping awake; {MAC_LID_HINT}"
    l10n.set_culture(culture)
    try:
        shown = runtime_text(message)
    finally:
        l10n.reset()
    hint = translated(culture, MAC_LID_HINT)
    assert shown == " ".join([
        translated(culture, "Started {key}.", key=KEY),
        translated(culture, "No watched process was resolved; a stop hook is required."),
        translated(culture, "Lid-close action held back: {note}",
                   note=translated(culture, "keeping awake; {hint}", hint=hint)),
    ])
    assert str(KEY) in shown and "Started" not in shown


def test_english_is_the_message_itself() -> None:
    l10n.set_culture("en")
    try:
        assert runtime_text("Stopped Claude:x. anything") == "Stopped Claude:x. anything"
    finally:
        l10n.reset()


def test_every_template_is_in_every_catalog() -> None:
    for culture in CULTURES:
        for template in RUNTIME_MESSAGES:
            translated(culture, template)


@pytest.mark.parametrize("culture", CULTURES)
def test_the_cli_shows_the_runtimes_replies_in_the_users_language(lidguard: Any, culture: str) -> None:
    lidguard.env["LIDGUARD_UI_CULTURE"] = culture
    started = lidguard.run("start", "--provider", "claude", "--session", "s1", check=True).stdout
    key = "Claude:s1"
    assert started.splitlines()[0] == " ".join([
        translated(culture, "Started {key}.", key=key),
        translated(culture, "No watched process was resolved; a stop hook is required.")])
    stopped = lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True).stdout
    assert stopped.splitlines()[0] == translated(culture, "Stopped {key}.", key=key)
    again = lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True).stdout
    assert again.splitlines()[0] == translated(culture, "Session {key} is already stopped.", key=key)
    # The session log keeps the runtime's English.
    log = [json.loads(line) for line in (lidguard.data_dir / "session-execution.log").read_text().splitlines()]
    assert f"Stopped {key}." in [entry["Message"] for entry in log]
    # A pause: its reply, and status's held-back line, both in the user's language.
    paused = lidguard.run("pause", check=True).stdout
    assert paused.splitlines()[0] == translated(
        culture, "Paused: protection, the lid policy and suspends are off until `lidguard resume`.")
    status = lidguard.run("status", check=True).stdout
    reason = translated(culture, "lidguard is paused: protection, the lid policy and suspends are off until "
                                 "`lidguard resume`; sessions are still tracked.")
    assert translated(culture, "Protection held back: {reason}", reason=reason) in status.splitlines()
    lidguard.run("resume", check=True)
    lidguard.run("stop-runtime", check=True)
