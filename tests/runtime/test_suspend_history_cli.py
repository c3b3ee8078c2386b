"""`lidguard suspend-history [--count N] [--json]` over what the runtime records, newest first: an
Emergency Hibernation whose Hibernate failed shows both results (the Sleep fallback first)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from lidguard.runtime.logs import SuspendHistory, SuspendHistoryEntry

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def _entry(seconds: int, mode: str, succeeded: bool, event: str) -> SuspendHistoryEntry:
    return SuspendHistoryEntry(
        recorded_at=T0 + timedelta(seconds=seconds), suspend_mode=mode, reason="EmergencyHibernation",
        succeeded=succeeded, message=f"{mode} {'ok' if succeeded else 'AccessDenied'}", event_name=event,
        command_name="emergency-hibernation-monitor", active_session_count=1, suspend_trigger_session_count=0,
        observed_temperature_celsius=95, emergency_hibernation_temperature_celsius=93,
        emergency_hibernation_temperature_mode="Average")


def test_suspend_history_lists_both_emergency_results_newest_first(lidguard):
    history = SuspendHistory(lidguard.data_dir / "suspend-history.log")
    history.append(_entry(0, "Hibernate", False, "emergency-hibernation-failed"), keep=10)
    history.append(_entry(1, "Sleep", True, "emergency-hibernation-sleep-fallback-requested"), keep=10)
    both = lidguard.json("suspend-history")["entries"]
    assert [(e["SuspendMode"], e["Succeeded"]) for e in both] == [("Sleep", True), ("Hibernate", False)]
    [newest] = lidguard.json("suspend-history", "--count", "1")["entries"]
    assert newest["EventName"] == "emergency-hibernation-sleep-fallback-requested"
    text = lidguard.run("suspend-history", check=True).stdout
    assert "mode=Sleep reason=EmergencyHibernation succeeded=True" in text
    assert "event=emergency-hibernation-failed" in text
    assert "temperature=95 Celsius mode=Average threshold=93 Celsius" in text
    bad = lidguard.run("suspend-history", "--count", "0")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
    assert json.loads(lidguard.run("suspend-history", "--json", check=True).stdout)["entries"] == both
