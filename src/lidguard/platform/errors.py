"""The one exception every backend raises for a missing capability (stdlib only, hook-path safe)."""

from __future__ import annotations

__all__ = ["LidPolicyRefused", "Unsupported"]


class Unsupported(Exception):
    """A capability is not available on this machine; ``reason`` says why in one line."""

    def __init__(self, capability: str, reason: str) -> None:
        super().__init__(f"{capability} is unsupported: {reason}")
        self.capability = capability
        self.reason = reason


class LidPolicyRefused(PermissionError):
    """The OS refused the lid-close policy change for want of a permission (no sudoers rule, no
    polkit grant, an access-denied power setting). Keep-awake stays; ``hint`` is the one line that
    says what is missing (e.g. "the lid-close action needs `lidguard macos-permission install`")."""

    def __init__(self, hint: str, detail: str) -> None:
        super().__init__(f"{hint} ({detail})")
        self.hint = hint
        self.detail = detail
