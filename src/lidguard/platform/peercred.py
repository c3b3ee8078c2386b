"""Who is on the other end of a Unix socket (SO_PEERCRED on Linux, getpeereid on BSD/macOS)."""

from __future__ import annotations

import socket
import struct
import sys

__all__ = ["peer_uid"]


def peer_uid(sock: socket.socket) -> int | None:
    """The peer's uid, or None when the OS cannot tell (the caller then refuses the peer)."""
    if sys.platform.startswith("linux"):
        # struct ucred {pid_t pid; uid_t uid; gid_t gid;} - see unix(7), SO_PEERCRED.
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        return uid
    if sys.platform == "darwin":
        # LOCAL_PEERCRED (0x001) at SOL_LOCAL (0): struct xucred {u_int version; uid_t uid; ...}
        raw = sock.getsockopt(0, 0x001, 76)
        return struct.unpack_from("2I", raw)[1]
    return None
