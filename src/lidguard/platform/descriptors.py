"""How many file descriptors this process may open (the soft ``RLIMIT_NOFILE``), where the OS has one."""

from __future__ import annotations

__all__ = ["open_file_limit"]


def open_file_limit() -> int | None:
    """The soft descriptor limit; None where there is none to read (Windows) or it is unlimited."""
    try:
        import resource
    except ImportError:
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else int(soft)
