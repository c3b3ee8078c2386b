"""Other programs' sleep blockers (issue 34.3): naming them and the pure wait decisions.

A blocker is a ``platform.api.SuspendBlocker`` (logind block inhibitor on sleep, macOS assertion,
Windows SYSTEM request). ``name_agents`` adds the agent it belongs to when lidguard knows it: first
by pid ancestry (a session's watched process among the blocker's ancestors, else an agent program
there - ``agents.ancestry.matches_provider``), else by the ``who`` string naming a provider
(``claude``, ``Claude Code``, ``qwen``...). ``still_blocking`` keeps the blockers that still hold a
kind the suspend waits for (``sleep`` on Linux; every kind the OS listed elsewhere).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from ..agents import AGENTS
from ..platform.api import ProcessInfo, SuspendBlocker

__all__ = ["WAITED_KINDS", "blocker_lines", "merge_blockers", "name_agents", "still_blocking", "suspend_blocked_body",
           "webhook_fields"]

# The kinds of a blocker that keep a suspend from going through; anything else it holds (idle,
# shutdown, handle-lid-switch) is not waited for.
WAITED_KINDS = frozenset({"sleep", "PreventSystemSleep", "PreventUserIdleSystemSleep", "SYSTEM"})
# The registry's agents (key -> wire value): a `who` naming the key, or a process that is the agent.
_WHO_WORDS = AGENTS
_PROCESS_WORDS = AGENTS


def _agent_from_who(who: str) -> str | None:
    words = set(re.findall(r"[a-z]+", who.lower()))
    for word, provider in _WHO_WORDS.items():
        if word in words:
            return provider
    return None


def _agent_from_ancestry(chain: list[ProcessInfo], watched: Mapping[int, str]) -> str | None:
    from ..agents.ancestry import is_lidguard_process, matches_provider

    for process in chain:
        if process.pid in watched:
            return watched[process.pid]
    for process in chain:
        if is_lidguard_process(process):
            continue
        for word, provider in _PROCESS_WORDS.items():
            if matches_provider(process, word):
                return provider
    return None


def name_agents(blockers: Iterable[SuspendBlocker], read_ancestry: Callable[[int], list[ProcessInfo]],
                watched: Mapping[int, str]) -> list[SuspendBlocker]:
    """``watched``: pid -> the agent of a session lidguard watches (``Claude:<session id>``)."""
    named = []
    for blocker in blockers:
        agent = None
        if blocker.pid:
            try:
                agent = _agent_from_ancestry(read_ancestry(blocker.pid), watched)
            except Exception:  # noqa: BLE001 - a gone or unreadable process names nothing
                agent = None
        named.append(replace(blocker, agent=agent or _agent_from_who(blocker.who)))
    return named


def still_blocking(blockers: Iterable[SuspendBlocker]) -> list[SuspendBlocker]:
    return [blocker for blocker in blockers if blocker.kinds() & WAITED_KINDS]


def merge_blockers(*lists: Iterable[SuspendBlocker]) -> list[SuspendBlocker]:
    """The blockers of every list once (by who, pid and kinds), the first list's entry winning."""
    seen: dict[tuple[str, int | None, str], SuspendBlocker] = {}
    for blockers in lists:
        for blocker in blockers:
            seen.setdefault((blocker.who, blocker.pid, blocker.what), blocker)
    return list(seen.values())


def blocker_lines(blockers: Iterable[SuspendBlocker]) -> str:
    return "; ".join(blocker.describe() for blocker in blockers)


def webhook_fields(blockers: list[SuspendBlocker]) -> dict[str, object]:
    """Flat fields for the SuspendBlocked body (receivers take no lists): the first blocker's parts,
    how many there are, and every blocker in one line."""
    first = blockers[0]
    fields: dict[str, object] = {"blockedBy": blocker_lines(blockers)[:500], "blockerCount": len(blockers),
                                 "blockerWho": first.who[:200], "blockerWhy": first.why[:200],
                                 "blockerWhat": first.what[:100]}
    if first.pid is not None:
        fields["blockerPid"] = first.pid
    if first.uid is not None:
        fields["blockerUid"] = first.uid
    if first.agent:
        fields["blockerAgent"] = first.agent
    return fields


def suspend_blocked_body(reason: str, mode: str, blockers: list[SuspendBlocker],
                         session_end: dict[str, object] | None = None) -> dict[str, object]:
    """The ``SuspendBlocked`` webhook body (sent to the PreSuspend URL): the trigger's reason, the mode,
    the blocker fields and the ended session's identity when a session end triggered the suspend."""
    body: dict[str, object] = {"eventType": "SuspendBlocked", "reason": reason, "suspendMode": mode,
                               **webhook_fields(blockers)}
    body.update({key: value for key, value in (session_end or {}).items() if key not in body})
    return body
