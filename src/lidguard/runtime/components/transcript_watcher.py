"""One file watcher for every transcript monitor (issue 17: inotify instances are limited, 128 per user
by default; one per monitored session ran out and left the rest polling).

``SharedFolderWatcher`` runs a single ``watchfiles.awatch`` over the set of folders that hold watched
files (not recursive). A change to a watched file sets that file's events. When the set of folders
changes, the running watch is stopped and one over the new set takes its place, so there is never more
than one watcher (one inotify instance on Linux) at a time. Without watchfiles, or when watching fails,
``run`` returns and the monitors' slow poll carries on alone. A whole folder can be watched too
(``set_folders``: a callback gets every changed path in it, new files included; the Codex rollout detector).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

__all__ = ["SharedFolderWatcher"]

DEBOUNCE_MS = 200
STEP_MS = 50


class SharedFolderWatcher:
    def __init__(self, on_failure: Callable[[BaseException], None] | None = None) -> None:
        self._files: dict[Path, set[anyio.Event]] = {}  # watched file -> the events its monitors wait on
        self._folder_callbacks: dict[Path, Callable[[Path], None]] = {}  # watched folder -> its callback
        self._folders_changed = anyio.Event()
        self._on_failure = on_failure
        self.watches_started = 0  # how many watches were opened in turn (never two at once)

    def add(self, path: Path, changed: anyio.Event) -> None:
        folders = self.folders
        self._files.setdefault(path, set()).add(changed)
        if self.folders != folders:
            self._folders_changed.set()

    def discard(self, path: Path, changed: anyio.Event) -> None:
        folders = self.folders
        events = self._files.get(path)
        if events is not None:
            events.discard(changed)
            if not events:
                del self._files[path]
        if self.folders != folders:
            self._folders_changed.set()

    def replace_event(self, path: Path, old: anyio.Event, new: anyio.Event) -> None:
        events = self._files.get(path)
        if events is not None:
            events.discard(old)
            events.add(new)

    def set_folders(self, callbacks: dict[Path, Callable[[Path], None]]) -> None:
        """Watches exactly these folders as a whole (replacing the ones set before)."""
        folders = self.folders
        self._folder_callbacks = dict(callbacks)
        if self.folders != folders:
            self._folders_changed.set()

    @property
    def folders(self) -> frozenset[Path]:
        return frozenset(path.parent for path in self._files) | frozenset(self._folder_callbacks)

    def _notify(self, changed_paths: set[Path]) -> None:
        for path in changed_paths:
            callback = self._folder_callbacks.get(path.parent)
            if callback is not None:
                callback(path)
            for event in self._files.get(path, ()):
                event.set()

    async def run(self) -> None:
        """Watches until cancelled; returns when watchfiles is missing or watching fails."""
        try:
            import watchfiles
        except ImportError:
            return
        while True:
            self._folders_changed = anyio.Event()
            folders = frozenset(folder for folder in self.folders if folder.is_dir())
            if not folders:
                await self._folders_changed.wait()
                continue
            self.watches_started += 1
            try:
                async for changes in watchfiles.awatch(*sorted(folders), stop_event=self._folders_changed,
                                                       recursive=False, debounce=DEBOUNCE_MS, step=STEP_MS,
                                                       rust_timeout=1000):
                    self._notify({Path(changed) for _, changed in changes})
            except (OSError, RuntimeError) as error:  # inotify limits, a vanished folder
                if self._on_failure is not None:
                    self._on_failure(error)
                if not self._folders_changed.is_set():
                    await self._folders_changed.wait()  # try again once the folders change
