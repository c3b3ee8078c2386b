"""An agent's own JSON hooks file (``<its config folder>/hooks.json``: Factory Droid, Cursor, OpenHands; Crush's
``crush.json``).

The agent module says where the file is and how its table is edited (its shape is the agent's own); this
class loads it (refusing a file that is not a JSON object), writes it back with a backup, deletes a file
that holds nothing but lidguard's hooks after a removal, and words the results the same for every agent.
:class:`FlatTable` is the edit of a ``"hooks"`` object whose events hold flat handler lists (Cursor, Crush).
Imported only by hook-install / hook-remove / hook-status, never on a hook's path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import (
    HookStatus,
    InstallError,
    InstallResult,
    load_json_object,
    render_json,
    write_config,
    write_or_remove,
)

__all__ = ["FlatTable", "HooksFile"]

Root = dict[str, Any]


@dataclass(frozen=True)
class HooksFile:
    """hook-install / hook-remove / hook-status for one agent's hooks file (``config`` overrides its path).

    ``install(root, path, stop_timeout)`` and ``remove(root, path)`` edit the parsed file in place and say
    whether anything changed (raising ``InstallError`` for a shape they must leave alone); ``status(root,
    original, path, stop_timeout)`` gives hook-status's lines."""

    display: str  # the agent's DISPLAY (the result's provider line)
    name: str  # the agent in messages ("The LidGuard OpenHands hooks ...")
    what: str  # the file in an error ("Factory Droid hooks file")
    folder: Callable[[], Path]  # the agent's config folder
    events: Sequence[str]
    edit_install: Callable[[Root, Path, int], bool]
    edit_remove: Callable[[Root, Path], bool]
    status: Callable[[Root, str | None, Path, int], list[str]]
    install_notes: Callable[[Path], list[str]] = field(default=lambda path: [])
    ignorable: tuple[str, ...] = ()  # keys that alone do not keep a file after a removal ("version")
    file_name: str = "hooks.json"  # the file in the agent's config folder (Crush: crush.json)

    @property
    def EVENTS(self) -> tuple[str, ...]:  # noqa: N802 - what agents/table.py reads of an installer
        return tuple(self.events)

    def config_root(self) -> Path:
        return self.folder()

    def path(self, config: Path | None) -> Path:
        return (config if config is not None else self.folder() / self.file_name).absolute()

    def locked_files(self, config: Path | None) -> list[Path]:
        return [self.path(config)]

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        changed = self.edit_install(root, path, stop_timeout)
        result = InstallResult(self.display, path, changed, f"The LidGuard {self.name} hooks are already installed.")
        if changed:
            saved = write_config(path, render_json(root, original), self.what)
            result.backups += [saved] if saved else []
            result.message = f"Installed the LidGuard {self.name} hooks."
        result.notes += self.install_notes(path)
        return result

    def remove(self, config: Path | None) -> InstallResult:
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        changed = original is not None and self.edit_remove(root, path)
        result = InstallResult(self.display, path, changed, f"No LidGuard {self.name} hooks were installed.")
        if changed:
            saved = write_or_remove(path, root, original, self.what, ignorable=self.ignorable)
            result.backups += [saved] if saved else []
            result.message = f"Removed the LidGuard {self.name} hooks."
            if not path.exists():
                result.notes.append(f"Deleted {path}: nothing but lidguard's hooks was in it.")
        return result

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        return self.status(root, original, path, stop_timeout)


@dataclass(frozen=True)
class FlatTable:
    """The ``"hooks"`` object of a file whose events each hold a flat list of handler objects, no matcher groups
    (Cursor's hooks.json, Crush's crush.json): each event gets exactly one handler of ours (``entry(event,
    stop_timeout)``), replaced in place, duplicates of ours collapsed into one at the end; the user's handlers and
    the file's other keys stay as they were, in order."""

    events: Sequence[str]
    entry: Callable[[str, int], dict[str, Any]]
    is_ours: Callable[[Any], bool]  # a handler object of ours (by its command)

    def table(self, root: Root, path: Path, *, create: bool) -> dict[str, Any] | None:
        """The ``"hooks"`` object (created when asked), or ``InstallError`` for a shape to leave alone."""
        table = root.get("hooks")
        if table is None and create:
            table = root["hooks"] = {}
        if table is not None and not isinstance(table, dict):
            raise InstallError(f"The \"hooks\" value of {path} is not a JSON object; it was left as it is.")
        for event in self.events:
            if table is not None and event in table and not isinstance(table[event], list):
                raise InstallError(f"The hooks.{event} value of {path} is not a JSON array; it was left as it is.")
        return table

    def install(self, root: Root, path: Path, stop_timeout: int) -> bool:
        table = self.table(root, path, create=True)
        assert table is not None
        changed = False
        for event in self.events:
            wanted = self.entry(event, stop_timeout)
            handlers = table.setdefault(event, [])
            positions = [index for index, handler in enumerate(handlers) if self.is_ours(handler)]
            if len(positions) == 1:
                if handlers[positions[0]] != wanted:
                    handlers[positions[0]] = wanted
                    changed = True
                continue
            for index in reversed(positions):  # none, or duplicates: one handler of ours at the end
                del handlers[index]
            handlers.append(wanted)
            changed = True
        return changed

    def remove(self, root: Root, path: Path) -> bool:
        """Deletes our handlers (and the events and ``"hooks"`` object they leave empty)."""
        table = self.table(root, path, create=False)
        changed = False
        for event in self.events if table is not None else ():
            assert table is not None
            handlers = table.get(event)
            if not isinstance(handlers, list) or not any(self.is_ours(handler) for handler in handlers):
                continue
            handlers[:] = [handler for handler in handlers if not self.is_ours(handler)]
            if not handlers:
                del table[event]
            changed = True
        if table is not None and not table and changed:
            del root["hooks"]
        return changed

    def status(self, root: Root, original: str | None, path: Path, stop_timeout: int) -> list[str]:
        """hook-status's lines: the overall status, the file, each event's state."""
        from .hooks_json import overall

        table = root.get("hooks") if isinstance(root.get("hooks"), dict) else {}
        states: dict[str, str] = {}
        for event in self.events:
            handlers = table.get(event) if isinstance(table, dict) else None
            ours = [handler for handler in handlers if self.is_ours(handler)] if isinstance(handlers, list) else []
            if not ours:
                states[event] = HookStatus.NOT_INSTALLED
            else:
                exact = ours == [self.entry(event, stop_timeout)]
                states[event] = HookStatus.INSTALLED if exact else HookStatus.NEEDS_UPDATE
        lines = [f"Status: {overall(states)}", f"Config: {path}", f"Config exists: {original is not None}"]
        return lines + [f"{event}: {states[event]}" for event in self.events]
