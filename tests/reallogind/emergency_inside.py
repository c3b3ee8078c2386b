"""Run INSIDE a real-logind instance (``ns_host``): an in-process runtime on the Linux backend with a
hot machine, Emergency Hibernation's 10 s poll shortened; prints the suspend history (newest first) and
lidguard's inhibitors at the end as one JSON line (a first line once the session started: the test
closes the lid then). argv[1]: how many history entries to wait for;
argv[2] "reapplied": then also for protection to be held again."""

from __future__ import annotations

import json
import sys

import anyio

from lidguard.platform import load_platform
from lidguard.platform.linux._binding import LogindConnection
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.runtime.components import emergency
from lidguard.settings.model import Settings, headless_defaults


def main() -> None:
    wanted, reapplied = int(sys.argv[1]), sys.argv[2:] == ["reapplied"]
    emergency.POLL_SECONDS = 0.3
    runtime = Runtime(platform=load_platform("linux"), paths=resolve_paths(),
                      settings=Settings.from_raw(headless_defaults().to_file_json()))
    held: list[list[str]] = []

    def ours() -> list[str]:
        with LogindConnection() as connection:
            return sorted(entry[0] for entry in connection.list_inhibitors() if entry[1] == "lidguard")

    async def run() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Codex",
                                                    "SessionIdentifier": "hot"})
            assert started["Succeeded"], started["Message"]
            print(json.dumps({"started": True}), flush=True)  # the test closes the lid now
            with anyio.fail_after(60):
                while len(runtime.suspend_history.newest_first()) < wanted:
                    await anyio.sleep(0.05)
                held.append(ours())
                # Both refused: protection comes back for the running session (keep-awake, then the lid).
                while reapplied and held[-1] != ["handle-lid-switch", "idle", "sleep"]:
                    await anyio.sleep(0.05)
                    held.append(ours())
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(run, backend="trio")
    print(json.dumps({"history": runtime.suspend_history.newest_first(), "held": held[-1]}))


if __name__ == "__main__":
    main()
