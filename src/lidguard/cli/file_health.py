"""Files that need the user's hand, for ``status`` and ``doctor``: lid-action backups set aside as
unusable, logs lidguard cannot append to, a full disk under the data folder. None of them takes
protection away (it lives in memory and in the OS); each is one line."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..fileio import append_problem
from ..runtime.dimming import set_aside_brightness_backups
from ..runtime.protection import set_aside_lid_backups, set_aside_message

if TYPE_CHECKING:
    from ..platform.paths import LidGuardPaths

__all__ = ["file_problems"]


def file_problems(paths: LidGuardPaths) -> list[str]:
    lines = [set_aside_message(aside) for aside in set_aside_lid_backups(paths.lid_backup_file)]
    lines += [f"Brightness backup set aside as {aside}: it could not be used and its values were not restored "
              "(display dimming stays off until then). Check the display brightness, then delete that file."
              for aside in set_aside_brightness_backups(paths.brightness_backup_file)]
    for log in (paths.session_log_file, paths.suspend_history_file, paths.exception_log_file):
        problem = append_problem(log)
        if problem is not None:
            lines.append(f"Log {log} cannot be written: {problem}; its new lines are lost until it is fixed "
                         "(protection is not affected).")
    if _disk_full(paths.data_dir):
        lines.append(f"The disk holding {paths.data_dir} is full: settings cannot be saved and logs lose their "
                     "new lines (protection is not affected).")
    return lines


def _disk_full(folder: os.PathLike[str]) -> bool:
    statvfs = getattr(os, "statvfs", None)  # not on Windows
    if statvfs is None:
        return False
    try:
        info = statvfs(folder)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < _FULL_BELOW_BYTES


_FULL_BELOW_BYTES = 64 * 1024
