"""Closed-lid suspend eligibility (REFERENCE 9.1), pure over the platform's readings."""

from __future__ import annotations

from dataclasses import dataclass

from ..platform.api import DisplayConnector, LidState, count_visible_displays

__all__ = ["Eligibility", "closed_lid_eligibility"]


@dataclass(frozen=True, slots=True)
class Eligibility:
    eligible: bool
    why_not: str  # completes "Skipped <what> because ..."


def closed_lid_eligibility(lid: LidState, displays: list[DisplayConnector] | None) -> Eligibility:
    """Eligible only with the lid closed and no visible display once internal panels are excluded."""
    if lid is LidState.OPEN:
        return Eligibility(False, "the lid is open.")
    if lid is not LidState.CLOSED:
        return Eligibility(False, f"the lid state is {lid.value}.")
    if displays is None:
        return Eligibility(False, "the visible display monitors could not be counted.")
    visible = count_visible_displays(displays, exclude_internal=True)
    if visible > 0:
        return Eligibility(False, f"{visible} visible display monitor(s) are active while the lid is closed.")
    return Eligibility(True, "")
