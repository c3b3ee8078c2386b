"""Files that need the user's hand, for ``status`` and ``doctor``: lid-action backups set aside as
unusable and logs lidguard cannot append to. None of them takes protection away; each is one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fileio import append_problem
from ..runtime.protection import set_aside_lid_backups, set_aside_message

if TYPE_CHECKING:
    from ..platform.paths import LidGuardPaths

__all__ = ["file_problems"]


def file_problems(paths: LidGuardPaths) -> list[str]:
    lines = [set_aside_message(aside) for aside in set_aside_lid_backups(paths.lid_backup_file)]
    for log in (paths.session_log_file, paths.suspend_history_file, paths.exception_log_file):
        problem = append_problem(log)
        if problem is not None:
            lines.append(f"Log {log} cannot be written: {problem}; its new lines are lost until it is fixed "
                         "(protection is not affected).")
    return lines
