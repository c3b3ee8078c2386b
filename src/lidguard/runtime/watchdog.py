"""The watchdog: a tiny detached process beside one runtime that ends it when it stops answering.

The runtime refreshes a heartbeat (``runtime.heartbeat`` in the data folder: only its mtime counts)
while it owns a lid policy or an inhibitor, and removes it when it owns nothing
(``components/heartbeat.py``). This process, launched by the runtime the first time it owns
protection, acts when the heartbeat has not moved for the stale age (120 s), exactly once: it logs
it, ends the runtime (SIGTERM, then SIGKILL after a short grace; on Linux that alone releases the
fd-bound inhibitors a hung runtime would hold forever; TerminateProcess on Windows) and runs the crash
recovery the next CLI call would run (``shared/recovery.py``: the lid policy from the pending
backup). The session journal lets the next runtime pick the sessions up again; a SIGSTOPped runtime
never sees the SIGTERM, so it does not empty its journal as a clean exit would.

Staleness is counted on this process's monotonic clock from the last change of the mtime it saw,
and the mtime must be old on the wall clock too: a laptop that slept for an hour does not make a
healthy runtime look hung. How it knows the runtime is gone is the OS's (``platform/runtime_link.py``):
on POSIX the runtime holds the write end of a pipe whose read end is this process's ``--pipe-fd``
(end of file, whatever the reason); on Windows this process holds a handle on the runtime's process
(opened at start, guarded against a reused pid by the creation time). When the runtime went away
leaving a pending backup behind (kill -9, OOM: a clean exit restores and deletes them), the watchdog
runs the same crash recovery at once (under the runtime lock, so a racing CLI call never restores
twice), then exits. Only the runtime whose pid it wrote into its
lock is ever ended. Stdlib only until it acts (the Windows binding loads for the process handle).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..platform.runtime_link import RuntimeLink

__all__ = ["HEARTBEAT_FILE_NAME", "WatchdogConfig", "heartbeat_age", "main", "watch"]

HEARTBEAT_FILE_NAME = "runtime.heartbeat"
TERM_GRACE_SECONDS = 5.0
EXIT_WAIT_SECONDS = 10.0


@dataclass(frozen=True)
class WatchdogConfig:
    data_dir: Path
    runtime_pid: int
    pipe_fd: int | None  # POSIX: the read end of the runtime's pipe; None on Windows
    stale_seconds: float
    poll_seconds: float

    @property
    def heartbeat_file(self) -> Path:
        return self.data_dir / HEARTBEAT_FILE_NAME

    @property
    def lock_file(self) -> Path:
        return self.data_dir / "runtime.lock"


def heartbeat_age(path: Path, now: float | None = None) -> tuple[float, float] | None:
    """(mtime, wall-clock age) of a regular heartbeat file; None when there is none (or it is not a
    regular file: a folder, FIFO or symlink there is never lidguard's heartbeat)."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    import stat

    if not stat.S_ISREG(info.st_mode):
        return None
    return info.st_mtime, (time.time() if now is None else now) - info.st_mtime


def _log(config: WatchdogConfig, event_name: str, message: str, *, succeeded: bool = True) -> None:
    """One line in the session log (the runtime's format); never raises."""
    try:
        from datetime import datetime, timezone

        from .logs import SessionLog

        SessionLog(config.data_dir / "session-execution.log").append(
            event_name=event_name, command="watchdog", message=message, succeeded=succeeded,
            now=datetime.now(timezone.utc), active_session_count=0,
            extra={"RuntimeProcessIdentifier": config.runtime_pid})
    except Exception:  # noqa: BLE001 - a lost log line must not stop the recovery
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"lidguard watchdog: {message}\n")


def _still_the_runtime(config: WatchdogConfig, link: RuntimeLink) -> bool:
    """The lock is held and names our runtime's pid (never a recycled pid). A record others cannot
    read (Windows: the holder's byte-range lock is mandatory) is enough only when the link holds the
    runtime's process itself (``pinned``: a handle, so no other process can be hit)."""
    from ..platform.locking import held_by_another_process, lock_holder_record

    if not held_by_another_process(config.lock_file):
        return False
    words = lock_holder_record(config.lock_file).split()
    return words[0] == str(config.runtime_pid) if words else link.pinned


def _end_runtime(link: RuntimeLink) -> str:
    """The polite request (SIGTERM) where the OS has one, then the forced end (SIGKILL,
    TerminateProcess) after the grace; returns how it ended."""
    if not link.request_end():
        return "already gone"
    if link.polite_end is not None and link.gone(TERM_GRACE_SECONDS):
        return f"ended by {link.polite_end}"
    link.force()
    if link.gone(EXIT_WAIT_SECONDS):
        return f"ended by {link.force_end}"
    return f"still running after {link.force_end}"


def _recover(config: WatchdogConfig) -> None:
    """The crash recovery of the next CLI call (the lock must be free); logged either way."""
    try:
        from ..platform import load_platform
        from ..platform.paths import LidGuardPaths, runtime_dir_for
        from ..shared.recovery import recover_if_no_runtime

        paths = LidGuardPaths(config.data_dir, runtime_dir_for(config.data_dir))
        deadline = time.monotonic() + EXIT_WAIT_SECONDS
        from ..platform.locking import held_by_another_process

        while held_by_another_process(paths.lock_file) and time.monotonic() < deadline:
            time.sleep(0.05)  # the kernel lets go of a killed process's lock a moment after its pipe
        recover_if_no_runtime(paths, load_platform,
                              lambda text: _log(config, "watchdog-recovery-warning", text, succeeded=False))
        with contextlib.suppress(OSError):
            os.unlink(config.heartbeat_file)
        _log(config, "watchdog-recovered", "Restored the lid policy from the pending backup (if any).")
    except Exception as error:  # noqa: BLE001 - logged; the next CLI call tries again
        _log(config, "watchdog-recovery-failed", f"Recovery after the runtime ended failed: {error}",
             succeeded=False)


def _backups_left(config: WatchdogConfig) -> bool:
    """Whether a pending backup (lid policy, macOS power state, brightness) outlived the runtime."""
    from ..platform.paths import LidGuardPaths, runtime_dir_for

    paths = LidGuardPaths(config.data_dir, runtime_dir_for(config.data_dir))
    return any(os.path.lexists(path) for path in paths.pending_backup_files)


def watch(config: WatchdogConfig, link: RuntimeLink | None = None) -> str:
    """Runs until the runtime exits or the watchdog acted once; returns what happened. ``link``: how
    the runtime is watched and ended (this OS's by default)."""
    if link is None:
        from ..platform.runtime_link import open_runtime_link

        link = open_runtime_link(config.runtime_pid, config.pipe_fd)
    try:
        return _watch(config, link)
    finally:
        link.close()


def _watch(config: WatchdogConfig, link: RuntimeLink) -> str:
    seen_mtime: float | None = None
    changed_at = time.monotonic()
    while True:
        if link.gone(config.poll_seconds):
            if not _backups_left(config):
                return "runtime exited"  # a clean exit restored everything itself
            # It died (kill -9, OOM) owning a lid policy or a dimmed display: no later lidguard command
            # may come (the agent may have died too), so restore now, as the next CLI call would.
            _log(config, "watchdog-runtime-vanished",
                 f"The runtime (pid {config.runtime_pid}) ended without restoring what it changed; restoring.",
                 succeeded=False)
            _recover(config)
            return "runtime vanished"
        reading = heartbeat_age(config.heartbeat_file)
        now = time.monotonic()
        if reading is None:
            seen_mtime, changed_at = None, now
            continue
        mtime, wall_age = reading
        if mtime != seen_mtime:
            seen_mtime, changed_at = mtime, now
            continue
        if now - changed_at < config.stale_seconds or wall_age < config.stale_seconds:
            continue
        if not _still_the_runtime(config, link):
            return "runtime replaced"
        _log(config, "watchdog-runtime-stale",
             f"The runtime (pid {config.runtime_pid}) has not refreshed its heartbeat for "
             f"{now - changed_at:.0f} s while it owned protection; ending it.", succeeded=False)
        how = _end_runtime(link)
        _log(config, "watchdog-runtime-ended", f"The stale runtime (pid {config.runtime_pid}): {how}.",
             succeeded=not how.startswith("still running"))
        _recover(config)
        return "acted"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lidguard.runtime.watchdog")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--runtime-pid", type=int, required=True)
    parser.add_argument("--pipe-fd", type=int, default=None)  # POSIX only
    parser.add_argument("--stale-seconds", type=float, required=True)
    parser.add_argument("--poll-seconds", type=float, required=True)
    args = parser.parse_args(argv)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal that started the runtime may go
    config = WatchdogConfig(Path(args.data_dir), args.runtime_pid, args.pipe_fd, args.stale_seconds,
                            args.poll_seconds)
    from ..platform.runtime_link import open_runtime_link

    try:
        link = open_runtime_link(config.runtime_pid, config.pipe_fd)
    except (OSError, ValueError) as error:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"lidguard watchdog: cannot watch the runtime: {error}\n")
        return 2
    watch(config, link)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
