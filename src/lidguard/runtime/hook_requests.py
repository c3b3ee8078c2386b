"""The native hook client's "run this hook" request (issue 36): the runtime runs the hook itself.

The client (``native/hook_client.c``) sends the hook's argv, stdin, working folder and the environment
values the hook reads (``ipc/hook_frame.py``); the runtime runs the SAME engine the Python hook runs
(``hooks.runner.hook_steps``: the only module of ``runtime/`` that reaches into ``hooks/``, lazily, at the
first such request), answering each request the engine makes exactly as a request from the hook process
would be answered (encoded, decoded, checked at the wire boundary, handled), with the ancestry read from
the client's pid (its peer credentials). The reply is the hook's stdout bytes and exit code.

Whatever this path cannot answer as the Python hook would is a fallback (the client then runs the Python
hook with the same argv and stdin): an environment naming another data folder or platform, an argv the
hook dispatch would not take (``--help``, an unknown ``*-hook``), a runtime that is stopping (a start must
launch the next one), any error.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from ..ipc.hook_frame import IDENTITY_ENVIRONMENT, HookFrame, reply_answer, reply_fallback, reply_hold
from ..ipc.protocol import ProtocolError, decode_message, encode_message, failure_response
from .requests import RequestError, check_wire_message

__all__ = ["answer_hook_frame"]

HOLD_MARGIN_SECONDS = 30  # the client waits this much past a held request's own bound


def _same_identity(environ: dict[str, str]) -> bool:
    return all(environ.get(name) == os.environ.get(name) for name in IDENTITY_ENVIRONMENT)


def _environment(runtime: Any, frame: HookFrame, peer_pid: int | None) -> Any:
    from ..hooks.runner import HookEnvironment

    class ServedHookEnvironment(HookEnvironment):
        """A hook run inside the runtime: the runtime is up (nothing to launch, bring back or recover)."""

        def sessions_to_bring_back(self) -> bool:
            return False

        def launch_if_dead(self) -> None:
            return None

    return ServedHookEnvironment(runtime.paths, recover=False, environ=frame.environ, cwd=frame.cwd,
                                 ancestry_pid=peer_pid)


async def _one_request(runtime: Any, message: dict[str, Any]) -> dict[str, Any]:
    """One engine request, handled as the same request arriving on the socket would be."""
    from ..ipc.platform_match import refusal, with_client_platform

    request = with_client_platform(message)
    try:
        wire = decode_message(encode_message(request))
        check_wire_message(wire)
    except (ProtocolError, RequestError) as error:
        return failure_response(str(error))
    reply = await runtime.handle_message(wire, wire_checked=True)
    # The hook process decodes the reply line it receives: the engine gets what it would have got.
    reply = decode_message(encode_message(reply))
    return refusal(reply, request["ClientPlatform"]) or reply


def _dispatchable(argv: list[str]) -> str | None:
    """The agent key when ``lidguard <argv>`` goes straight to the hook engine (cli.main's rule)."""
    from ..agents import agent_for_hook_command

    if not argv or not argv[0].lower().endswith("-hook"):
        return None
    if any(token.lower() in ("--help", "-h") for token in argv[1:]):
        return None
    return agent_for_hook_command(argv[0])


async def answer_hook_frame(runtime: Any, frame: HookFrame, peer_pid: int | None,
                            hold: Callable[[bytes], Awaitable[None]]) -> bytes:
    """The reply to one "run this hook" frame (never raises): "A" with the hook's stdout, or "F"."""
    try:
        if peer_pid is None:
            return reply_fallback("the client's process is unknown")
        if not _same_identity(frame.environ):
            return reply_fallback("the client's environment names another data folder or platform")
        provider = _dispatchable(frame.argv)
        if provider is None:
            return reply_fallback("not a hook command this runtime runs")
        from ..hooks.runner import START_REPLY_TIMEOUT_SECONDS, hook_output_bytes, hook_steps

        steps = hook_steps(provider, frame.argv[1:], frame.stdin, _environment(runtime, frame, peer_pid))
        try:
            request = steps.send(None)  # type: ignore[arg-type]
            while True:
                message, auto_start, reply_timeout = request
                if reply_timeout > START_REPLY_TIMEOUT_SECONDS:  # a blocking Stop: the client waits with us
                    await hold(reply_hold(int(reply_timeout) + HOLD_MARGIN_SECONDS))
                reply = await _one_request(runtime, message)
                if auto_start and reply.get("RuntimeStopping") is True:
                    steps.close()  # a start must launch the next runtime: the Python hook's client does that
                    return reply_fallback("the runtime is stopping")
                request = steps.send(reply)
        except StopIteration as done:
            return reply_answer(0, hook_output_bytes(done.value))
    except Exception as error:  # noqa: BLE001 - the runtime never dies of a request; the client falls back
        runtime.exception_log.record("hook-request-failed", error)
        return reply_fallback(f"{type(error).__name__}")
