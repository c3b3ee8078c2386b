"""``lidguard run-server`` from process start to the event loop: one runtime per user, a one-line
reason when it cannot start, and a readiness line once it answers.

Everything that can keep the runtime from starting (an unsafe or unusable folder, a lock file that is a
symlink or a folder, an unknown platform, a socket path that is a folder) ends the process with exit 1
and one line on stderr, which the client that launched it (``ipc/client.py``) shows its user at once.
Once the socket listens, ``READY_LINE`` goes to stdout; a pipe there is then let go.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
from typing import Any

import anyio

from .. import switches
from ..fileio import ensure_private_dir, set_aside
from ..ipc.transport import EndpointError
from ..platform import load_platform
from ..platform.api import Platform
from ..platform.locking import InstanceLock, describe_lock_error
from ..platform.paths import LidGuardPaths, RuntimeDirError, prepare_runtime_dir, resolve_paths
from ..platform.runtime_link import launch_watchdog
from ..settings import SettingsFileError, headless_defaults, load_or_create_settings
from .app import Runtime
from .protection import restore_pending_lid_backup
from .server import serve

__all__ = ["READY_LINE", "StartupError", "run_server"]

READY_LINE = "lidguard: runtime ready"  # ipc/client.py reads it from a launched run-server's stdout


def _recover_lid_policy(platform: Platform, paths: LidGuardPaths, runtime: Runtime) -> None:
    try:
        if restore_pending_lid_backup(platform, paths.lid_backup_file):
            runtime.log("lid-action-restored-from-pending-backup", "run-server",
                        f"Restored the lid policy from {paths.lid_backup_file} left by an earlier runtime.")
    except Exception as error:  # a bad backup must not keep the runtime from starting
        runtime.log("lid-action-restore-failed", "run-server", f"Could not restore the lid policy: {error}",
                    succeeded=False)


def _recover_brightness(platform: Platform, paths: LidGuardPaths, runtime: Runtime) -> None:
    from .dimming import restore_pending_brightness

    try:
        line = restore_pending_brightness(platform, paths.brightness_backup_file)
    except Exception as error:  # a bad backup or a refusing logind must not keep the runtime from starting
        runtime.log("brightness-restore-failed", "run-server", f"Could not restore the display brightness: {error}",
                    succeeded=False)
        return
    if line is not None:
        runtime.log("brightness-restored-from-pending-backup", "run-server", f"{line} (left by an earlier runtime)")


async def _main(platform: Platform, paths: LidGuardPaths, lock: InstanceLock | None = None) -> None:
    """Everything that logs happens here, inside the event loop."""
    try:
        settings = load_or_create_settings(paths.settings_file)
        settings_error: SettingsFileError | None = None
    except SettingsFileError as error:
        settings, settings_error = headless_defaults(), error
    runtime = Runtime(platform=platform, paths=paths, settings=settings)
    if settings_error is not None:
        runtime.log("settings-load-failed", "run-server", f"{settings_error} Using defaults.", succeeded=False)
        # Fail closed before any journaled session is replayed: keep-awake only, no lid policy, no suspend.
        runtime.settings_guard.engage(settings_error.problem, "run-server")
    _recover_lid_policy(platform, paths, runtime)
    _recover_brightness(platform, paths, runtime)
    _arm_watchdog(runtime, paths)
    for note in SET_ASIDE_NOTES:
        runtime.log("runtime-file-set-aside", "run-server", note, succeeded=False)
    async with anyio.create_task_group() as task_group:

        async def watch_signals() -> None:
            names = ("SIGTERM", "SIGINT", "SIGHUP")  # SIGHUP does not exist on Windows
            wanted = [getattr(signal, name) for name in names if hasattr(signal, name)]
            try:
                receiver = anyio.open_signal_receiver(*wanted)
            except NotImplementedError:  # Windows: Ctrl+C still raises KeyboardInterrupt
                return
            with receiver as signals:
                async for _ in signals:
                    runtime.exit_requested.set()
                    return

        task_group.start_soon(watch_signals)
        served = anyio.Event()

        async def serve_until_exit(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                await serve(runtime, paths, task_status=task_status)
            finally:
                served.set()

        await task_group.start(serve_until_exit)
        _announce_ready(paths)
        if lock is not None:
            lock.mark_ready()
        await served.wait()
        task_group.cancel_scope.cancel()


def _arm_watchdog(runtime: Runtime, paths: LidGuardPaths) -> None:
    """The heartbeat launches the watchdog the first time the runtime owns protection (not at start:
    an idle runtime needs none); ``LIDGUARD_WATCHDOG=off`` or a bad switch value keeps it off."""
    try:
        enabled = switches.watchdog_enabled()
        stale = switches.watchdog_stale_seconds()
    except switches.SwitchError as error:
        runtime.log("watchdog-switch-invalid", "run-server", f"{error} No watchdog.", succeeded=False)
        return
    if not enabled:
        return
    poll = min(runtime.heartbeat.interval, stale / 4)

    def launch() -> None:  # the pipe (POSIX) or nothing (Windows: a process handle) is the OS's
        launch_watchdog([sys.executable, "-m", "lidguard.runtime.watchdog", "--data-dir", str(paths.data_dir),
                         "--runtime-pid", str(os.getpid()), "--stale-seconds", repr(stale),
                         "--poll-seconds", repr(poll)])

    runtime.heartbeat.launch_watchdog = launch


class StartupError(Exception):
    """Why the runtime cannot start, as one line (printed, and read by the client that launched it)."""


def _announce_ready(paths: LidGuardPaths) -> None:
    """Tells a launching client (reading stdout) that the runtime answers now; then lets go of a pipe
    so that nothing the runtime might print later can fail on a reader that went away."""
    try:
        sys.stdout.write(f"{READY_LINE} on {paths.socket_file}\n")
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if stat.S_ISFIFO(os.fstat(stream.fileno()).st_mode):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)


SET_ASIDE_NOTES: list[str] = []  # what startup moved out of the way, logged once the runtime runs


def _set_aside_foreign_entries(paths: LidGuardPaths) -> None:
    """A folder or symbolic link where the runtime lock or socket belongs is never lidguard's own (both
    live in its private folders): it is renamed aside (``<name>.bad-N``) and said, so that protection
    never depends on it. Racing starts are harmless: whoever loses the rename finds the path free."""
    for path, what, foreign in ((paths.lock_file, "runtime lock", (stat.S_ISDIR, stat.S_ISLNK)),
                                (paths.socket_file, "runtime socket path", (stat.S_ISDIR,))):
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not any(test(mode) for test in foreign):
            continue
        kind = "a folder" if stat.S_ISDIR(mode) else "a symbolic link"
        aside = set_aside(path)
        if aside is not None:
            note = f"The {what} {path} was {kind}, not lidguard's; it was set aside as {aside}."
            SET_ASIDE_NOTES.append(note)
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(f"lidguard: warning: {note}\n")
                sys.stderr.flush()


def _start_up() -> tuple[LidGuardPaths, InstanceLock | None, Platform | None]:
    """Everything that can stop the runtime from starting, each failure as a ``StartupError`` line.
    The lock is None when another runtime holds it."""
    try:
        paths = resolve_paths()
    except RuntimeDirError as error:
        raise StartupError(str(error)) from error
    try:
        ensure_private_dir(paths.data_dir)
    except OSError as error:
        raise StartupError(f"Cannot use the data folder {paths.data_dir}: {error.strerror or error}.") from error
    try:
        prepare_runtime_dir(paths.runtime_dir)
    except RuntimeDirError as error:
        raise StartupError(str(error)) from error
    except OSError as error:
        raise StartupError(f"Cannot create the runtime folder {paths.runtime_dir}: "
                           f"{error.strerror or error}.") from error
    _set_aside_foreign_entries(paths)
    lock = InstanceLock(paths.lock_file, record_pid=True)
    try:
        if not lock.try_acquire(retry_seconds=0.25):
            return paths, None, None
    except OSError as error:
        raise StartupError(describe_lock_error(paths.lock_file, error)) from error
    try:
        platform = load_platform()
    except Exception as error:
        lock.release()
        raise StartupError(f"The platform backend cannot be loaded: {error}") from error
    return paths, lock, platform


def run_server() -> int:
    """Entry point of ``lidguard run-server``; exit 0 when another runtime already runs.

    A runtime that cannot start prints its reason as one line on stderr and exits 1 (a launching
    client shows that line); once it listens it prints ``READY_LINE`` on stdout."""
    try:
        paths, lock, platform = _start_up()
    except StartupError as error:
        sys.stderr.write(f"lidguard: {error}\n")
        return 1
    if lock is None or platform is None:
        return 0
    try:
        anyio.run(_main, platform, paths, lock)
    except Exception as error:
        from .logs import ExceptionLog

        ExceptionLog(paths.exception_log_file).record("runtime-crashed", error)
        reason = _startup_reason(error)
        if reason is None:
            raise
        sys.stderr.write(f"lidguard: {reason}\n")
        return 1
    finally:
        lock.release()
    return 0


def _startup_reason(error: BaseException) -> str | None:
    """The one line for an error that kept the runtime from listening (a socket path that is a
    folder...), looking inside exception groups; None for anything else."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, (EndpointError, RuntimeDirError)):
        return str(error)
    if isinstance(error, OSError) and error.filename is not None:
        return f"Cannot listen on {error.filename}: {error.strerror or error}."
    return None
