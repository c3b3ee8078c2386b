"""Issue 38.3: "Safe to close the lid?" - one pure function over the status reply, every reason in a table."""

from __future__ import annotations

from typing import Any

import pytest

from lidguard.platform.api import PowerSource
from lidguard.shared.readiness import readiness


def working(**changes: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"Succeeded": True, "ActiveSessionCount": 2, "ProtectionHeldBack": [],
                              "LidPolicyHeldBack": None, "Paused": None, "Settings": {"ChangeLidAction": True}}
    status.update(changes)
    return status


CASES = [
    ("no runtime", None, None, "not-running", "lidguard is not running"),
    ("unavailable", {"RuntimeUnavailable": True}, None, "not-running", "lidguard is not running"),
    ("not answering", {"RuntimeNotAnswering": 4242}, None, "not-answering", "not answering"),
    ("failed reply", {"Succeeded": False, "Message": "x"}, None, "not-answering", "not answering"),
    ("platform mismatch", working(PlatformMismatch=True), None, "platform-mismatch", "another platform"),
    ("paused", working(Paused={"UntilUtc": None}), None, "paused", "`lidguard resume`"),
    ("fake platform", working(FakePlatform="LIDGUARD_PLATFORM=fake"), None, "fake-platform", "protects nothing"),
    ("no session", working(ActiveSessionCount=0), None, "no-session", "no agent session"),
    ("bad count", working(ActiveSessionCount="2"), None, "no-session", "no agent session"),
    ("battery floor", working(ProtectionHeldBack=["battery at 12 % is below the 30 % floor"]), None, "held-back",
     "battery at 12 % is below the 30 % floor"),
    ("lid action off", working(Settings={"ChangeLidAction": False}), None, "lid-not-blocked", "ChangeLidAction is off"),
    ("lid refused", working(LidPolicyHeldBack="keeping awake; the lid-close action needs `lidguard macos-permission "
                            "install`"), None, "lid-held-back", "macos-permission install"),
    ("foreign blocker", working(SuspendBlockedBy=[{"Who": "backup-tool", "Why": "backup"}]), None,
     "foreign-blocker", "backup-tool blocks sleep"),
    ("ready on AC", working(), PowerSource(on_ac=True), "ready",
     "yes - 2 agents protected, lid-close sleep blocked, on AC"),
    ("ready on battery", working(ActiveSessionCount=1), PowerSource(on_ac=False, battery_percent=64), "ready",
     "yes - 1 agent protected, lid-close sleep blocked, on battery (64 %)"),
    ("ready, power unknown", working(), None, "ready", "yes - 2 agents protected, lid-close sleep blocked"),
    ("ready, power as JSON", working(), {"onAc": True}, "ready", "on AC"),
]


@pytest.mark.parametrize(("status", "power", "reason", "words"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_every_reason(status: dict[str, Any] | None, power: Any, reason: str, words: str) -> None:
    answer = readiness(status, power)
    assert answer.reason == reason
    assert answer.safe is (reason == "ready")
    assert answer.text.startswith("Safe to close the lid: " + ("yes - " if answer.safe else "not yet - "))
    assert words in answer.text


def test_the_first_reason_wins() -> None:
    # Paused and with no session: the pause is what the user must undo first.
    assert readiness(working(Paused={}, ActiveSessionCount=0)).reason == "paused"
    # Battery floor and ChangeLidAction off: protection held back is named first.
    assert readiness(working(ProtectionHeldBack=["low"], Settings={"ChangeLidAction": False})).reason == "held-back"


def test_hostile_reply_values_never_raise() -> None:
    for value in (None, 1, "x", [], {}, [None], [{"Who": None}], float("nan")):
        for key in ("ActiveSessionCount", "ProtectionHeldBack", "Settings", "LidPolicyHeldBack", "Paused",
                    "SuspendBlockedBy"):
            readiness(working(**{key: value}))
