"""A Claude-style ``hooks`` table inside an agent's own ``settings.json`` (Claude Code, Gemini CLI, Qwen Code):
install, remove and read back our handlers in one file, leaving every other key and handler alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import InstallResult, is_managed_command, load_json_object, render_json, write_config, write_or_remove
from .hooks_json import HookSpec, event_states, overall, remove_managed, upsert_managed

__all__ = ["SettingsHooks", "SettingsInstaller"]


class SettingsInstaller:
    """The installer of an agent whose hooks live in its settings.json (``agents/claude.py``, ``gemini.py``,
    ``qwen.py``): the agent module gives ``EVENTS``, ``specs``, ``config_root`` and optionally ``SCHEMA``;
    ``finish(root, head, events)`` adds the agent's own hook-status lines."""

    def __init__(self, agent: Any, finish: Callable[[dict[str, Any], list[str], list[str]], list[str]]) -> None:
        self.agent = agent
        self.finish = finish
        self.EVENTS = tuple(agent.EVENTS)
        self.file = SettingsHooks(agent.PROVIDER, agent.DISPLAY, f"{agent.KEY}-hook", self.EVENTS,
                                  lambda: agent.config_root() / "settings.json", agent.specs,
                                  getattr(agent, "SCHEMA", ""))

    def config_root(self) -> Path:
        return Path(self.agent.config_root())

    def specs(self, stop_timeout: int) -> list[HookSpec]:
        return list(self.agent.specs(stop_timeout))

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        return self.file.install(config, stop_timeout)

    def remove(self, config: Path | None) -> InstallResult:
        return self.file.remove(config)

    def locked_files(self, config: Path | None) -> list[Path]:
        return [self.file.path(config)]

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        root, head, events = self.file.status(config, stop_timeout)
        return self.finish(root, head, events)


@dataclass(frozen=True)
class SettingsHooks:
    """One agent's settings file: ``display`` names the provider in results, ``product`` in messages."""

    display: str
    product: str
    sub: str
    events: tuple[str, ...]
    default_path: Callable[[], Path]
    specs: Callable[[int], list[HookSpec]]  # the handlers for a Stop hook timeout (seconds)
    schema: str = ""

    @property
    def what(self) -> str:
        return f"{self.product} settings file"

    def path(self, config: Path | None) -> Path:
        return (config if config is not None else self.default_path()).absolute()

    def is_ours(self, event: str) -> Callable[[Any], bool]:
        return lambda command: is_managed_command(command, self.sub)

    def _write(self, path: Path, root: dict[str, Any], original: str | None, changed: bool, done: str,
               unchanged: str, *, removing: bool = False) -> InstallResult:
        result = InstallResult(self.display, path, changed, unchanged)
        if changed:
            if removing:
                saved = write_or_remove(path, root, original, self.what, ignorable=("$schema",))
                if not path.exists():
                    result.notes.append(f"Deleted {path}: nothing but lidguard's hooks was in it.")
            else:
                saved = write_config(path, render_json(root, original), self.what)
            result.backups += [saved] if saved else []
            result.message = done
        return result

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        new_file = not root
        changed = upsert_managed(root, self.specs(stop_timeout), self.is_ours, path)
        if new_file and self.schema:
            root = {"$schema": self.schema, **root}
        return self._write(path, root, original, changed, f"Installed the LidGuard {self.product} hooks.",
                           f"The LidGuard {self.product} hooks are already installed.")

    def remove(self, config: Path | None) -> InstallResult:
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        changed = remove_managed(root, list(self.events), self.is_ours, path)
        return self._write(path, root, original, changed, f"Removed the LidGuard {self.product} hooks.",
                           f"No LidGuard {self.product} hooks were installed.", removing=True)

    def status(self, config: Path | None, stop_timeout: int) -> tuple[dict[str, Any], list[str], list[str]]:
        """(the parsed file, the head lines: status, config, exists; the per-event lines)."""
        path = self.path(config)
        root, original = load_json_object(path, self.what)
        states = event_states(root, self.specs(stop_timeout), self.is_ours)
        head = [f"Status: {overall(states)}", f"Config: {path}", f"Config exists: {original is not None}"]
        return root, head, [f"{event}: {states[event]}" for event in self.events]
