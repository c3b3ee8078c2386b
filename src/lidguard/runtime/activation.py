"""systemd socket activation (``sd_listen_fds``): the listening socket a service manager passed in.

When ``LISTEN_PID`` names this process and ``LISTEN_FDS`` is at least 1, file descriptor 3 is a
listening socket made by the service manager (``lidguard.socket``, or ``systemd-socket-activate``).
The runtime serves on it instead of binding its own, provided it is a Unix stream socket bound to
the runtime's socket path (anything else is closed and the runtime binds as usual, said in the log).
The variables are removed so that nothing the runtime starts takes them for its own. The socket file
belongs to the service manager: the runtime does not unlink it when it exits.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["FIRST_LISTEN_FD", "inherited_listener"]

FIRST_LISTEN_FD = 3
_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


def inherited_listener(socket_path: Path, environ: MutableMapping[str, str] | None = None,
                       pid: int | None = None, *, first_fd: int = FIRST_LISTEN_FD,
                       ) -> tuple[socket.socket | None, str | None]:
    """(the passed listening socket or None, a note for the log or None). ``first_fd``: where the service
    manager's first descriptor is (always 3 for a real runtime; a test passes its own descriptor rather than
    replacing descriptor 3 of the test process, which a test runner may be using)."""
    env = os.environ if environ is None else environ
    listen_pid, listen_fds = env.get("LISTEN_PID", ""), env.get("LISTEN_FDS", "")
    for name in _VARIABLES:
        env.pop(name, None)
    if not listen_pid or listen_pid.strip() != str(os.getpid() if pid is None else pid):
        return None, None
    try:
        count = int(listen_fds.strip())
    except ValueError:
        return None, f"Ignored socket activation: LISTEN_FDS is {listen_fds[:40]!r}, not a number."
    if count < 1:
        return None, None
    try:
        sock = socket.socket(fileno=first_fd)
    except OSError as error:
        return None, f"Ignored socket activation: descriptor {first_fd} is not a socket ({error})."
    try:
        bound = sock.getsockname()
        listening = sock.getsockopt(socket.SOL_SOCKET, getattr(socket, "SO_ACCEPTCONN", 30))
    except OSError as error:
        sock.close()
        return None, f"Ignored socket activation: cannot inspect descriptor {first_fd} ({error})."
    same_path = isinstance(bound, str) and _same_file(bound, socket_path)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM or not listening or not same_path:
        sock.close()
        return None, (f"Ignored socket activation: descriptor {first_fd} is not a listening Unix stream "
                      f"socket on {socket_path}; binding it instead.")
    sock.set_inheritable(False)
    sock.setblocking(False)
    return sock, f"Serving on the socket {socket_path} passed by the service manager (socket activation)."


def _same_file(bound: str, socket_path: Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.samefile(bound, socket_path)
    return False
