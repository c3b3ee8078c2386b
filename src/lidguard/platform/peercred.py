"""Who is on the other end of a Unix socket (SO_PEERCRED on Linux, getpeereid on BSD/macOS)."""

from __future__ import annotations

import socket
import sys

__all__ = ["peer_pid", "peer_uid"]


def peer_uid(sock: socket.socket) -> int | None:
    """The peer's uid, or None when the OS cannot tell (the caller then refuses the peer)."""
    if sys.platform.startswith("linux"):
        # struct ucred {pid_t pid; uid_t uid; gid_t gid;} - see unix(7), SO_PEERCRED.
        # Read without ``struct`` (the hook path never imports it): uid is the second native int.
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(raw[4:8], sys.byteorder, signed=True)
    if sys.platform == "darwin":
        # LOCAL_PEERCRED (0x001) at SOL_LOCAL (0): struct xucred {u_int version; uid_t uid; ...}
        raw = sock.getsockopt(0, 0x001, 76)
        return int.from_bytes(raw[4:8], sys.byteorder)
    return None


def peer_pid(sock: socket.socket) -> int | None:
    """The peer's process id (the native hook client's, whose ancestors are the agent's), or None."""
    try:
        if sys.platform.startswith("linux"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            pid = int.from_bytes(raw[0:4], sys.byteorder, signed=True)
        elif sys.platform == "darwin":
            # LOCAL_PEERPID (0x002) at SOL_LOCAL (0): the pid of the peer when it connected.
            raw = sock.getsockopt(0, 0x002, 4)
            pid = int.from_bytes(raw[0:4], sys.byteorder, signed=True)
        else:
            return None
    except OSError:
        return None
    return pid if pid > 0 else None
