"""Test-only: a full disk at the file layer, for the processes a fault-injection test starts.

With ``LIDGUARD_TEST_ENOSPC_NAME`` set, ``os.write`` and ``os.pwrite`` to a regular file under ``$XDG_DATA_HOME`` whose
name contains that text (``*``: any file there) fails with ENOSPC, as on a full disk: files can be
created (an inode), no byte can be written. lidguard writes every file through ``os.write``
(``fileio.write_atomic``, the logs and journals), so each write meets the fault.
"""

import errno
import os
import stat

_NAME = os.environ.get("LIDGUARD_TEST_ENOSPC_NAME", "")
_ROOT = os.path.realpath(os.environ.get("XDG_DATA_HOME", "/nonexistent")) + os.sep
_real_write = os.write
_real_pwrite = os.pwrite


def _full(fd):
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False
    return path.startswith(_ROOT) and (_NAME == "*" or _NAME in os.path.basename(path))


def _write(fd, data):
    if _full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _real_write(fd, data)


def _pwrite(fd, data, offset):
    if _full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _real_pwrite(fd, data, offset)


if _NAME:
    os.write = _write
    os.pwrite = _pwrite
