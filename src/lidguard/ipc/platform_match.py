"""A demo never talks to real use (issue 33.1): the client and the runtime compare their platforms.

Every request carries the client's platform (``ClientPlatform``: ``fake``, ``linux``, ``macos``,
``windows``, ...) and every reply the runtime's (``Platform``, plus ``PlatformUse``: ``test``, ``demo``
or ``real``). When one side is the fake platform (which protects nothing) and the other is not, the
runtime applies nothing and answers a refusal naming both (``PlatformMismatch``), and a client that
finds the mismatch in a reply (a runtime that did not check) turns the reply into the same refusal.
Only fake against real counts: two real backends never meet (one host, one OS).

Stdlib only (hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FAKE", "client_platform", "mismatch_message", "platform_fields", "refusal", "runtime_refusal",
           "with_client_platform"]

FAKE = "fake"


def client_platform() -> str:
    """The platform this process would run the runtime on: ``fake`` or a real backend's name (read each
    time: a few environment look-ups)."""
    from ..platform import selected_platform_name

    try:
        return selected_platform_name()
    except ValueError:  # an unknown LIDGUARD_PLATFORM: the runtime says so when it starts
        from .. import switches

        return switches.platform_name() or "unknown"


def platform_fields(name: str) -> dict[str, str]:
    """What every reply of a runtime on the platform ``name`` carries."""
    from .. import switches

    use = "test" if switches.in_test_mode() else "demo" if name == FAKE else "real"
    return {"Platform": name, "PlatformUse": use}


def _describe(name: str, use: str = "") -> str:
    if name == FAKE:
        kind = "the test suite's" if use == "test" else "the demo's"
        return f"{kind} fake platform (protects nothing)"
    return f"the real {name} platform"


def mismatch_message(runtime: str, runtime_use: str, client: str) -> str | None:
    """The refusal when exactly one of the two is the fake platform, else None."""
    if (runtime == FAKE) == (client == FAKE):
        return None
    if client == FAKE:
        from .. import switches

        reason = switches.fake_platform_reason() or "chosen by the caller"
        return (f"Refused: the running LidGuard runtime uses {_describe(runtime, runtime_use)}, but this command "
                f"uses the fake platform ({reason}); a demo never talks to real use. Run it without "
                f"LIDGUARD_PLATFORM=fake, or give the demo its own LIDGUARD_DATA_DIR.")
    return (f"Refused: the running LidGuard runtime uses {_describe(runtime, runtime_use)}, but this command "
            f"uses the real {client} platform; nothing was applied. Stop the demo's runtime with "
            f"`LIDGUARD_PLATFORM=fake lidguard stop-runtime` (same LIDGUARD_DATA_DIR), then try again.")


def runtime_refusal(fields: dict[str, str], client: Any) -> str | None:
    """The runtime's refusal of a request from a client on the other kind of platform (None: go on; a
    request without ``ClientPlatform`` is not checked)."""
    if not isinstance(client, str) or not client:
        return None
    runtime = fields["Platform"]
    if (runtime == FAKE) == (client == FAKE):
        return None
    return (f"Refused: this LidGuard runtime uses {_describe(runtime, fields['PlatformUse'])}, the client "
            f"{_describe(client[:32])}; nothing was applied.")


def with_client_platform(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with this process's ``ClientPlatform`` (a copy; one the caller set is kept)."""
    if "ClientPlatform" in request:
        return request
    return {**request, "ClientPlatform": client_platform()}


def refusal(reply: dict[str, Any], client: str) -> dict[str, Any] | None:
    """The refusal a client makes of a reply from a runtime on the other kind of platform (the runtime's
    own refusal too: the client names its own switch), else None (a reply without a platform: left)."""
    runtime = reply.get("Platform")
    if not isinstance(runtime, str):
        return None
    use = reply.get("PlatformUse")
    message = mismatch_message(runtime, use if isinstance(use, str) else "", client)
    if message is None:
        return None
    return {**reply, "Succeeded": False, "Message": message, "PlatformMismatch": True}
