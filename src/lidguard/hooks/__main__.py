"""``python -m lidguard.hooks <provider>-hook [--event NAME]``: the hook entry without the CLI."""

from __future__ import annotations

import sys

from .runner import run_hook_command

raise SystemExit(run_hook_command(sys.argv[1:]))
