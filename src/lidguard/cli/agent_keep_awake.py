"""What the agents hold themselves (issue 35.5), for ``doctor`` and ``status``.

- Live: the OS's sleep blockers held NOW by an agent lidguard knows - one ``Suspender.list_blockers``
  (logind ListInhibitors, ``pmset -g assertions``, ``powercfg /requests``; never system_profiler or sudo),
  the agent named by ``runtime.blockers.name_agents`` (a watched session's process among the blocker's
  ancestors, an agent program there, else its ``who``). Each says whether lidguard's suspend waits for it
  (``SuspendIgnoresOtherBlockers`` off) or asks the OS to ignore it.
- Configured (doctor only): every agent module's ``own_keep_awake`` (``agents/keep_awake.py``).

Every text is escaped here (another program chose its ``who`` and ``why``). Never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .output import escape_control

__all__ = ["configured_holders", "holder_line", "live_holders", "watched_from_reply"]

_SETTING = "SuspendIgnoresOtherBlockers"


def watched_from_reply(response: Mapping[str, Any] | None) -> dict[int, str]:
    """pid -> ``<Provider>:<session id>`` for the sessions of a status reply that have a watched process."""
    watched: dict[int, str] = {}
    sessions = response.get("Sessions") if response else None
    for session in sessions if isinstance(sessions, list) else []:
        if not isinstance(session, dict):
            continue
        pid, provider = session.get("WatchedProcessIdentifier"), session.get("Provider")
        if type(pid) is int and pid > 0 and isinstance(provider, str):
            watched[pid] = f"{provider}:{session.get('SessionIdentifier') or ''}"
    return watched


def _display(agent: str) -> tuple[str, str]:
    """(the agent's display name, the session id when the blocker is a watched session's) for ``agent``."""
    from ..agents import AGENTS
    from ..agents import agent as agent_module

    provider, _, session = agent.partition(":")
    key = next((key for key, wire in AGENTS.items() if wire == provider), None)
    module = agent_module(key) if key else None
    return (module.DISPLAY if module is not None else provider), session


def _kind(what: str, mode: str) -> str:
    if mode in ("block", "delay"):
        return f"a {what} {mode} inhibitor"
    if mode == "assertion":
        return f"a {what} assertion"
    return f"a {what} power request"


def holder_line(holder: Mapping[str, Any]) -> str:
    """``Claude Code (pid 123) holds a sleep:idle block inhibitor: while it holds it after its session
    ends, lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)``."""
    who = holder["agent"] + (f" session {holder['session']}" if holder.get("session") else "")
    pid = f" (pid {holder['pid']})" if holder.get("pid") is not None else f" (who {holder['who']!r})"
    if holder["ignored"]:
        effect = f"lidguard's suspend asks the OS to ignore it ({_SETTING} is on)"
    else:
        effect = f"while it holds it after its session ends, lidguard's suspend waits for it ({_SETTING} is off)"
    return escape_control(f"{who}{pid} holds {_kind(holder['what'], holder['mode'])}: {effect}")


def live_holders(platform: Any, watched: Mapping[int, str], *, ignores_other_blockers: bool) -> list[dict[str, Any]]:
    """The sleep blockers an agent holds now (one listing), each ``{"agent", "session", "pid", "who",
    "why", "what", "mode", "ignored", "text"}``; empty where the OS cannot list them."""
    from ..runtime.blockers import name_agents, still_blocking

    try:
        blockers = still_blocking(platform.suspend.list_blockers())
        if not blockers:
            return []
        named = name_agents(blockers, platform.process.read_ancestry, watched)
    except Exception:  # noqa: BLE001 - Unsupported, an OS error, a listing bug: nothing to name
        return []
    holders = []
    for blocker in named:
        if not blocker.agent:
            continue
        agent, session = _display(blocker.agent)
        holder: dict[str, Any] = {"agent": agent, "session": session[:200], "pid": blocker.pid,
                                  "who": blocker.who[:200], "why": blocker.why[:200], "what": blocker.what[:100],
                                  "mode": blocker.mode[:32], "ignored": ignores_other_blockers}
        holder["text"] = holder_line(holder)
        holders.append(holder)
    return holders[:20]


def configured_holders(env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every agent's own keep-awake from its config: ``{"agent", "text", "canBlockSuspend", ...}``."""
    from ..agents.keep_awake import configured

    try:
        return [{**item.to_json(), "text": escape_control(item.text)} for item in configured(env)]
    except Exception:  # noqa: BLE001 - never breaks doctor
        return []
