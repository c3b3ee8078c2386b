"""``lidguard status --watch``: the status view again on every change the runtime streams.

The runtime pushes each change (``ipc/watch.py``: no busy poll). On a terminal the screen is cleared
and redrawn, the cursor hidden meanwhile, and while a suspend is pending or a pause has an end the view is
redrawn every second so its countdown ticks between updates; piped, each update is one more block (``--json``:
one JSON object per line). When the runtime is not running the view says so and waits for it
(``watch_status`` retries every ``RECONNECT_SECONDS`` and never starts it). Ctrl-C or SIGTERM ends
it with exit code 0 and the cursor shown again.
"""

from __future__ import annotations

import json
import queue
import shutil
import signal
import sys
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..ipc.watch import watch_status
from .output import CliError, runtime_text
from .session_commands import StatusView

if TYPE_CHECKING:
    from .context import CliContext

__all__ = ["RECONNECT_SECONDS", "WAITING_LINE", "run_status_watch"]

RECONNECT_SECONDS = 2.0
WAITING_LINE = "LidGuard runtime not running - waiting..."
TICK_SECONDS = 1.0
STOP_CHECK_SECONDS = 0.25
_CLEAR = "\x1b[H\x1b[2J"
_HIDE_CURSOR = "\x1b[?25l"
_SHOW_CURSOR = "\x1b[?25h"
_END = object()


def _fit(lines: list[str]) -> list[str]:
    """The top of the view (runtime, sessions, pending suspend come first) when it is taller than the
    terminal, so the redraw never scrolls them away; two rows stay for the footer."""
    room = max(3, shutil.get_terminal_size((100, 24)).lines - 2)
    if len(lines) <= room:
        return lines
    hidden = len(lines) - room + 1
    return [*lines[:room - 1], f"... {hidden} more lines (a taller terminal shows them; `lidguard status` prints all)"]


def _follow(context: CliContext, stop: threading.Event, updates: queue.Queue[Any]) -> None:
    try:
        for status in watch_status(context.paths, stop=stop, reconnect_seconds=RECONNECT_SECONDS):
            updates.put(status)
    except Exception as error:  # noqa: BLE001 - reported by the main thread as one line
        updates.put(error)
    finally:
        updates.put(_END)


class _Screen:
    def __init__(self, terminal: bool, json_mode: bool) -> None:
        self.terminal = terminal and not json_mode
        self.json_mode = json_mode
        self.blocks = 0

    def start(self) -> None:
        if self.terminal:
            self._write(_HIDE_CURSOR)

    def finish(self) -> None:
        if self.terminal:
            self._write("\n" + _SHOW_CURSOR)  # the shell's prompt goes below the last view

    def draw(self, view: StatusView) -> None:
        if self.json_mode:
            self._write(json.dumps(view.json(), ensure_ascii=False, separators=(",", ":")) + "\n")
            return
        lines = view.lines(terminal=self.terminal)
        if not view.running:
            lines = [WAITING_LINE, *lines[1:]] if not self.terminal else [WAITING_LINE, "", *lines]
        if self.terminal:
            footer = f"Updated {datetime.now().strftime('%H:%M:%S')} - watching for changes; Ctrl-C ends."
            self._write(_CLEAR + "\n".join([*_fit(lines), "", footer]))
            return
        self._write(("\n" if self.blocks else "") + "\n".join(lines) + "\n")
        self.blocks += 1

    @staticmethod
    def _write(text: str) -> None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            raise SystemExit(0) from None  # the reader went away: nothing left to show


def run_status_watch(context: CliContext, *, json_mode: bool) -> int:
    stop = threading.Event()
    updates: queue.Queue[Any] = queue.Queue()
    screen = _Screen(sys.stdout.isatty(), json_mode)

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {number: signal.signal(number, on_signal) for number in (signal.SIGINT, signal.SIGTERM)}
    follower = threading.Thread(target=_follow, args=(context, stop, updates), name="status-watch", daemon=True)
    screen.start()
    try:
        follower.start()
        view: StatusView | None = None
        while not stop.is_set():
            ticking = screen.terminal and view is not None and view.ticking
            try:
                item = updates.get(timeout=min(TICK_SECONDS, STOP_CHECK_SECONDS) if not ticking else TICK_SECONDS)
            except queue.Empty:
                if ticking and view is not None:
                    screen.draw(view)  # the countdown, from the same reply
                continue
            if item is _END:
                break
            if isinstance(item, Exception):
                raise item
            if isinstance(item, dict) and item.get("PlatformMismatch") is True:  # a demo never watches real use
                raise CliError(runtime_text(item.get("Message")))
            view = StatusView(context, item)
            screen.draw(view)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        screen.finish()
        for number, handler in previous.items():
            signal.signal(number, handler)
        follower.join(timeout=2.0)
    return 0
