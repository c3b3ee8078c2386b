"""The indicator drawn at runtime with Pillow (no shipped bitmaps), for light and dark panels.

Each state has its own colour (``STATE_COLOURS``) and its own mark inside a round badge, so the state
reads at a glance and does not rest on colour alone: idle is an empty ring with a small grey dot (no
cross: a runtime that is not running is the normal idle state), protecting a filled disc with a dot,
protecting through a lid close the same dot inside a ring (a guard around it; nothing that looks like a
closed lid), a pending suspend a moon, paused two bars, held back a disc with a low battery, error a
cross. The ring's outline follows the panel: dark on a light panel, light on a dark one. Pillow is
imported here only, and only ``lidguard tray`` imports this module.
"""

from __future__ import annotations

from typing import Any

from .model import TrayState

__all__ = ["STATE_COLOURS", "draw_icon"]

STATE_COLOURS: dict[TrayState, tuple[int, int, int]] = {
    TrayState.IDLE: (128, 128, 128),
    TrayState.PROTECTING: (46, 160, 67),
    TrayState.PROTECTING_THROUGH_LID_CLOSE: (31, 111, 235),
    TrayState.SUSPEND_PENDING: (230, 140, 20),
    TrayState.PAUSED: (150, 60, 230),
    TrayState.HELD_BACK: (110, 70, 20),
    TrayState.ERROR: (210, 40, 40),
}
_OUTLINE = {"light": (40, 40, 40, 255), "dark": (235, 235, 235, 255)}


def draw_icon(state: TrayState, panel: str = "dark", size: int = 64) -> Any:
    """An RGBA ``PIL.Image`` of ``size`` x ``size`` for ``state`` on a ``panel`` ("light"/"dark")."""
    from PIL import Image, ImageDraw

    if panel not in _OUTLINE:
        raise ValueError(f"panel must be light or dark, not {panel!r}")
    scale = 4  # drawn large and shrunk: smooth edges without anti-aliasing primitives
    big = size * scale
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    colour = (*STATE_COLOURS[state], 255)
    outline = _OUTLINE[panel]
    pad, ring = big // 16, max(scale, big // 14)
    box = (pad, pad, big - pad, big - pad)
    c, r = big // 2, big // 2 - pad  # centre, radius
    mark = outline if state is TrayState.IDLE else (255, 255, 255, 255)
    if state is TrayState.IDLE:
        draw.ellipse(box, fill=None, outline=outline, width=ring)
        draw.ellipse((c - r // 3, c - r // 3, c + r // 3, c + r // 3), fill=colour)
    else:
        draw.ellipse(box, fill=colour, outline=outline, width=ring)
    unit = r // 5
    if state is TrayState.PROTECTING:
        draw.ellipse((c - unit, c - unit, c + unit, c + unit), fill=mark)
    elif state is TrayState.PROTECTING_THROUGH_LID_CLOSE:
        draw.ellipse((c - unit, c - unit, c + unit, c + unit), fill=mark)
        draw.ellipse((c - 3 * unit, c - 3 * unit, c + 3 * unit, c + 3 * unit), outline=mark, width=unit // 2 + 1)
    elif state is TrayState.SUSPEND_PENDING:
        draw.ellipse((c - 3 * unit, c - 3 * unit, c + 3 * unit, c + 3 * unit), fill=mark)
        draw.ellipse((c - unit, c - 4 * unit, c + 4 * unit, c + 2 * unit), fill=colour)
    elif state is TrayState.PAUSED:
        draw.rectangle((c - 2 * unit, c - 3 * unit, c - unit // 2, c + 3 * unit), fill=mark)
        draw.rectangle((c + unit // 2, c - 3 * unit, c + 2 * unit, c + 3 * unit), fill=mark)
    elif state is TrayState.HELD_BACK:
        draw.rectangle((c - 3 * unit, c - 2 * unit, c + 3 * unit, c + 2 * unit), outline=mark, width=unit // 2 + 1)
        draw.rectangle((c + 3 * unit, c - unit, c + 4 * unit, c + unit), fill=mark)
        draw.rectangle((c - 2 * unit, c - unit, c - unit, c + unit), fill=mark)
    elif state is TrayState.ERROR:
        width = unit + unit // 2
        draw.line((c - 2 * unit, c - 2 * unit, c + 2 * unit, c + 2 * unit), fill=mark, width=width)
        draw.line((c - 2 * unit, c + 2 * unit, c + 2 * unit, c - 2 * unit), fill=mark, width=width)
    return image.resize((size, size), Image.Resampling.LANCZOS)
