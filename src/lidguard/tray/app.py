"""``lidguard tray``: the indicator process (extra ``lidguard[tray]``).

Two indicators behind one small interface (``update(title=, images=, entries=)``, ``run(setup)``,
``stop()``): ``sni.SniIndicator`` (StatusNotifierItem + dbusmenu over D-Bus, pure Python) on Linux when
a StatusNotifierWatcher is on the session bus, else ``pystray_indicator.PystrayIndicator`` (Windows,
macOS, Linux XEmbed). ``LIDGUARD_TRAY_BACKEND=sni|pystray`` forces one.

The indicator's loop runs on the main thread; one thread reads ``updates.status_updates`` (the runtime's
stream) and redraws; a 1 s tick refreshes the countdown while a suspend is pending and retries a redraw
that failed, and looks again at the runtime's lock while it is held without answers (a runtime on its
way out: idle once it is gone). Menu entries run ``actions.TrayActions`` on their own thread. Quit,
SIGTERM and SIGINT stop the loop; the process then exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from datetime import datetime, timezone
from typing import Any

from ..platform.paths import LidGuardPaths
from .actions import TrayActions
from .model import TrayState, menu_entries, tray_view
from .updates import status_updates

__all__ = ["TrayApp", "TrayExtraMissing", "TrayUnavailable", "open_indicator"]

ICON_SIZES = (22, 32, 64)


class TrayUnavailable(Exception):
    """One readable sentence: the extra is missing or there is no display."""


class TrayExtraMissing(TrayUnavailable):
    """A package of the tray extra cannot be imported; the message names this installation's command."""


def _missing(error: ImportError) -> TrayUnavailable:
    from ..shared.extras import missing_message

    return TrayExtraMissing(missing_message("tray", "lidguard tray", [error.name or str(error)]))


def open_indicator(os_name: str, on_action: Any, *, images: list[Any], title: str, entries: Any) -> Any:
    """The indicator for this desktop, or ``TrayUnavailable``. Linux: a StatusNotifierWatcher on the
    session bus -> SNI, else an X display -> XEmbed; elsewhere pystray."""
    from ..switches import SwitchError, tray_backend

    try:
        choice = tray_backend()
    except SwitchError as error:
        raise TrayUnavailable(str(error).rstrip(".")) from error
    if choice == "" and os_name == "linux":
        choice = "sni" if _sni_available() else "xembed" if os.environ.get("DISPLAY") else "sni"
    indicator: Any
    if choice in ("sni", "xembed"):
        try:
            if choice == "sni":
                from .sni import SniIndicator as chosen
            else:
                from .xembed import XembedIndicator as chosen  # type: ignore[assignment]
        except ImportError as error:
            raise _missing(error) from error
        try:
            indicator = chosen(on_action)
        except ImportError as error:
            raise _missing(error) from error
        except Exception as error:
            where = "the session D-Bus" if choice == "sni" else "the display"
            raise TrayUnavailable(f"cannot open {where}: {type(error).__name__}: {error}".rstrip(": ")) from error
        indicator.update(title=title, images=images, entries=entries)
        return indicator
    try:
        import pystray
    except ImportError as error:
        raise _missing(error) from error
    except Exception as error:  # Xlib's display errors: a bad or unreachable DISPLAY
        raise TrayUnavailable(f"cannot open the display: {type(error).__name__}: {error}".rstrip(": ")) from error
    from .pystray_indicator import PystrayIndicator

    return PystrayIndicator(pystray, on_action, image=images[-1], title=title, entries=entries)


def _sni_available() -> bool:
    try:
        from .sni import watcher_present
    except ImportError:
        return False
    return watcher_present()


class TrayApp:
    def __init__(self, paths: LidGuardPaths, os_name: str, *, panel: str = "dark") -> None:
        try:
            import PIL.Image  # noqa: F401
        except ImportError as error:
            raise _missing(error) from error
        self.paths = paths
        self.panel = panel
        self.actions = TrayActions(paths)
        self.stop_event = threading.Event()
        self.status: dict[str, Any] | None = None
        self.view = tray_view(None, now=datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._shown: tuple[TrayState, str] | None = None
        self._generation = 0  # statuses shown from the stream
        self._stopping = False
        self.indicator = open_indicator(os_name, self.on_action, images=self._images(self.view.state),
                                        title=self.view.title, entries=menu_entries(self.view))

    def _images(self, state: TrayState) -> list[Any]:
        from .icons import draw_icon

        return [draw_icon(state, self.panel, size) for size in ICON_SIZES]

    def on_action(self, key: str) -> None:
        """A menu entry (from the toolkit's thread): quit at once, the rest on their own thread."""
        if key == "quit":
            self.stop()
        elif key not in ("session", "separator"):
            threading.Thread(target=self._run_action, args=(key,), name=f"tray-{key}", daemon=True).start()

    def _run_action(self, key: str) -> None:
        message = self.actions.run(key, self.status)
        try:  # show the outcome at once, unless the watch stream has already shown something newer
            generation = self._generation
            reply = self.actions.request("status")
            if reply.get("Succeeded") is True:
                self.show(reply, only_if_generation=generation)
        except Exception:  # noqa: S110 - the stream shows it a moment later
            pass
        notify = getattr(self.indicator, "notify", None)
        if message and notify is not None:
            try:
                notify(message)
            except Exception:  # noqa: S110 - a notification is a nicety
                pass

    def show(self, status: dict[str, Any] | None, *, from_stream: bool = False,
             only_if_generation: int | None = None) -> None:
        """Redraws for a new status (None: runtime unreachable); cheap when nothing visible changed.
        ``only_if_generation``: skipped when the stream has shown a status since that generation."""
        from ..platform.locking import held_by_another_process
        from ..settings import load_settings_report

        report = load_settings_report(self.paths.settings_file)
        running = status is None and held_by_another_process(self.paths.lock_file) is True
        with self._lock:
            if only_if_generation is not None and only_if_generation != self._generation:
                return
            if from_stream:
                self._generation += 1
            self.status = status
            view = tray_view(status, now=datetime.now(timezone.utc), settings_error=report.error,
                             runtime_running=running, stored_settings=report.settings.to_file_json())
            self.view = view
            last = self._shown or (None, "")
            try:
                images = self._images(view.state) if view.state != last[0] else None
                self.indicator.update(title=view.title, images=images, entries=menu_entries(view))
            except Exception as error:  # the toolkit failed this once: redrawn on the next tick
                self._shown = None
                sys.stderr.write(f"lidguard tray: warning: redraw failed: {type(error).__name__}: {error}\n")
                return
            self._shown = (view.state, view.title)

    # -- threads -----------------------------------------------------------------------------------
    def _follow(self) -> None:
        try:
            for status in status_updates(self.paths, self.stop_event):
                if self.stop_event.is_set():
                    break
                self.show(status, from_stream=True)
        except Exception as error:  # the stream failed for good: show it, keep the menu usable
            sys.stderr.write(f"lidguard tray: warning: status updates ended: {type(error).__name__}: {error}\n")
            if not self.stop_event.is_set():
                self.show(None)

    def _tick(self) -> None:
        while not self.stop_event.wait(1.0):
            # No reply while the lock is held: the runtime may be on its way out (the stream ends before its
            # lock is released), so look at the lock again until it is free - then it is idle, not an error.
            unanswered = self.status is None and self.view.state is TrayState.ERROR
            if self.view.state is TrayState.SUSPEND_PENDING or self._shown is None or unanswered:
                self.show(self.status)

    def _setup(self) -> None:
        threading.Thread(target=self._follow, name="tray-status", daemon=True).start()
        threading.Thread(target=self._tick, name="tray-tick", daemon=True).start()

    def stop(self) -> None:
        if self.stop_event.is_set():
            return
        self._stopping = True
        self.stop_event.set()
        threading.Thread(target=self.indicator.stop, name="tray-stop", daemon=True).start()

    def run(self) -> int:
        def on_signal(signum: int, frame: Any) -> None:
            self.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        dump = getattr(signal, "SIGUSR1", None)
        if dump is not None:  # `kill -USR1` prints every thread's stack to stderr (a stuck toolkit)
            import faulthandler

            faulthandler.register(dump, all_threads=True)
        try:
            self.indicator.run(self._setup)
        except Exception as error:  # the display or the bus went away under the tray
            self.stop_event.set()
            if not self._stopping:
                raise TrayUnavailable(f"the tray's connection ended: {type(error).__name__}: {error}") from error
        return 0
