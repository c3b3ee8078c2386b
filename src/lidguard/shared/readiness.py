""""Safe to close the lid?" - one honest answer from a status reply (issue 38.3), shown by ``lidguard
status`` (its first line), the tray tooltip and the notify dashboard.

Pure: the runtime's status reply (None: no runtime answered) and, where the caller could read it, the
power source. The first reason that makes closing the lid unsafe wins, in the order a user can act on:
no runtime, a runtime that does not answer, a platform mismatch, a pause, the fake platform, no session,
protection held back (battery below the floor, an unknown battery, emergency hibernation, a settings
problem), lid-close sleep not blocked (ChangeLidAction off, or the change refused / held back), a foreign
blocker. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Readiness", "readiness"]


def N_(message: str) -> str:  # noqa: N802 - marks a text for lidguard.l10n's catalogs (translated by the caller)
    return message


def _same(message: str) -> str:
    return message


@dataclass(frozen=True, slots=True)
class Readiness:
    safe: bool
    reason: str  # a stable key: "ready", "not-running", "not-answering", "paused", ...
    text: str  # "Safe to close the lid: yes - ..." / "Safe to close the lid: not yet - ..." (English: JSON)
    # The same answer as templates (issue 38.2): ((template, fields), ...) joined by ", " after the head.
    parts: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"safe": self.safe, "reason": self.reason, "text": self.text}

    def localized(self, translate: Callable[[str], str] = _same) -> str:
        """``text`` in a language (``translate``: ``lidguard.l10n._``); runtime-given reasons stay as given."""
        if not self.parts:
            return self.text
        words = [translate(template).format(**dict(values)) for template, values in self.parts]
        head = translate(N_("Safe to close the lid: yes - {answer}")) if self.safe \
            else translate(N_("Safe to close the lid: not yet - {answer}"))
        return head.format(answer=translate(N_(", ")).join(words))  # the list separator: "、" in Japanese


PREFIX = "Safe to close the lid: "


def _not_yet(reason: str, why: str, **values: Any) -> Readiness:
    return Readiness(False, reason, f"{PREFIX}not yet - {why.format(**values)}", ((why, tuple(values.items())),))


def _first_text(value: Any) -> str | None:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str) and item.strip():
                return item.strip()
    return None


def _power_words(power: Any) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    """"on AC" / "on battery (64 %)" (a template and its fields) from a PowerSource-like object or its
    JSON, else None."""
    on_ac = getattr(power, "on_ac", None)
    percent = getattr(power, "battery_percent", None)
    if isinstance(power, dict):
        on_ac, percent = power.get("onAc"), power.get("batteryPercent")
    if on_ac is True:
        return N_("on AC"), ()
    if on_ac is False:
        return (N_("on battery ({percent} %)"), (("percent", percent),)) if type(percent) is int \
            else (N_("on battery"), ())
    return None


def _blocker(status: dict[str, Any]) -> str | None:
    """A program other than lidguard that blocks sleep (the foreign-blocker report), named."""
    for key in ("SuspendBlockedBy", "ForeignBlockers", "SuspendBlockers"):
        value = status.get(key)
        if isinstance(value, list) and value:
            first = value[0]
            if isinstance(first, dict):
                who = first.get("Who") or first.get("who") or first.get("Name") or "another program"
                return str(who)[:80]
            if isinstance(first, str) and first.strip():
                return first.strip()[:80]
    return None


def readiness(status: dict[str, Any] | None, power: Any = None) -> Readiness:
    if status is None or status.get("RuntimeUnavailable"):
        return _not_yet("not-running", N_("lidguard is not running, so no agent is protected"))
    if status.get("RuntimeNotAnswering") or status.get("Succeeded") is False:
        return _not_yet("not-answering", N_("the lidguard runtime is not answering"))
    if status.get("PlatformMismatch") is True:
        return _not_yet("platform-mismatch", N_("the running runtime is another platform's (the demo and real use "
                                                "never mix): `lidguard stop-runtime`, then start again"))
    if isinstance(status.get("Paused"), dict):
        return _not_yet("paused", N_("lidguard is paused (`lidguard resume`)"))
    if status.get("FakePlatform"):
        return _not_yet("fake-platform", N_("this runtime is the fake platform (the demo): it protects nothing"))
    count = status.get("ActiveSessionCount")
    count = count if type(count) is int and count > 0 else 0
    if count == 0:
        return _not_yet("no-session", N_("no agent session is running"))
    held = _first_text(status.get("ProtectionHeldBack"))
    if held is not None:
        return _not_yet("held-back", "{held}", held=held)
    raw_settings = status.get("Settings")
    settings: dict[str, Any] = raw_settings if isinstance(raw_settings, dict) else {}
    if settings.get("ChangeLidAction") is False:
        return _not_yet("lid-not-blocked", N_("closing the lid still sleeps (ChangeLidAction is off: "
                                              "`lidguard settings --change-lid-action true`)"))
    lid_note = status.get("LidPolicyHeldBack")
    if isinstance(lid_note, str) and lid_note.strip():
        return _not_yet("lid-held-back", N_("lid-close sleep is not blocked: {note}"), note=lid_note.strip())
    blocker = _blocker(status)
    if blocker is not None:
        return _not_yet("foreign-blocker", N_("{blocker} blocks sleep, so the laptop would stay awake after the "
                                              "agents"), blocker=blocker)
    parts: list[tuple[str, tuple[tuple[str, Any], ...]]] = [
        (N_("1 agent protected") if count == 1 else N_("{count} agents protected"), (("count", count),)),
        (N_("lid-close sleep blocked"), ())]
    words = _power_words(power)
    if words is not None:
        parts.append(words)
    english = [template.format(**dict(values)) for template, values in parts]
    return Readiness(True, "ready", f"{PREFIX}yes - {', '.join(english)}", tuple(parts))
