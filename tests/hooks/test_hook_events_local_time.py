"""`lidguard hook-events` prints the stored UTC time of each line as local time (REFERENCE 1.2, row
119), like `suspend-history`; the file keeps UTC."""

from __future__ import annotations

import json

from .conftest import run_hook_process


def test_hook_events_print_local_times_and_the_file_keeps_utc(lidguard):
    lidguard.env["TZ"] = "IST-5:30"  # POSIX TZ: UTC+05:30, no tz database needed
    log = lidguard.data_dir / "claude-hook-events.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("2026-01-02T03:00:00.250000Z kind=received event=Stop session=s1 workingDirectory=/w\n"
                   "not-a-time kind=message event=<empty> session=<empty> workingDirectory=<empty> message=x\n"
                   "2026-13-40T99:00:00Z kind=message event=X session=s2 workingDirectory=/w\n")
    result = lidguard.run("hook-events", "--provider", "claude")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "2026-01-02T08:30:00+05:30 kind=received event=Stop session=s1 workingDirectory=/w",
        "not-a-time kind=message event=<empty> session=<empty> workingDirectory=<empty> message=x",
        "2026-13-40T99:00:00Z kind=message event=X session=s2 workingDirectory=/w",
    ]


def test_a_real_hook_line_is_shown_in_local_time(lidguard):
    lidguard.env["TZ"] = "XYZ+10"  # UTC-10:00
    run_hook_process(lidguard, "copilot", json.dumps({"sessionId": "c1"}), "--event", "sessionStart")
    stored = (lidguard.data_dir / "copilot-hook-events.log").read_text().splitlines()[0]
    assert stored.split(" ", 1)[0].endswith("Z")
    [line] = lidguard.run("hook-events", "--provider", "copilot").stdout.splitlines()
    stamp, rest = line.split(" ", 1)
    assert stamp.endswith("-10:00") and rest == stored.split(" ", 1)[1]
