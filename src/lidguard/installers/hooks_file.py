"""An agent's own JSON hooks file (``<its config folder>/hooks.json``: Factory Droid, Cursor, OpenHands).

The agent module says where the file is and how its table is edited (its shape is the agent's own); this
class loads it (refusing a file that is not a JSON object), writes it back with a backup, deletes a file
that holds nothing but lidguard's hooks after a removal, and words the results the same for every agent.
Imported only by hook-install / hook-remove / hook-status, never on a hook's path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import InstallResult, load_json_object, render_json, write_config, write_or_remove

__all__ = ["HooksFile"]

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

    @property
    def EVENTS(self) -> tuple[str, ...]:  # noqa: N802 - what agents/table.py reads of an installer
        return tuple(self.events)

    def config_root(self) -> Path:
        return self.folder()

    def path(self, config: Path | None) -> Path:
        return (config if config is not None else self.folder() / "hooks.json").absolute()

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
