"""How long a blocking Stop hook may live: one formula for the installed timeout and the hook's wait.

Seed 000: the managed timeout of a blocking-capable Stop hook is PostStopSuspendDelaySeconds +
ClosedLidStopFollowUpDelaySeconds + 5 minutes (the dashboard may extend the reply deadline that much),
plus the two margins below (issue 32.6: the margins come out of the installed timeout, never out of that
extended window, so the runtime still waits for a reply until its very end). The agent kills the hook at
that timeout, so the hook waits ``HOOK_GIVE_UP_MARGIN_SECONDS`` less and tells the runtime its wait
(``FollowUpWaitSeconds`` in the stop request); the runtime answers the hook
``RUNTIME_ANSWER_MARGIN_SECONDS`` before that wait ends and stops holding the reply wait for it, so
neither side outlives the agent's timeout. A wire bound (``FollowUpWaitSeconds``) beside ``limits.py``:
used by ``hooks/`` (stdlib only), ``installers/`` and the runtime's stop handler and request boundary
(which never import ``hooks/``). Stdlib only.
"""

from __future__ import annotations

__all__ = [
    "FOLLOW_UP_EXTENSION_SECONDS",
    "HOOK_GIVE_UP_MARGIN_SECONDS",
    "MAX_FOLLOW_UP_WAIT_SECONDS",
    "RUNTIME_ANSWER_MARGIN_SECONDS",
    "runtime_answer_after_seconds",
    "stop_hook_timeout_seconds",
    "stop_hook_wait_seconds",
]

FOLLOW_UP_EXTENSION_SECONDS = 300  # the dashboard may extend a reply deadline by 5 minutes
HOOK_GIVE_UP_MARGIN_SECONDS = 15  # the hook's own start, request and exit fit in this
RUNTIME_ANSWER_MARGIN_SECONDS = 5  # the runtime answers a waiting hook this long before its wait ends
MAX_FOLLOW_UP_WAIT_SECONDS = 2 * 86_400 + FOLLOW_UP_EXTENSION_SECONDS  # bound of FollowUpWaitSeconds


def stop_hook_timeout_seconds(post_stop_delay_seconds: int, follow_up_window_seconds: int) -> int:
    """The timeout written into the agent's hook configuration (seed 000's window plus both margins)."""
    return (post_stop_delay_seconds + follow_up_window_seconds + FOLLOW_UP_EXTENSION_SECONDS
            + HOOK_GIVE_UP_MARGIN_SECONDS + RUNTIME_ANSWER_MARGIN_SECONDS)


def stop_hook_wait_seconds(post_stop_delay_seconds: int, follow_up_window_seconds: int) -> int:
    """How long the hook waits for the runtime's answer: it gives up before the agent kills it."""
    timeout = stop_hook_timeout_seconds(post_stop_delay_seconds, follow_up_window_seconds)
    return max(1, timeout - HOOK_GIVE_UP_MARGIN_SECONDS)


def runtime_answer_after_seconds(hook_wait_seconds: float) -> float:
    """When the runtime answers a hook that said it waits ``hook_wait_seconds`` (at once if tiny)."""
    return max(0.0, hook_wait_seconds - RUNTIME_ANSWER_MARGIN_SECONDS)
