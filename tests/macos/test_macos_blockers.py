"""Other programs' sleep blockers on macOS (issue 34.3): ``pmset -g assertions`` holders of
PreventSystemSleep / PreventUserIdleSystemSleep, parsed, read through the stand-in, and named in status
by a real runtime whose suspend waits for them (``pmset sleepnow`` only once they are gone)."""

from __future__ import annotations

from pathlib import Path

from test_macos_runtime_end_to_end import start, stop, wait_protected

from lidguard.platform.api import SuspendBlocker
from lidguard.platform.macos.assertions import parse_assertions
from lidguard.platform.macos.suspend import MacSuspender

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BACKUP = {"pid": 412, "process": "backupd", "type": "PreventSystemSleep", "name": "com.apple.backupd.running",
          "details": "Time Machine backup in progress"}
AUDIO = {"pid": 233, "process": "coreaudiod", "type": "PreventUserIdleSystemSleep",
         "name": "com.apple.audio.context.preventuseridlesleep"}


def _listing(*items: dict) -> str:
    listed = ""
    for item in items:
        listed += (f"   pid {item['pid']}({item['process']}): [0x0000a1b200018c3f] 00:05:12 {item['type']} "
                   f"named: \"{item['name']}\"  \n")
        if item.get("details"):
            listed += f"\tDetails: {item['details']}\n"
    text = (FIXTURES / "pmset-g-assertions.txt").read_text()
    return text.replace("{listed}", listed).replace("{prevent_system_sleep}", "1").replace("{prevent_idle_sleep}", "1")


def test_parse_assertions_keeps_sleep_preventers_and_leaves_out_lidguards_own_caffeinate():
    own = {"pid": 901, "process": "caffeinate", "type": "PreventUserIdleSystemSleep",
           "name": "caffeinate command-line tool"}
    blockers = parse_assertions(_listing(BACKUP, AUDIO, own), own_pids=frozenset({901}))
    assert blockers == [
        SuspendBlocker("backupd", "com.apple.backupd.running (Details: Time Machine backup in progress)", 412, None,
                       "PreventSystemSleep", "assertion"),
        SuspendBlocker("coreaudiod", "com.apple.audio.context.preventuseridlesleep", 233, None,
                       "PreventUserIdleSystemSleep", "assertion")]
    assert parse_assertions(_listing()) == []  # powerd's UserIsActive is no sleep blocker


def test_the_suspender_lists_the_blockers_through_pmset(standins):
    assert MacSuspender().list_blockers() == []
    standins.set_machine(assertions=[BACKUP])
    [blocker] = MacSuspender().list_blockers()
    assert (blocker.who, blocker.pid, blocker.what) == ("backupd", 412, "PreventSystemSleep")
    assert ["pmset", "-g", "assertions"] in standins.commands("pmset")


def test_a_blocked_sleep_is_named_in_status_and_sleeps_once_when_the_assertion_goes(mac):
    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-none", assertions=[BACKUP])
    mac.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
    start(mac)
    wait_protected(mac)
    stop(mac)
    assert mac.wait_until(lambda: mac.json("suspend-history")["entries"])
    [entry] = mac.json("suspend-history")["entries"]
    assert entry["EventName"] == "stop-suspend-blocked" and entry["Blockers"][0]["Who"] == "backupd"
    status = mac.json("status")
    [blocker] = status["suspendBlocked"]["blockers"]
    assert blocker["who"] == "backupd" and blocker["pid"] == 412 and blocker["what"] == "PreventSystemSleep"
    assert "Suspend blocked by: backupd" in mac.run("status", check=True).stdout
    assert ["pmset", "sleepnow"] not in mac.tools.commands("pmset")
    mac.tools.set_machine(assertions=[])
    assert mac.wait_until(lambda: ["pmset", "sleepnow"] in mac.tools.commands("pmset"))
    assert mac.wait_until(lambda: mac.json("suspend-history")["entries"][0]["Succeeded"] is True)
    assert mac.tools.commands("pmset").count(["pmset", "sleepnow"]) == 1
