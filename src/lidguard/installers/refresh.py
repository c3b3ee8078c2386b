"""Refreshes the installed Stop hooks after a settings change moved their timeout (issue 32.5).

``lidguard settings`` changing PostStopSuspendDelaySeconds or ClosedLidStopFollowUpDelaySeconds changes the
Stop hook timeout (``ipc.stop_timeout``); each agent whose lidguard hooks are installed gets them
rewritten under its config locks, the agents without lidguard hooks are left alone. Never raises: what
could not be refreshed is one line naming the command that does it. The demo (the fake platform outside
the tests, ``switches.demo_mode``) never refreshes them: its settings are not the ones the hooks read.
"""

from __future__ import annotations

from pathlib import Path

from . import PROVIDERS, InstallError, available_providers
from .common import HookStatus, stop_hook_timeout_seconds
from .locks import config_files

__all__ = ["refresh_stop_hooks"]


def refresh_stop_hooks(settings_file: Path, previous_timeout: int) -> list[str]:
    """Lines for the settings output; empty when the timeout did not change or no hooks are installed."""
    from ..platform.locking import ConfigLockError, config_lock

    timeout = stop_hook_timeout_seconds(settings_file)
    if timeout == previous_timeout:
        return []
    from ..switches import demo_mode

    if demo_mode():  # the hooks real agents run read the real settings, never the demo's
        return ["Agent hooks left alone: the demo's settings never change the real agents' Stop hooks "
                "(LIDGUARD_PLATFORM=fake keeps its own data folder)."]
    present, _ = available_providers()
    refreshed: list[str] = []
    lines: list[str] = []
    for key in present:
        provider = PROVIDERS[key]
        if not provider.stop_timeout:  # the OpenCode plugin has no Stop timeout
            continue
        try:
            with config_lock(*config_files(key, None)):
                status = provider.status(None, timeout)[0].split(": ", 1)[1]
                if status != HookStatus.NEEDS_UPDATE:  # not ours, already right, or unreadable
                    continue
                provider.install(None, timeout)
            refreshed.append(provider.display)
        except (InstallError, ConfigLockError, OSError) as error:
            lines.append(f"Stop hook of {provider.display} not refreshed ({error}); "
                         f"run: lidguard hook-install --provider {key}")
    if refreshed:
        lines.insert(0, f"Stop hooks refreshed (timeout {timeout} seconds): {', '.join(refreshed)}")
    return lines
