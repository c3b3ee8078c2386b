"""The Claude-style hooks table both Claude Code (settings.json) and Codex (hooks.json) read:
``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": ...}]}]}}``.

Edits touch only our handlers (``is_managed_command``); every other key, group and handler stays as it
was, in order. Our handler is replaced in place when its group has the expected matcher, else it is
moved into a group of its own at the end of the event's list (so no other handler changes position).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import HookStatus, InstallError

__all__ = ["HookSpec", "event_states", "handler_positions", "managed_positions", "remove_managed", "upsert_managed"]

IsOurs = Callable[[Any], bool]


@dataclass(frozen=True)
class HookSpec:
    event: str
    matcher: str | None
    handler: dict[str, Any]


def _hooks_table(root: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any] | None:
    table = root.get("hooks")
    if table is None:
        if not create:
            return None
        table = root["hooks"] = {}
    if not isinstance(table, dict):
        raise InstallError(f"The \"hooks\" value of {path} is not a JSON object; it was left as it is.")
    return table


def _groups(table: dict[str, Any], event: str, path: Path, *, create: bool) -> list[Any] | None:
    groups = table.get(event)
    if groups is None:
        if not create:
            return None
        groups = table[event] = []
    if not isinstance(groups, list):
        raise InstallError(f"The hooks.{event} value of {path} is not a JSON array; it was left as it is.")
    return groups


def _handlers(group: Any) -> list[Any] | None:
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return group["hooks"]
    return None


def managed_positions(root: dict[str, Any], event: str, is_ours: IsOurs) -> list[tuple[int, int]]:
    table = root.get("hooks")
    groups = table.get(event) if isinstance(table, dict) else None
    found = []
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        for h, handler in enumerate(_handlers(group) or []):
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                found.append((g, h))
    return found


def handler_positions(root: dict[str, Any]) -> dict[int, tuple[str, int, int, dict[str, Any]]]:
    """id(handler) -> (event, group index, handler index, handler) for every handler object."""
    table = root.get("hooks")
    found: dict[int, tuple[str, int, int, dict[str, Any]]] = {}
    if not isinstance(table, dict):
        return found
    for event, groups in table.items():
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            for h, handler in enumerate(_handlers(group) or []):
                if isinstance(handler, dict):
                    found[id(handler)] = (event, g, h, handler)
    return found


def _matcher(group: dict[str, Any]) -> str | None:
    value = group.get("matcher")
    return value if isinstance(value, str) else None


def _drop(groups: list[Any], targets: list[tuple[int, int]]) -> None:
    """Deletes handlers (highest position first) and groups they leave empty."""
    for g, h in sorted(targets, reverse=True):
        handlers = _handlers(groups[g])
        assert handlers is not None
        del handlers[h]
        if not handlers:
            del groups[g]


def upsert_managed(root: dict[str, Any], specs: list[HookSpec], is_ours_for: Callable[[str], IsOurs],
                   path: Path) -> bool:
    """Makes each spec's event hold exactly one managed handler, equal to ``spec.handler``."""
    before = repr(root.get("hooks"))
    table = _hooks_table(root, path, create=True)
    assert table is not None
    for spec in specs:
        groups = _groups(table, spec.event, path, create=True)
        assert groups is not None
        positions = managed_positions(root, spec.event, is_ours_for(spec.event))
        keep = next(((g, h) for g, h in positions if _matcher(groups[g]) == spec.matcher), None)
        kept = None
        if keep is not None:
            handlers = _handlers(groups[keep[0]])
            assert handlers is not None
            kept = handlers[keep[1]]
        _drop(groups, [position for position in positions if position != keep])
        if kept is not None:
            for group in groups:
                handlers = _handlers(group) or []
                for index, handler in enumerate(handlers):
                    if handler is kept and handler != spec.handler:
                        handlers[index] = dict(spec.handler)
        else:
            group = {"matcher": spec.matcher} if spec.matcher is not None else {}
            group["hooks"] = [dict(spec.handler)]
            groups.append(group)
    return repr(root.get("hooks")) != before


def remove_managed(root: dict[str, Any], events: list[str], is_ours_for: Callable[[str], IsOurs],
                   path: Path) -> bool:
    """Deletes our handlers (and the groups, events and ``hooks`` object they leave empty)."""
    table = _hooks_table(root, path, create=False)
    if table is None:
        return False
    changed = False
    for event in events:
        groups = table.get(event)
        if not isinstance(groups, list):
            continue
        positions = managed_positions(root, event, is_ours_for(event))
        if positions:
            _drop(groups, positions)
            changed = True
        if not groups:
            del table[event]
    if changed and not table:
        del root["hooks"]
    return changed


def event_states(root: dict[str, Any], specs: list[HookSpec], is_ours_for: Callable[[str], IsOurs]
                 ) -> dict[str, str]:
    """Per event: Installed (one managed handler, exactly as expected), NeedsUpdate, or NotInstalled."""
    states: dict[str, str] = {}
    table = root.get("hooks")
    for spec in specs:
        positions = managed_positions(root, spec.event, is_ours_for(spec.event))
        if not positions:
            states[spec.event] = HookStatus.NOT_INSTALLED
            continue
        assert isinstance(table, dict)
        groups = table[spec.event]
        g, h = positions[0]
        exact = (len(positions) == 1 and _matcher(groups[g]) == spec.matcher
                 and groups[g]["hooks"][h] == spec.handler)
        states[spec.event] = HookStatus.INSTALLED if exact else HookStatus.NEEDS_UPDATE
    return states


def overall(states: dict[str, str]) -> str:
    values = set(states.values())
    if values == {HookStatus.INSTALLED}:
        return HookStatus.INSTALLED
    if values == {HookStatus.NOT_INSTALLED}:
        return HookStatus.NOT_INSTALLED
    return HookStatus.NEEDS_UPDATE
