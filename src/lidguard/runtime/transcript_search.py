"""Transcript fallback search (REFERENCE 6): when a Codex or Claude hook gives no transcript path, or
one whose folder no longer exists, find the session's ``.jsonl`` under ``<CODEX_HOME|~/.codex>/sessions``
or ``<CLAUDE_CONFIG_DIR|~/.claude>/projects`` by its session id.

Bounded, never a full-disk walk: only below that root, newest folders and files first (modification
time), symlinks never followed, at most :data:`MAX_DEPTH` levels, :data:`MAX_ENTRIES` directory entries
and :data:`MAX_SECONDS` of wall time. A file matches when its name contains the session id (case-
insensitive) and ends with ``.jsonl``; the match must be unique within what was looked at (0 or 2+ ->
no monitor, with the reason). Runs off the runtime's gate (a worker thread).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..providers import AgentProvider

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "MAX_SECONDS", "SEARCHED_PROVIDERS", "SearchResult", "find_transcript",
           "recent_files", "search_root"]

MAX_DEPTH = 6  # Codex: sessions/YYYY/MM/DD/rollout-*.jsonl; Claude: projects/<project>/<id>.jsonl
MAX_ENTRIES = 20_000
MAX_SECONDS = 2.0
MAX_SESSION_ID_CHARS = 200


@dataclass(frozen=True)
class SearchResult:
    path: Path | None
    message: str
    examined: int = 0


SEARCHED_PROVIDERS = frozenset({AgentProvider.CODEX, AgentProvider.CLAUDE})  # search_root is None for others


def search_root(provider: AgentProvider) -> Path | None:
    """Where the provider keeps its transcripts (an absolute ``CODEX_HOME``/``CLAUDE_CONFIG_DIR`` wins)."""
    home = Path(os.path.expanduser("~"))
    if provider is AgentProvider.CODEX:
        value = os.environ.get("CODEX_HOME", "").strip()
        return (Path(value) if value and os.path.isabs(value) else home / ".codex") / "sessions"
    if provider is AgentProvider.CLAUDE:
        value = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
        return (Path(value) if value and os.path.isabs(value) else home / ".claude") / "projects"
    return None


def _usable_id(session_identifier: str) -> bool:
    return (0 < len(session_identifier) <= MAX_SESSION_ID_CHARS and session_identifier not in (".", "..")
            and not any(char in session_identifier for char in "/\\\0")
            and not any(0xD800 <= ord(char) <= 0xDFFF for char in session_identifier))


def _newest_first(path: str, budget: list[int]) -> list[tuple[float, str, bool]]:
    """(mtime, path, is_dir) of a folder's entries, newest first; counts them against the budget."""
    found = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if not is_dir and not entry.is_file(follow_symlinks=False):
                        continue
                    found.append((entry.stat(follow_symlinks=False).st_mtime, entry.path, is_dir))
                except OSError:
                    continue
    except OSError:
        return []
    found.sort(key=lambda item: item[0], reverse=True)
    return found


def find_transcript(root: Path, session_identifier: str, *, max_entries: int = MAX_ENTRIES,
                    max_seconds: float = MAX_SECONDS, max_depth: int = MAX_DEPTH,
                    clock: Callable[[], float] = time.monotonic) -> SearchResult:
    if not _usable_id(session_identifier):
        return SearchResult(None, "the session id cannot name a transcript file")
    if not root.is_dir():
        return SearchResult(None, f"the transcript folder {root} does not exist")
    needle = session_identifier.lower()
    deadline = clock() + max_seconds
    budget = [max_entries]
    matches: list[str] = []
    stack: list[tuple[str, int]] = [(str(root), 0)]
    out_of_budget = False
    while stack:
        if budget[0] <= 0 or clock() >= deadline:
            out_of_budget = True
            break
        folder, depth = stack.pop()
        children = []
        for _, path, is_dir in _newest_first(folder, budget):
            if is_dir:
                if depth + 1 < max_depth:
                    children.append((path, depth + 1))
            else:
                name = os.path.basename(path).lower()
                if name.endswith(".jsonl") and needle in name:
                    matches.append(path)
        stack.extend(reversed(children))  # the newest folder is searched next
        if len(matches) > 1:
            break
    examined = max_entries - budget[0]
    if len(matches) == 1:
        return SearchResult(Path(matches[0]), f"found {matches[0]}", examined)
    if len(matches) > 1:
        return SearchResult(None, f"{len(matches)} transcripts under {root} match the session id", examined)
    limit = " (the search budget ran out)" if out_of_budget else ""
    return SearchResult(None, f"no transcript under {root} matches the session id{limit}", examined)


def recent_files(root: Path, *, name_ok: Callable[[str], bool], newer_than: float, max_files: int,
                 max_entries: int = MAX_ENTRIES, max_seconds: float = MAX_SECONDS, max_depth: int = MAX_DEPTH,
                 clock: Callable[[], float] = time.monotonic) -> tuple[list[tuple[float, Path]], bool]:
    """The newest files under ``root`` whose name passes ``name_ok`` and whose modification time is
    after ``newer_than`` (newest folders first, the same budgets as ``find_transcript``), newest first,
    at most ``max_files``; and whether a budget ran out before the walk ended."""
    if not root.is_dir():
        return [], False
    deadline = clock() + max_seconds
    budget = [max_entries]
    found: list[tuple[float, Path]] = []
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        if budget[0] <= 0 or clock() >= deadline:
            return sorted(found, reverse=True)[:max_files], True
        folder, depth = stack.pop()
        children = []
        for mtime, path, is_dir in _newest_first(folder, budget):
            if is_dir:
                if depth + 1 < max_depth:
                    children.append((path, depth + 1))
            elif mtime > newer_than and name_ok(os.path.basename(path)):
                found.append((mtime, Path(path)))
        stack.extend(reversed(children))
        if len(found) >= max_files:
            break
    return sorted(found, reverse=True)[:max_files], False
