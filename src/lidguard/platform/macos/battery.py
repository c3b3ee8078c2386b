"""AC/battery from ``pmset -g batt`` (pmset(1)).

First line ``Now drawing from 'AC Power'`` or ``'Battery Power'`` (``'UPS Power'`` counts as not AC);
then one line per battery such as `` -InternalBattery-0 (id=4653155)\t80%; charging; 1:10 remaining
present: true``. Desktops print only the first line.
"""

from __future__ import annotations

import re

from ..api import PowerSource

__all__ = ["parse_pmset_battery"]

_SOURCE = re.compile(r"Now drawing from '([^']+)'")
_BATTERY = re.compile(r"-InternalBattery-\d+.*?\t?\s*(\d{1,3})%;\s*([^;]+);")


def parse_pmset_battery(text: str) -> PowerSource:
    source = _SOURCE.search(text)
    on_ac = None if source is None else source.group(1).strip().lower() == "ac power"
    battery = _BATTERY.search(text)
    if battery is None:
        return PowerSource(on_ac)
    status = battery.group(2).strip()
    return PowerSource(on_ac, min(int(battery.group(1)), 100), status[:1].upper() + status[1:])
