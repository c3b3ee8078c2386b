"""Invalid settings fail closed (seed 004, issue 19 item 3).

A ``start`` whose client could not use the settings file sends ``SettingsProblem`` (the one sentence
every surface prints, ``shared.raw_settings.settings_file_problem``) instead of settings. From then on,
until valid settings arrive (a ``start`` with ``HasSettings`` or the ``settings`` command), the runtime
takes no power action it is unsure the user wants: the lid policy is not changed (restored if it was),
Emergency Hibernation is off and no suspend is scheduled or requested (``holds_back_suspend``); only
the keep-awake request stays while sessions work. The runtime's own settings keep what they were,
with those three turned off, so status shows what is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ComponentBase

if TYPE_CHECKING:
    from ...settings.model import Settings
    from ..app import Runtime

__all__ = ["SettingsGuardComponent", "fail_closed"]


def fail_closed(settings: Settings) -> Settings:
    """``settings`` with every power action lidguard may be unsure about turned off."""
    return settings.replace(change_lid_action=False, emergency_hibernation_on_high_temperature=False)


class SettingsGuardComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.problem: str | None = None

    def holds_back_suspend(self) -> str | None:
        return self.problem

    def engage(self, problem: str, command: str) -> None:
        """Gate held: the settings file cannot be used; ``reconcile`` afterwards releases the lid policy."""
        runtime = self._runtime
        if problem != self.problem:
            runtime.log("settings-fail-closed", command, problem, succeeded=False)
        self.problem = problem
        runtime.suspend.cancel("an unusable settings file")
        runtime.update_settings(fail_closed(runtime.settings))
        runtime.state_changed()

    def clear(self, command: str) -> None:
        """Gate held: valid settings arrived (the caller applies them)."""
        if self.problem is None:
            return
        self.problem = None
        self._runtime.log("settings-fail-closed-ended", command,
                          "Valid settings arrived: lidguard follows them again.")
        self._runtime.state_changed()
