"""Runtime components: each owns some policy effects and answers a few questions.

The runtime runs one event at a time under its gate: ``policy.transition`` produces effects and
each effect goes to the component whose ``handles()`` names its type. Afterwards protection is
wanted while ``state.protection_wanted or any(c.wants_protection())`` - and applied unless some
component ``holds_back_protection()`` (emergency hibernation, the battery floor, a pause); no suspend is
scheduled or requested while some component ``holds_back_suspend()`` (a pause); the runtime stays up
while some session exists or ``any(c.busy())``. Adding a component is one new module here plus
one line in ``Runtime.__init__``'s list; components never call each other's private methods.

Everything a component is called with the gate held (``apply``, ``settings_changed``,
``state_changed``) is synchronous on purpose: nothing can block the gate. Slow work (platform
calls, HTTP, fsync) happens in the component's own background tasks, off the gate, and re-enters
the gate to record its result after re-checking that it is still wanted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...settings.model import Settings
    from .. import policy

__all__ = ["Component", "ComponentBase"]


class Component(Protocol):
    def handles(self) -> tuple[type, ...]:
        """The policy effect types this component owns."""
        ...

    def apply(self, effect: policy.Effect) -> None:
        """Reacts to one owned effect (gate held; must not block: spawn background work instead)."""
        ...

    def wants_protection(self) -> bool:
        """True while this component needs keep-awake protection (e.g. a pending suspend's delay)."""
        ...

    def busy(self) -> bool:
        """True while this component has work that must keep the runtime from exiting."""
        ...

    def holds_back_protection(self) -> str | None:
        """Why wanted protection must not be applied now (it is released, sessions stay), or None."""
        ...

    def holds_back_suspend(self) -> str | None:
        """Why no suspend may be scheduled or requested now (a pending one is canceled), or None."""
        ...

    def settings_changed(self, old: Settings, new: Settings) -> None:
        """The runtime settings changed (gate held)."""
        ...

    def state_changed(self) -> None:
        """An event was applied (gate held): sessions, settings or another component's work moved."""
        ...


class ComponentBase:
    """Defaults for the questions a component has no opinion on."""

    def handles(self) -> tuple[type, ...]:
        return ()

    def apply(self, effect: policy.Effect) -> None:
        return None

    def wants_protection(self) -> bool:
        return False

    def busy(self) -> bool:
        return False

    def holds_back_protection(self) -> str | None:
        return None

    def holds_back_suspend(self) -> str | None:
        return None

    def settings_changed(self, old: Settings, new: Settings) -> None:
        return None

    def state_changed(self) -> None:
        return None
