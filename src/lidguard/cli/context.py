"""What every CLI command shares: paths, the platform, the runtime client, the recovery step."""

from __future__ import annotations

import sys
from functools import cached_property
from typing import Any

from ..ipc.client import send_request
from ..l10n import _
from ..platform import load_platform
from ..platform.api import Platform
from ..platform.paths import LidGuardPaths, RuntimeDirError, resolve_paths
from ..shared.recovery import RecoveryError, recover_if_no_runtime
from .output import CliError, escape_control

__all__ = ["CliContext"]


class CliContext:
    def __init__(self) -> None:
        try:
            self.paths: LidGuardPaths = resolve_paths()
        except RuntimeDirError as error:
            raise CliError(str(error)) from error

    @cached_property
    def platform(self) -> Platform:
        try:
            return load_platform()
        except ValueError as error:
            raise CliError(str(error)) from error

    def request(self, command: str, *, auto_start: bool = False, budget: float | None = None,
                **fields: Any) -> dict[str, Any]:
        """``budget``: seconds the whole request may take (``send_request``); None: each step's own bound."""
        body = {"Command": command, **{key: value for key, value in fields.items() if value is not None}}
        return send_request(self.paths.socket_file, body, auto_start=auto_start, budget=budget)

    def recover_if_no_runtime(self) -> None:
        """REFERENCE 1.1: with no runtime alive (its lock free), restore a lid policy left by a crash."""
        try:
            recover_if_no_runtime(self.paths, lambda: self.platform, _warn)
        except RecoveryError as error:
            raise CliError(str(error)) from error


def _warn(text: str) -> None:
    sys.stderr.write(_("lidguard: warning: {error}").format(error=escape_control(text)) + "\n")
