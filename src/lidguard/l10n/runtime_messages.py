"""The runtime's reply messages in the user's language, translated where the CLI shows them.

The runtime writes its messages in English (they go to the session log, to ``--json`` and to other
clients as they are) and knows nothing of the user's language. A reply's ``Message`` is one or more
sentences, each from the table below, joined by single spaces ("Started Claude:s1. No watched process
was resolved; ..."). ``runtime_text`` splits it into those sentences, takes each one's fields (a session
key, a count, a reason) and shows the sentence's translation with the same fields. A sentence that
matches no template - a new runtime's, an OS error's text - stays English, and so does everything
after it: a message is never guessed at, only translated where it is known.

A field named ``note`` or ``hint`` holds a sentence of its own (the held-back lid change and the
permission it needs) and is translated in turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import N_, _, culture

__all__ = ["RUNTIME_MESSAGES", "runtime_text", "translate_runtime_message"]

RUNTIME_MESSAGES = (
    # sessions (runtime/policy.py)
    N_("A session identifier is required."),
    N_("Started {key}."),
    N_("No watched process was resolved; a stop hook is required."),
    N_("Session {key} is already stopped."),
    N_("Deferred stop for {key}: {count} subagent(s) or task(s) still run."),
    N_("Deferred stop for {key}: provider work is still pending."),
    N_("Stopped {key}."),
    N_("Session {key} is not active; ignored activity signal."),
    N_("Cleared soft-lock for {key} because activity was detected from {reason}."),
    N_("Session {key} was already active."),
    N_("Session {key} is not active; ignored soft-lock signal."),
    N_("Kept {key} working despite {reason}: {count} subagent(s) or task(s) still run."),
    N_("Session {key} is already soft-locked from {reason}."),
    N_("Marked {key} as soft-locked from {reason}."),
    N_("No active session matched; nothing was removed."),
    N_("Removed {count} session(s)."),
    N_("Ignored {command} for {key}: it belongs to a turn older than the current one."),
    # the runtime (runtime/handlers.py, components/pause.py, ipc/protocol.py)
    N_("LidGuard runtime is running."),
    N_("LidGuard runtime is stopping."),
    N_("LidGuard runtime is stopping; try again in a moment."),
    N_("This ends the pause: the next agent hook starts a runtime that protects again (run `lidguard pause` "
       "after it to pause again)."),
    N_("{count} active session(s) are still running; use --force to stop the runtime anyway."),
    N_("Runtime settings updated."),
    N_("Runtime settings updated, but protection could not follow them: {error}"),
    N_("Cleaned {count} orphan session(s)."),
    N_("Paused for {duration}: protection, the lid policy and suspends are off until then or "
       "`lidguard resume`."),
    N_("Paused: protection, the lid policy and suspends are off until `lidguard resume`."),
    N_("Resumed: protection follows the sessions again."),
    N_("LidGuard is not paused."),
    N_("Releasing protection failed: {error}"),
    N_("Applying protection failed: {error}"),
    N_("Unsupported command: {command}"),
    # protection held back while sessions stay (components/power_policy.py, pause.py, emergency.py)
    N_("The power source could not be read ({error}): protection is held back as on a battery below the floor "
       "of {floor} % until a reading shows AC or a battery above the floor."),
    N_("On battery and the power policy is AcOnly: protection is held back until AC returns."),
    N_("On battery (the power source is unknown) and the power policy is AcOnly: protection is held back until "
       "AC returns."),
    N_("On battery with an unknown charge (no percentage could be read): protection is held back as below the "
       "battery floor of {floor} % until AC returns or the battery reads above the floor."),
    N_("On battery (the power source is unknown) with an unknown charge (no percentage could be read): "
       "protection is held back as below the battery floor of {floor} % until AC returns or the battery reads "
       "above the floor."),
    N_("On battery at {percent} %, below the battery floor of {floor} %: protection is held back until AC "
       "returns or the battery is above the floor."),
    N_("On battery at {percent} % (the power source is unknown), below the battery floor of {floor} %: "
       "protection is held back until AC returns or the battery is above the floor."),
    N_("lidguard is paused: protection, the lid policy and suspends are off until `lidguard resume`; sessions "
       "are still tracked."),
    N_("lidguard is paused: protection, the lid policy and suspends are off until `lidguard resume` or the "
       "pause ends; sessions are still tracked."),
    N_("Emergency Hibernation released protection (until the lid opens)"),
    # a lid-close change the OS refused: keep-awake is held (runtime/protection.py, platform/*/power.py)
    N_("Lid-close action held back: {note}"),
    N_("keeping awake; {hint}"),
    N_("the lid-close action needs `lidguard macos-permission install`"),
    N_("the lid-close action needs polkit's org.freedesktop.login1.inhibit-handle-lid-switch permission for "
       "this user (an active local session has it by default; `lidguard linux-permission install` grants it)"),
    N_("the lid-close action (LIDACTION of the power scheme) cannot be changed: access is denied (a group "
       "policy or an administrator locks the power settings)"),
)

_NESTED = ("note", "hint")  # fields that hold a sentence of their own
_FIELD = re.compile(r"\{(\w+)\}")
_Template = tuple[str, re.Pattern[str], str]  # the template, its pattern, its text before the first field
_compiled: list[_Template] | None = None
_Sentence = tuple[str, re.Match[str]]


def _pattern(template: str) -> re.Pattern[str]:
    """The template as a pattern for ``fullmatch``: its text literally, each field any text."""
    pieces = _FIELD.split(template)
    return re.compile("".join(re.escape(piece) if index % 2 == 0 else f"(?P<{piece}>.+?)"
                              for index, piece in enumerate(pieces)), re.DOTALL)


def _templates() -> list[_Template]:
    global _compiled
    if _compiled is None:
        # The longest literal text first: "LidGuard runtime is stopping; try again ..." before "... stopping."
        ordered = sorted(RUNTIME_MESSAGES, key=lambda text: len(_FIELD.sub("", text)), reverse=True)
        _compiled = [(template, _pattern(template), _FIELD.split(template)[0]) for template in ordered]
    return _compiled


def _sentences(message: str, position: int, memo: dict[int, list[_Sentence] | None]) -> list[_Sentence] | None:
    """``message[position:]`` as a sequence of templates joined by single spaces, else None. A field may
    hold spaces and dots ("Claude:my. project"): every sentence end is tried (the shortest field first,
    but a field that ends its template first takes all), the first full reading wins."""
    if position >= len(message):
        return []
    if position in memo:
        return memo[position]
    memo[position] = None
    ends = [index for index in range(position + 1, len(message)) if message[index] == " "] + [len(message)]
    for template, pattern, prefix in _templates():
        if not message.startswith(prefix, position):
            continue
        # A field that ends its template takes the rest ("... held back: {note}"); any other the least.
        for end in (reversed(ends) if template.endswith("}") else ends):
            match = pattern.fullmatch(message, position, end)
            if match is None:
                continue
            rest = _sentences(message, end + 1, memo)
            if rest is not None:
                memo[position] = [(template, match), *rest]
                return memo[position]
    return None


def _known_start(message: str) -> tuple[list[_Sentence], int]:
    """The longest run of known sentences from the start (for a message that also holds unknown text)."""
    for end in sorted((index for index, character in enumerate(message) if character == " "), reverse=True):
        found = _sentences(message[:end], 0, {})
        if found:
            return found, end + 1
    return [], 0


def _show(sentence: _Sentence, translate: Callable[[str], str]) -> str:
    template, match = sentence
    fields = {name: translate_runtime_message(value, translate) if name in _NESTED else value
              for name, value in match.groupdict().items()}
    try:
        return translate(template).format(**fields)
    except (KeyError, IndexError, ValueError):  # a broken translation: the English sentence
        return template.format(**fields)


def translate_runtime_message(message: str, translate: Callable[[str], str]) -> str:
    """``message`` with each known sentence replaced by ``translate(template)`` filled with its fields;
    from the first sentence no template reads on, the message as it was."""
    if len(message) > 4096:  # not a reply the runtime writes: shown as it came
        return message
    sentences = _sentences(message, 0, {})
    rest = ""
    if sentences is None:
        sentences, start = _known_start(message)
        rest = message[start:]
    return " ".join([*(_show(sentence, translate) for sentence in sentences), *([rest] if rest else [])])


def runtime_text(message: str) -> str:
    """A runtime reply's message in this process's culture (as it came in English)."""
    if not message or culture() == "en":
        return message
    return translate_runtime_message(message, _)
