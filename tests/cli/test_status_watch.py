"""``lidguard status --watch`` through a real pseudo-terminal against a real runtime (fake platform):
sessions appear and go, the suspend countdown ticks, a killed runtime shows the waiting line and is
followed again when it comes back, Ctrl-C and SIGTERM end it with 0 and the cursor restored; piped
it writes one block (``--json``: one object) per update."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from typing import Any

from lidguard.cli.status_watch import WAITING_LINE

CLEAR = "\x1b[H\x1b[2J"


class Terminal:
    """``lidguard status --watch`` on a pty it has as its controlling terminal (Ctrl-C is a real ^C)."""

    def __init__(self, lidguard: Any, *args: str, rows: int = 50) -> None:
        self.controller, terminal = os.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 160, 0, 0))

        env = {key: value for key, value in lidguard.env.items() if key not in ("LINES", "COLUMNS")}  # the pty's size
        env.update(TERM="xterm", NO_COLOR="1")

        def own_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            [sys.executable, "-m", "lidguard", "status", "--watch", *args], stdin=terminal, stdout=terminal,
            stderr=terminal, env=env, start_new_session=True,
            preexec_fn=own_terminal)
        os.close(terminal)
        self.output = b""
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            with self.lock:
                self.output += data

    def text(self) -> str:
        with self.lock:
            return self.output.decode("utf-8", "replace").replace("\r\n", "\n")

    def screen(self) -> str:
        """What the terminal shows now: everything after the last clear."""
        return self.text().rsplit(CLEAR, 1)[-1]

    def wait_for(self, predicate: Any, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            assert self.process.poll() is None, self.text()[-3000:]
            time.sleep(0.05)
        raise AssertionError(f"the screen never matched; it shows:\n{self.screen()}")

    def finish(self, timeout: float = 15.0) -> int:
        code = self.process.wait(timeout=timeout)
        self.reader.join(5)
        os.close(self.controller)
        return code


def _session_rows(screen: str) -> list[str]:
    return [line.split()[0] for line in screen.splitlines() if line.startswith("  Claude:")]


def test_status_watch_follows_sessions_a_killed_runtime_and_ends_on_ctrl_c(lidguard):
    view = Terminal(lidguard)
    try:
        first = view.wait_for(lambda s: WAITING_LINE in s)
        assert view.text().startswith("\x1b[?25l")  # the cursor is hidden while it redraws
        assert "Settings file:" in first
        assert lidguard.runtime_pids() == []  # watching never starts the runtime
        lidguard.run("start", "--provider", "claude", "--session", "s1", "--cwd", "/work/app", check=True)
        shown = view.wait_for(lambda s: _session_rows(s) == ["Claude:s1"])
        assert shown.splitlines()[0].startswith("Safe to close the lid: ")
        assert shown.splitlines()[1].startswith("LidGuard runtime running    sessions: 1") and "/work/app" in shown
        lidguard.run("start", "--provider", "claude", "--session", "s2", check=True)
        view.wait_for(lambda s: _session_rows(s) == ["Claude:s1", "Claude:s2"])
        lidguard.run("remove-session", "--provider", "claude", "--session", "s1", check=True)
        view.wait_for(lambda s: _session_rows(s) == ["Claude:s2"])
        lidguard.kill_runtimes()
        waiting = view.wait_for(lambda s: WAITING_LINE in s)
        assert _session_rows(waiting) == []
        lidguard.run("start", "--provider", "claude", "--session", "s3", check=True)  # a new runtime: followed
        view.wait_for(lambda s: "Claude:s3" in _session_rows(s))
        os.write(view.controller, b"\x03")  # Ctrl-C, through the terminal's line discipline
        assert view.finish() == 0
        assert view.text().endswith("\x1b[?25h")  # the cursor is back
    finally:
        if view.process.poll() is None:
            view.process.kill()


def test_the_suspend_countdown_ticks_between_updates_and_sigterm_ends_it(lidguard):
    lidguard.set_machine(lid="closed")
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "600", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)
    view = Terminal(lidguard, rows=7)  # fewer rows than the view (status lists only changed settings)
    try:
        countdown = re.compile(r"\(in (\d+) s\)")
        first = view.wait_for(lambda s: countdown.search(s) is not None)
        seconds = int(countdown.search(first).group(1))  # type: ignore[union-attr]
        later = view.wait_for(lambda s: (m := countdown.search(s)) is not None and int(m.group(1)) <= seconds - 2)
        assert "Suspend scheduled:" in later
        shown = later.splitlines()  # cut to the terminal's 7 rows: nothing scrolls away
        assert len(shown) == 7 and shown[0].startswith("Safe to close the lid: ")
        assert shown[1].startswith("LidGuard runtime running")
        assert shown[-3].startswith("... ") and "more lines" in shown[-3]
        assert shown[-1].startswith("Updated ") and shown[-1].endswith("Ctrl-C ends.")
        view.process.send_signal(signal.SIGTERM)
        assert view.finish() == 0
        assert view.text().endswith("\x1b[?25h")
    finally:
        if view.process.poll() is None:
            view.process.kill()


def _piped(lidguard: Any, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "lidguard", "status", "--watch", *args], env=lidguard.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _read_until(stream: Any, predicate: Any, *, separator: str) -> list[str]:
    """Blocks of the piped output until ``predicate(blocks)`` (each read is one more line)."""
    text = ""
    while True:
        line = stream.readline()
        assert line, f"the output ended: {text}"
        text += line
        blocks = [block for block in text.split(separator) if block.strip()]
        if predicate(blocks):
            return blocks


def test_piped_status_watch_writes_one_plain_block_per_update_and_json_lines(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    plain = _piped(lidguard)
    as_json = _piped(lidguard, "--json")
    try:
        blocks = _read_until(plain.stdout, lambda b: len(b[0].splitlines()) >= 2, separator="\n\n")
        assert blocks[0].splitlines()[0].startswith("Safe to close the lid: ")
        assert blocks[0].splitlines()[1] == "LidGuard runtime is running." and "\x1b[" not in blocks[0]
        first = json.loads(as_json.stdout.readline())  # type: ignore[union-attr]
        assert first["runtimeRunning"] is True and [s["sessionIdentifier"] for s in first["sessions"]] == ["s1"]
        lidguard.run("start", "--provider", "claude", "--session", "s2", check=True)
        blocks = _read_until(plain.stdout, lambda b: "s2" in b[-1], separator="\n\n")
        assert "s1" in blocks[-1]
        second = json.loads(as_json.stdout.readline())  # type: ignore[union-attr]
        assert [s["sessionIdentifier"] for s in second["sessions"]] == ["s1", "s2"]
        lidguard.kill_runtimes()
        blocks = _read_until(plain.stdout, lambda b: b[-1].startswith(WAITING_LINE), separator="\n\n")
        gone = json.loads(as_json.stdout.readline())  # type: ignore[union-attr]
        assert gone["runtimeRunning"] is False and gone["sessions"] == []
        for process in (plain, as_json):
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=15) == 0
            assert process.stderr is not None and process.stderr.read() == ""
    finally:
        for process in (plain, as_json):
            if process.poll() is None:
                process.kill()


def _take_watcher_slot(lidguard: Any) -> Any:
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(lidguard.socket))
    sock.sendall(b'{"v":1,"Command":"watch"}\n')
    first = b""
    while b"\n" not in first:
        chunk = sock.recv(65536)
        assert chunk, "the runtime closed a watcher"
        first += chunk
    assert json.loads(first.split(b"\n")[0])["Watch"] is True
    return sock


def test_with_every_watcher_slot_taken_status_watch_says_why_and_polls(lidguard):
    # Issue 39 item 9: 16 watchers (runtime/components/status_stream.MAX_WATCHERS) and the 17th was shown
    # "runtime not running" although the runtime runs and answers status.
    from lidguard.runtime.components.status_stream import MAX_WATCHERS

    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    slots = [_take_watcher_slot(lidguard) for _ in range(MAX_WATCHERS)]
    plain = _piped(lidguard)
    as_json = _piped(lidguard, "--json")
    try:
        text = "\n\n".join(_read_until(plain.stdout, lambda b: "Settings file:" in "".join(b), separator="\n\n"))
        assert text.splitlines()[1] == "LidGuard runtime is running.", text
        assert f"Live updates refused: The runtime already streams its state to {MAX_WATCHERS} watchers" \
            in text and "polling" in text, text
        assert WAITING_LINE not in text
        first = json.loads(as_json.stdout.readline())  # type: ignore[union-attr]
        assert first["runtimeRunning"] is True and [s["sessionIdentifier"] for s in first["sessions"]] == ["s1"]
        assert f"{MAX_WATCHERS} watchers" in first["watchRefused"], first
        lidguard.run("start", "--provider", "claude", "--session", "s2", check=True)  # polled: still followed
        _read_until(plain.stdout, lambda b: "s2" in b[-1], separator="\n\n")
        second = json.loads(as_json.stdout.readline())  # type: ignore[union-attr]
        assert [s["sessionIdentifier"] for s in second["sessions"]] == ["s1", "s2"]
        for process in (plain, as_json):
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=15) == 0
            assert process.stderr is not None and process.stderr.read() == ""
    finally:
        for process in (plain, as_json):
            if process.poll() is None:
                process.kill()
        for sock in slots:
            sock.close()


def test_the_pause_countdown_ticks_and_every_time_is_local_hh_mm(lidguard):
    # Issue 33.14: times local (HH:MM, the date only when not today), no UTC ISO beside them; the pause ticks.
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("pause", "--for", "90s", check=True)
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
    plain = lidguard.run("status", check=True).stdout
    assert re.search(r"^Paused until \d\d:\d\d \(in \d+ s; or `lidguard resume`\)", plain, re.M), plain
    assert re.search(r"started=\d\d:\d\d lastActivity=\d\d:\d\d .*leaseEnds=(\d{4}-\d\d-\d\d )?\d\d:\d\d", plain), plain
    assert not iso.search(plain), plain
    view = Terminal(lidguard)
    try:
        countdown = re.compile(r"Paused until \d\d:\d\d \(in (\d+) s;")
        first = view.wait_for(lambda s: countdown.search(s) is not None)
        seconds = int(countdown.search(first).group(1))  # type: ignore[union-attr]
        later = view.wait_for(lambda s: (m := countdown.search(s)) is not None and int(m.group(1)) <= seconds - 2)
        assert not iso.search(later), later
        view.process.send_signal(signal.SIGTERM)
        assert view.finish() == 0
    finally:
        if view.process.poll() is None:
            view.process.kill()
