"""Talking to the runtime: connect with short retries, auto-start it for start events.

The connection goes through ``transport.py``; a server running as another user is never trusted.

Timings follow the original tool (REFERENCE 3.1): 250 ms connect timeout, retry every 100 ms. The
runtime lock (``platform/locking.py``) decides how long to retry: free = no runtime, answer at once;
held = a runtime is starting or re-creating its socket, wait up to ``HELD_LOCK_WAIT_SECONDS``.

Auto-start (start events): of many clients finding the lock free, one launches ``run-server``
(``LaunchGate``) and reads its stdout/stderr pipe until the readiness line or the runtime's own
one-line startup failure; the others wait for that leader to let go and share its outcome. A launch
that failed the same way a moment ago is not repeated. Stdlib only (hook hot path).
"""

from __future__ import annotations

import os
import sys
import time

from .protocol import (
    MAX_MESSAGE_BYTES,
    RUNTIME_STOPPING_MESSAGE,
    ProtocolError,
    decode_message,
    encode_message,
    failure_response,
)
from .transport import UntrustedPeer, client_transport

TYPE_CHECKING = False  # typing and pathlib cost the hook path ~5 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .transport_protocols import ClientConnection

__all__ = [
    "RUNTIME_NOT_RUNNING",
    "launch_runtime",
    "send_request",
]

RUNTIME_NOT_RUNNING = "LidGuard runtime is not running."
_UNREACHABLE_PREFIX = "The LidGuard runtime is running"
READY_LINE = "lidguard: runtime ready"  # what run-server prints once it listens (runtime/startup.py)
CONNECT_TIMEOUT_SECONDS = 0.25
CONNECT_RETRY_SECONDS = 0.1
CONNECT_WINDOW_SECONDS = 0.75  # only when the runtime lock is unknown (a socket outside the data folder)
# The lock is held but nobody answers: the runtime is starting, or re-creating a socket file that
# vanished (it looks every second). Longer than that, it is alive but unreachable.
HELD_LOCK_WAIT_SECONDS = 5.0
AUTO_START_MAX_WAIT_SECONDS = 30.0
STOPPING_RETRY_SECONDS = 10.0
MINIMUM_REPLY_SECONDS = 0.05  # the reply wait left by a spent budget: a runtime that answers at once still can
FAILURE_REUSE_SECONDS = 2.0  # a startup failure this recent (same environment) is repeated, not relaunched


class _NoReply(Exception):
    """The runtime closed the connection without answering (it was exiting)."""


def _lock_file_for(socket_path: str | Path) -> str | None:
    """The runtime lock that goes with ``socket_path`` when it is this user's runtime socket."""
    from ..platform.paths import SOCKET_NAME, resolve_paths

    socket_text = os.fspath(socket_path)
    if os.path.basename(socket_text) != SOCKET_NAME:
        return None
    try:
        paths = resolve_paths()
    except ValueError:
        return None
    return paths.lock_file_str if os.path.normpath(paths.socket_file_str) == os.path.normpath(socket_text) else None


class _LockFileOf:
    """The runtime lock that goes with a socket, found when first asked: only a failed connect or a launch
    needs it, and finding it resolves the user's folders (a dozen system calls a connected client skips)."""

    __slots__ = ("_found", "_looked", "_socket_path")

    def __init__(self, socket_path: str | Path) -> None:
        self._socket_path = socket_path
        self._looked = False
        self._found: str | None = None

    def find(self) -> str | None:
        if not self._looked:
            self._found, self._looked = _lock_file_for(self._socket_path), True
        return self._found


def _resolved(lock_file: str | Path | _LockFileOf | None) -> str | Path | None:
    return lock_file.find() if isinstance(lock_file, _LockFileOf) else lock_file


def _launch_lock(lock_file: str | Path) -> str:
    """``launch.lock`` beside the runtime lock."""
    return os.path.join(os.path.dirname(os.fspath(lock_file)), "launch.lock")


def _lock_held(lock_file: str | Path | None) -> bool | None:
    if lock_file is None:
        return None
    from ..platform.locking import held_by_another_process

    return held_by_another_process(lock_file)


def _connect(socket_path: str | Path, lock_file: str | Path | _LockFileOf | None,
             held_wait: float = HELD_LOCK_WAIT_SECONDS, until: float | None = None,
             ) -> tuple[ClientConnection | None, bool]:
    """(connection, runtime lock held). With the lock free nobody can answer: give up at once; with it
    held, wait up to ``held_wait`` for the socket (the runtime is starting or re-creating it), never
    past ``until`` (a monotonic time: the caller's budget)."""
    transport = client_transport()
    started = time.monotonic()
    while True:
        try:
            return transport.connect(socket_path, CONNECT_TIMEOUT_SECONDS), True
        except OSError:
            pass
        held = _lock_held(_resolved(lock_file))
        now = time.monotonic()
        if held is False or now - started >= (CONNECT_WINDOW_SECONDS if held is None else held_wait) \
                or (until is not None and now + CONNECT_RETRY_SECONDS >= until):
            return None, bool(held)
        time.sleep(CONNECT_RETRY_SECONDS)


def launch_runtime() -> Any:
    """Starts ``lidguard run-server`` detached (own session, stdin on /dev/null); its stdout and
    stderr are one pipe carrying the readiness line or its one-line startup failure.

    Returns the process (a ``Popen``), or None when it could not be started.
    """
    import subprocess  # only start events launch a runtime; keep it off the common hook path

    command = [sys.executable, "-m", "lidguard", "run-server"]
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
        )
    except OSError:
        return None


def _read_startup(process: Any, timeout: float) -> tuple[str, str]:
    """("ready", "") / ("held", "") (another runtime holds the lock) / ("failed", reason) /
    ("slow", "") from the launched run-server's pipe."""
    import selectors

    pipe = getattr(process, "stdout", None)
    if pipe is None:  # a stand-in process without a pipe: only its exit code tells
        if not hasattr(process, "poll"):
            return "ready", ""
        code = process.poll()
        return ("slow", "") if code is None else ("held", "") if code == 0 else ("failed", "")
    output = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pipe.close()
                return "slow", ""
            if not selector.select(remaining):
                continue
            chunk = os.read(pipe.fileno(), 4096)
            output += chunk[:8192]
            if READY_LINE.encode() in output:
                pipe.close()
                return "ready", ""
            if not chunk:
                break
    pipe.close()
    try:
        code = process.wait(timeout=5.0)
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: still exiting
        code = None
    if code == 0:
        return "held", ""
    lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    reason = lines[-1] if lines else ""
    reason = reason[len("lidguard: "):] if reason.startswith("lidguard: ") else reason
    return "failed", reason[:500] or f"The LidGuard runtime exited with code {code} while starting."


def _environment_key() -> str:
    return " ".join(sorted(f"{key}={value}" for key, value in os.environ.items()
                           if key.startswith(("LIDGUARD_", "XDG_", "HOME")))) + " " + sys.executable


def _launch_and_read(timeout: float) -> tuple[str, str]:
    process = launch_runtime()
    if process is None:
        return "failed", "Could not start the LidGuard runtime process."
    return _read_startup(process, timeout)


def _launch_once(lock_file: str | Path | None, timeout: float) -> str | None:
    """Launches the runtime unless another client is doing it; None = go and connect, else the
    runtime's own one-line reason why it cannot start."""
    import json

    from ..platform.locking import LaunchGate

    gate = LaunchGate(_launch_lock(lock_file)) if lock_file is not None else None
    if gate is None or not gate.open():  # no usable data folder: the runtime will say why
        outcome, reason = _launch_and_read(timeout)
        return reason if outcome == "failed" else None
    try:
        if not gate.try_lead():
            since = time.time()
            gate.wait_for_leader(timeout)  # the same signal for every waiter: the leader lets go
        else:
            since = None
        record: dict[str, Any] = {}
        try:
            loaded = json.loads(gate.read_record() or "{}")
            record = loaded if isinstance(loaded, dict) else {}
        except ValueError:
            pass
        at = float(record["At"]) if isinstance(record.get("At"), (int, float)) else 0.0
        reusable = record.get("Environment") == _environment_key() and isinstance(record.get("Reason"), str)
        if since is not None:  # a waiter: the leader's outcome is ours
            return str(record["Reason"]) if reusable and at >= since else None
        if reusable and time.time() - at < FAILURE_REUSE_SECONDS:
            return str(record["Reason"])  # it failed the same way a moment ago: do not relaunch
        if _lock_held(lock_file):
            return None  # a runtime is there (starting): connect to it
        outcome, reason = _launch_and_read(timeout)
        gate.write_record(json.dumps({"At": time.time(), "Environment": _environment_key(), "Reason": reason})
                          if outcome == "failed" else "")
        return reason if outcome == "failed" else None
    finally:
        gate.close()


def _exchange(connection: ClientConnection, request: dict[str, Any], reply_timeout: float | None,
              until: float | None = None) -> dict[str, Any]:
    if until is not None:  # the caller's budget bounds the reply wait too (a stopped runtime never answers)
        left = max(until - time.monotonic(), MINIMUM_REPLY_SECONDS)
        reply_timeout = left if reply_timeout is None else min(reply_timeout, left)
    connection.verify_server()  # before anything is sent or believed
    connection.send_all(encode_message(request), reply_timeout)
    line = connection.receive_line(MAX_MESSAGE_BYTES, reply_timeout)
    if not line.strip():
        raise _NoReply
    return decode_message(line)


def _launch_state(lock_file: str | Path | None) -> str:
    """Why the runtime holding the lock does not answer yet: "launching" (a client holds the launch gate,
    reading its runtime's readiness line), "starting" (it has not marked its lock ready), else ""."""
    if lock_file is None:
        return "starting"
    from ..platform.locking import LaunchGate, lock_holder_record

    gate = LaunchGate(_launch_lock(lock_file))
    if not gate.open():
        return "starting"
    try:
        if gate.leader_active():
            return "launching"
    finally:
        gate.close()
    return "" if "ready" in lock_holder_record(lock_file).split() else "starting"


def _connect_or_launch(socket_path: str | Path, lock_file: str | Path | _LockFileOf | None,
                       budget: _Budget | None = None) -> tuple[ClientConnection | None, str]:
    """Connects, launching the runtime when its lock is free (one client launches, the others wait
    for it). A runtime that cannot start gives its own one-line reason at once. A runtime that holds
    its lock but never gets ready is waited for only within ``budget``; a launch (this client's, or the
    one it waits for) is waited for as before and then gives the new runtime the budget again."""
    budget = budget if budget is not None else _Budget(None)
    deadline = time.monotonic() + AUTO_START_MAX_WAIT_SECONDS
    while True:
        connection, held = _connect(socket_path, lock_file, until=budget.until)
        if connection is not None:
            return connection, ""
        lock_file = _resolved(lock_file)
        remaining = deadline - time.monotonic()
        if budget.until is not None and time.monotonic() >= budget.until:
            remaining = 0.0
        if remaining <= 0:
            return None, (f"{_UNREACHABLE_PREFIX} (it holds {lock_file}) but does not answer on {socket_path}."
                          if held else "Failed to start the LidGuard runtime.")
        if held:
            state = _launch_state(lock_file)
            if state == "launching":  # another client's launch: waited for on its own bound, like ours
                budget.restart()
            if state:
                continue  # still starting on a loaded machine (a lock never marked ready: within the budget)
            return None, f"{_UNREACHABLE_PREFIX} (it holds {lock_file}) but does not answer on {socket_path}."
        reason = _launch_once(lock_file, remaining)
        if reason is not None:
            return None, reason or "Failed to start the LidGuard runtime."
        budget.restart()


def _not_answering(failure: str, lock_file: str | Path | _LockFileOf | None) -> dict[str, Any]:
    """A runtime that holds its lock but does not answer: no "not running" (nothing else may start), with
    the pid it wrote in its lock when there is one."""
    response = failure_response(failure)
    response["RuntimeNotAnswering"] = True
    resolved = _resolved(lock_file)
    if resolved is not None:
        from ..platform.locking import lock_holder_record

        words = lock_holder_record(resolved).split()
        if words and words[0].isdigit():
            response["RuntimeProcessIdentifier"] = int(words[0])
    return response


def _attempt(socket_path: str | Path, lock_file: str | Path | _LockFileOf | None, request: dict[str, Any],
             auto_start: bool, reply_timeout: float | None, budget: _Budget) -> tuple[dict[str, Any], bool]:
    """One exchange; the flag says the runtime was exiting (an auto-starting request tries again)."""
    if auto_start:
        connection, failure = _connect_or_launch(socket_path, lock_file, budget)
    else:
        connection, held = _connect(socket_path, lock_file, until=budget.until)
        failure = ("" if connection is not None else RUNTIME_NOT_RUNNING if not held else
                   f"{_UNREACHABLE_PREFIX} (it holds {_resolved(lock_file)}) but does not answer on {socket_path}.")
    if connection is None:  # alive but unreachable is no "not running": say so, do not start another
        if failure.startswith(_UNREACHABLE_PREFIX):
            return _not_answering(failure, lock_file), False
        return failure_response(failure, runtime_unavailable=True), False
    try:
        reply = _exchange(connection, request, reply_timeout, budget.until)
    except _NoReply:
        return failure_response("The LidGuard runtime closed the connection without answering.",
                                runtime_unavailable=True), True
    except UntrustedPeer as error:
        return failure_response(str(error)), False
    except ProtocolError as error:
        return failure_response(f"The runtime sent an unreadable response: {error}"), False
    except TimeoutError as error:  # connected, sent, no reply in time: alive (its socket listens) but silent
        return _not_answering(f"The LidGuard runtime accepted the connection but did not answer: {error}",
                              lock_file), False
    except OSError as error:
        lost = failure_response(f"Lost the connection to the LidGuard runtime: {error}", runtime_unavailable=True)
        return lost, isinstance(error, (ConnectionResetError, BrokenPipeError))  # reset by an exiting runtime
    finally:
        connection.close()
    stopping = reply.get("RuntimeStopping") is True or reply.get("Message") == RUNTIME_STOPPING_MESSAGE
    return reply, stopping and reply.get("Succeeded") is False


class _Budget:
    """The seconds a request may take in all (None: no bound beyond each step's own), from its start or
    from the moment a runtime this request waited for was launched."""

    __slots__ = ("seconds", "until")

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.until: float | None = None
        self.restart()

    def restart(self) -> None:
        if self.seconds is not None:
            self.until = time.monotonic() + self.seconds


def send_request(socket_path: str | Path, request: dict[str, Any], *, auto_start: bool = False,
                 reply_timeout: float | None = 30.0, lock_file: str | Path | None = None,
                 budget: float | None = None) -> dict[str, Any]:
    """One request, one response. A down runtime gives ``RuntimeUnavailable: true``.

    With ``auto_start`` (start events) a missing runtime is launched, and a runtime that is exiting
    (it refuses new sessions, or closes the connection unanswered) is waited out and replaced, so a
    start racing the idle exit still protects its session.

    ``lock_file`` (found from ``socket_path`` when it is this user's runtime socket): with the runtime
    lock free nothing can answer, so the answer is immediate; with it held the client waits for the
    socket (a runtime starting, or re-creating a socket file that was deleted).

    ``budget`` bounds the whole request (connect waits, a lock held by a runtime that never gets ready,
    the reply) whatever the runtime does; only a launch is waited for on its own bound, after which the
    new runtime gets the budget again. A runtime that holds its lock but does not answer in time gives
    ``RuntimeNotAnswering: true`` (and ``RuntimeProcessIdentifier`` from its lock), never "not running".

    A runtime on the other kind of platform (the fake one against a real one) gives ``PlatformMismatch:
    true`` and a refusal naming both (``platform_match.py``).
    """
    from .platform_match import refusal, with_client_platform

    request = with_client_platform(request)  # a demo never talks to real use (platform_match.py)
    lock = lock_file if lock_file is not None else _LockFileOf(socket_path)
    deadline = time.monotonic() + STOPPING_RETRY_SECONDS
    limit = _Budget(budget)
    while True:
        reply, runtime_was_exiting = _attempt(socket_path, lock, request, auto_start, reply_timeout, limit)
        if (limit.until is not None and time.monotonic() >= limit.until) \
                or not (auto_start and runtime_was_exiting) or time.monotonic() >= deadline:
            return refusal(reply, request["ClientPlatform"]) or reply
        time.sleep(CONNECT_RETRY_SECONDS)
