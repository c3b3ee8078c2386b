"""Running a command INSIDE a real-logind instance's PID namespace, on the host's file system.

logind identifies a caller by its pid as the bus sees it: a process outside the instance's PID
namespace is pid 0 there, and ``Inhibit`` answers ``System.Error.EPROTO``. So code under test runs as

    nsenter -t NSPID -p -- unshare --mount --mount-proc --propagation private --
        [setpriv --reuid=U --regid=U --clear-groups --] env -i ... DBUS_SYSTEM_BUS_ADDRESS=<instance> CMD

(a /proc of its own PID namespace, the host's file system otherwise; for a test uid the instance's
passwd and group are bound over the host's in that private mount namespace). Killing nsenter does not
end its child, so every process gets its own process group (``start_new_session``) and is ended with
``killpg``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from real_logind import RealLogind


def inside_argv(instance: RealLogind, argv: Sequence[str], *, uid: int | None = None,
                env: Mapping[str, str] | None = None) -> list[str]:
    """The command line that runs ``argv`` inside ``instance`` as root (``uid`` None) or as ``uid``."""
    prefix = ["nsenter", "-t", str(instance.nspid), "-p", "--",
              "unshare", "--mount", "--mount-proc", "--propagation", "private", "--"]
    if uid is not None:
        # The instance's passwd and group (its test users) in this private mount namespace, so the
        # process finds its own user name as it would on a real machine.
        prefix += ["sh", "-c", 'mount --bind "$0/passwd" /etc/passwd && mount --bind "$0/group" /etc/group '
                   '&& exec "$@"', str(instance.stage),
                   "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {}),
                   "DBUS_SYSTEM_BUS_ADDRESS": instance.bus_address}
    return [*prefix, "env", "-i", *(f"{key}={value}" for key, value in environment.items()), *argv]


def run_inside(instance: RealLogind, argv: Sequence[str], *, uid: int | None = None,
               env: Mapping[str, str] | None = None, timeout: float = 60,
               input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(inside_argv(instance, argv, uid=uid, env=env), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(input_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        instance.kill(process)
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def popen_inside(instance: RealLogind, argv: Sequence[str], *, uid: int | None = None,
                 env: Mapping[str, str] | None = None, **options: Any) -> subprocess.Popen[Any]:
    """A long-lived process inside (an inhibitor holder, ...), ended by the instance's ``reset``."""
    process = subprocess.Popen(inside_argv(instance, argv, uid=uid, env=env), start_new_session=True,
                               **options)
    instance.processes.append(process)
    return process


# A tiny logind client run inside with the system python3 (python3-dbus): hold an inhibitor until
# stdin closes, or call a Manager method; one JSON line out.
CLIENT = r"""
import json, os, sys
import dbus
manager = dbus.Interface(dbus.SystemBus().get_object("org.freedesktop.login1", "/org/freedesktop/login1"),
                         "org.freedesktop.login1.Manager")
def failed(error):
    print(json.dumps({"error": error.get_dbus_name(), "message": error.get_dbus_message()}), flush=True)
    sys.exit(1)
command = sys.argv[1]
if command == "hold":
    try:
        fd = manager.Inhibit(sys.argv[2], sys.argv[4] if len(sys.argv) > 4 else "test-holder",
                             "held by a test", sys.argv[3]).take()
    except dbus.DBusException as error:
        failed(error)
    print(json.dumps({"held": fd}), flush=True)
    sys.stdin.read()
elif command == "call":
    try:
        if sys.argv[2].endswith("WithFlags"):
            getattr(manager, sys.argv[2])(dbus.UInt64(int(sys.argv[3])))
        else:
            getattr(manager, sys.argv[2])(False)
    except dbus.DBusException as error:
        failed(error)
    print(json.dumps({"ok": True}))
elif command == "can":
    print(json.dumps({name: str(getattr(manager, name)()) for name in sys.argv[2:]}))
"""
SYSTEM_PYTHON = "/usr/bin/python3"


def client_argv(*arguments: str) -> list[str]:
    return [SYSTEM_PYTHON, "-c", CLIENT, *arguments]
