"""A real systemd-logind 252 + polkitd + dbus-daemon, booted by systemd as PID 1 of private namespaces.

``ci/real-logind/build.sh`` prepares (once, cached by a hash of its inputs) the tree every instance
mounts; ``ci/real-logind/inner.sh`` is the instance's PID 1 until it execs systemd. The pytest process
stays outside: read-only questions go over a second listening socket of the instance's system bus
(``bus_address``), and code under test runs INSIDE the PID namespace through ``ns_host`` (logind sees a
caller from outside as pid 0 and answers Inhibit with EPROTO).

Safety: every sleep/shutdown unit of the instance is a recorder appending one line to
``sleep-requests.log``; /sys/power is a tmpfs inside; / is read-only inside; the instance's cgroups are
``<hierarchy>/lidguard-rl-<id>`` (its cgroup namespace is rooted there). ``stop`` kills PID 1 (the kernel
ends the whole namespace) and removes those cgroups and the instance's folder; ``sweep_stale`` does the
same for instances whose owning pytest process is gone.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "ci" / "real-logind" / "build.sh"
PREFIX = "lidguard-rl-"
CGROUP_ROOT = Path("/sys/fs/cgroup")
# v1 hierarchies systemd may write to (memory and cpuset: accounting is off, systemd leaves them alone).
HIERARCHIES = ("systemd", "unified", "cpu", "cpuacct", "blkio", "devices", "pids", "freezer")
TEST_USER, OTHER_USER = 4242, 4243
TEST_USER_NAME, OTHER_USER_NAME = "lgtest", "lgother"
LOGIND, LOGIND_PATH, MANAGER = "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager"
BOOT_TIMEOUT_SECONDS = 60.0
NEEDED = ("/lib/systemd/systemd", "/lib/systemd/systemd-logind", "/usr/lib/polkit-1/polkitd",
          "/usr/bin/dbus-daemon", "/usr/bin/nsenter", "/usr/bin/unshare", "/usr/bin/setpriv", "gcc")


def grant_rule(user: str, actions: list[str]) -> str:
    """A polkit rule returning YES for ``user`` on ``actions`` (``org.freedesktop.login1.`` may be left off)."""
    import json

    ids = [action if "." in action else f"org.freedesktop.login1.{action}" for action in actions]
    return ("polkit.addRule(function(action, subject) {\n"
            f"    if (subject.user == {json.dumps(user)} && {json.dumps(ids)}.indexOf(action.id) >= 0)\n"
            "        return polkit.Result.YES;\n});\n")


class RealLogindUnavailable(RuntimeError):
    """This machine cannot run the fixture (the reason is the message)."""


def unusable_reason() -> str | None:
    """Why the fixture cannot run here, else None."""
    if os.geteuid() != 0:
        return "needs root (mount, unshare, cgroups)"
    for tool in NEEDED:
        if (shutil.which(tool) if "/" not in tool else (tool if os.path.exists(tool) else None)) is None:
            return f"{tool} is not installed (bash ci/install-test-deps.sh)"
    if not (CGROUP_ROOT / "systemd" / "cgroup.procs").exists():
        return "no cgroup v1 name=systemd hierarchy (a cgroup-v2-only host is untested)"
    return None


def cache_dir() -> Path:
    override = os.environ.get("LIDGUARD_REAL_LOGIND_CACHE")
    if override:
        return Path(override)
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "lidguard-real-logind"


def build_stage() -> Path:
    completed = subprocess.run(["bash", str(BUILD_SCRIPT), str(cache_dir())], capture_output=True, text=True,
                               timeout=300)
    if completed.returncode != 0:
        raise RealLogindUnavailable(f"ci/real-logind/build.sh failed: {completed.stderr.strip()}")
    return Path(completed.stdout.strip().splitlines()[-1])


def _pid_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _remove_cgroups(instance_id: str, *, kill: bool) -> list[str]:
    """Removes ``<hierarchy>/<instance_id>`` everywhere (killing what is left in them first when
    ``kill``); returns the folders that could not be removed."""
    left = []
    for hierarchy in HIERARCHIES:
        top = CGROUP_ROOT / hierarchy / instance_id
        if not top.is_dir():
            continue
        deadline = time.monotonic() + 5.0
        while top.is_dir():
            folders = sorted((path for path in top.rglob("*") if path.is_dir()), key=lambda p: -len(p.parts))
            for folder in [*folders, top]:
                if kill:
                    with contextlib.suppress(OSError):
                        for pid in (folder / "cgroup.procs").read_text().split():
                            with contextlib.suppress(ProcessLookupError):
                                os.kill(int(pid), signal.SIGKILL)
                with contextlib.suppress(OSError):
                    folder.rmdir()
            if top.is_dir():
                if time.monotonic() > deadline:
                    left.append(str(top))
                    break
                time.sleep(0.02)
    return left


def sweep_stale() -> list[str]:
    """Ends instances left by a pytest process that is gone (kill -9, a crashed worker): their cgroups'
    processes, their cgroups and their folders. Returns the instance ids swept."""
    swept = []
    names = {path.name for hierarchy in HIERARCHIES if (CGROUP_ROOT / hierarchy).is_dir()
             for path in (CGROUP_ROOT / hierarchy).glob(f"{PREFIX}*")}
    names |= {path.name for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*")}
    for name in sorted(names):
        owner_file = Path(tempfile.gettempdir()) / name / "owner"
        try:
            owner = int(owner_file.read_text())
        except (OSError, ValueError):
            owner = 0
        if owner and _pid_alive(owner):
            continue
        _remove_cgroups(name, kill=True)
        shutil.rmtree(Path(tempfile.gettempdir()) / name, ignore_errors=True)
        swept.append(name)
    return swept


def leftovers() -> list[str]:
    """Everything of any instance still on the host (cgroups, folders), for the session-end check."""
    found = [str(path) for hierarchy in HIERARCHIES if (CGROUP_ROOT / hierarchy).is_dir()
             for path in (CGROUP_ROOT / hierarchy).glob(f"{PREFIX}*")]
    found += [str(path) for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*")]
    return found


class RealLogind:
    """One booted instance. ``handle_lid_switch``: logind's HandleLidSwitch (``suspend`` or ``ignore``);
    ``holdoff_seconds``: its HoldoffTimeoutSec (lid closes are ignored that long after start-up and after
    each resume - and the fixture's fake sleep resumes at once, so with the lid still closed logind
    suspends again once it is over: a test counting suspends picks a hold-off longer than its window)."""

    def __init__(self, *, handle_lid_switch: str = "suspend", holdoff_seconds: int = 1) -> None:
        self.handle_lid_switch = handle_lid_switch
        self.holdoff_seconds = holdoff_seconds
        self.stage = build_stage()
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.id = self.folder.name
        self.bus_address = f"unix:path={self.folder}/system_bus_socket"
        self.nspid = 0
        self.boot_seconds = 0.0
        self._booted_at = 0.0
        self._launcher: subprocess.Popen[bytes] | None = None
        self._connection: Any = None
        self.processes: list[subprocess.Popen[Any]] = []
        try:
            self._boot()
        except BaseException:
            self.stop()
            raise

    # -- life cycle ---------------------------------------------------------------------------------
    def _boot(self) -> None:
        self.folder.chmod(0o755)
        (self.folder / "owner").write_text(str(os.getpid()))
        (self.folder / "handle-lid-switch").write_text(self.handle_lid_switch)
        (self.folder / "holdoff-seconds").write_text(str(self.holdoff_seconds))
        (self.folder / "lid-state").write_text("0\n")
        rules = self.folder / "polkit-rules"
        rules.mkdir()
        with contextlib.suppress(KeyError):
            os.chown(rules, pwd.getpwnam("polkitd").pw_uid, 0)
        procs = []
        for hierarchy in HIERARCHIES:
            if (CGROUP_ROOT / hierarchy).is_dir():
                (CGROUP_ROOT / hierarchy / self.id).mkdir()
                procs.append(str(CGROUP_ROOT / hierarchy / self.id / "cgroup.procs"))
        began = time.monotonic()
        script = ('for f in "$@"; do echo $$ > "$f"; done; exec unshare --pid --fork --mount --mount-proc '
                  '--propagation private --uts --ipc --net --cgroup -- "$LG_INNER" "$LG_STAGE" "$LG_FOLDER"')
        with open(self.folder / "unshare.log", "wb") as log:
            self._launcher = subprocess.Popen(
                ["/bin/sh", "-c", script, "sh", *procs], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LG_INNER": str(self.stage / "inner.sh"),
                     "LG_STAGE": str(self.stage), "LG_FOLDER": str(self.folder)})
        deadline = began + BOOT_TIMEOUT_SECONDS
        while not (self.folder / "ready").exists():
            if self._launcher.poll() is not None or time.monotonic() > deadline:
                raise RealLogindUnavailable(f"the real logind instance did not boot:\n{self.log_tail()}")
            if not self.nspid:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    pid = self._launcher.pid
                    self.nspid = int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
            time.sleep(0.01)
        self.boot_seconds = time.monotonic() - began
        self._booted_at = _uptime()
        if not self.nspid:
            pid = self._launcher.pid
            self.nspid = int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])

    def stop(self) -> list[str]:
        """Ends the instance; returns what could not be removed (empty when nothing is left)."""
        self.close_connection()
        for process in self.processes:
            self.kill(process)
        self.processes.clear()
        if self.nspid and f"/{self.id}" in _read(f"/proc/{self.nspid}/cgroup"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.nspid, signal.SIGKILL)  # PID 1: the kernel ends everything in the namespace
        if self._launcher is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._launcher.wait(timeout=30)
        left = _remove_cgroups(self.id, kill=True)
        shutil.rmtree(self.folder, ignore_errors=True)
        return left

    # -- reading it ---------------------------------------------------------------------------------
    def _bus(self) -> Any:
        if self._connection is None:
            from jeepney.io.blocking import open_dbus_connection

            self._connection = open_dbus_connection(bus=self.bus_address)
        return self._connection

    def close_connection(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = None

    def call(self, method: str, signature: str = "", body: tuple[Any, ...] = ()) -> Any:
        from jeepney import DBusAddress, new_method_call

        address = DBusAddress(LOGIND_PATH, bus_name=LOGIND, interface=MANAGER)
        reply = self._bus().send_and_get_reply(new_method_call(address, method, signature, body), timeout=10)
        return reply.body

    def prop(self, name: str) -> Any:
        from jeepney import DBusAddress, Properties

        address = DBusAddress(LOGIND_PATH, bus_name=LOGIND, interface=MANAGER)
        reply = self._bus().send_and_get_reply(Properties(address).get(name), timeout=10)
        return reply.body[0][1]

    def inhibitors(self) -> list[tuple[str, str, str, str, int, int]]:
        """ListInhibitors: (what, who, why, mode, uid, pid) - the pid as the namespace sees it."""
        return [tuple(entry) for entry in self.call("ListInhibitors")[0]]  # type: ignore[misc]

    def sleep_requests(self) -> list[str]:
        """The recorder's lines: one per sleep or shutdown unit logind started."""
        return _read(self.folder / "sleep-requests.log").splitlines()

    def log_text(self, name: str) -> str:
        return _read(self.folder / name)

    def log_tail(self, lines: int = 60) -> str:
        parts = []
        for name in ("unshare.log", "logind.log", "polkit.log", "dbus.log", "sleep-requests.log"):
            text = _read(self.folder / name).splitlines()[-lines:]
            parts.append(f"--- {name} ---\n" + "\n".join(text))
        kmsg = _read(f"/proc/{self.nspid}/root/dev/kmsg").splitlines()[-lines:] if self.nspid else []
        parts.append("--- systemd (PID 1) ---\n" + "\n".join(kmsg))
        return "\n".join(parts)

    # -- driving it ---------------------------------------------------------------------------------
    def set_polkit_rules(self, text: str | None, name: str = "60-test.rules") -> None:
        """Replaces every rule of the instance with ``text`` (None: no rule) and waits for polkitd's reload."""
        folder = self.folder / "polkit-rules"
        existing = list(folder.iterdir())
        if text is None and not existing:
            return
        self._reloading(lambda: ([path.unlink() for path in existing],
                                 (folder / name).write_text(text) if text is not None else None))

    def _reloading(self, change: Any) -> None:
        before = self.log_text("polkit.log").count("Finished loading")
        change()
        deadline = time.monotonic() + 10
        while self.log_text("polkit.log").count("Finished loading") <= before:
            assert time.monotonic() < deadline, f"polkitd did not reload its rules\n{self.log_tail()}"
            time.sleep(0.01)

    def wait_for_polkit_reload(self, change: Any) -> None:
        """Runs ``change`` (e.g. ``lidguard linux-permission install``) and waits for polkitd's reload."""
        self._reloading(change)

    @property
    def rules_dir(self) -> Path:
        return self.folder / "polkit-rules"

    def set_lid(self, closed: bool) -> None:
        """Writes the state the shim reports, then one EV_SW/SW_LID event and EV_SYN into the FIFO."""
        (self.folder / "lid-state").write_text("1\n" if closed else "0\n")
        now = time.time()
        seconds, micros = int(now), int((now % 1) * 1e6)
        event = (struct.pack("llHHi", seconds, micros, 5, 0, int(closed))  # EV_SW, SW_LID
                 + struct.pack("llHHi", seconds, micros, 0, 0, 0))  # EV_SYN, SYN_REPORT
        fd = os.open(f"/proc/{self.nspid}/root/dev/input/event0", os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, event)
        finally:
            os.close(fd)

    def wait_for(self, predicate: Any, timeout: float = 30.0, pause: float = 0.02) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
        return True

    def kill(self, process: subprocess.Popen[Any]) -> None:
        """Ends a process started through ``ns_host`` (its own process group reaches nsenter's child)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def reset(self) -> None:
        """Between tests: holders killed, no polkit rule, the lid open, no inhibitor, no sleep under way,
        the recorder's log emptied (and the resume hold-off over, so a lid close counts again)."""
        for process in self.processes:
            self.kill(process)
        self.processes.clear()
        self.set_polkit_rules(None)
        if self.prop("LidClosed"):
            self.set_lid(False)
        settled = self.wait_for(lambda: not self.prop("LidClosed") and not self.prop("PreparingForSleep")
                                and not self.inhibitors(), timeout=15)
        assert settled, f"the instance did not settle: {self.inhibitors()}\n{self.log_tail()}"
        self.wait_out_holdoff()
        (self.folder / "sleep-requests.log").unlink(missing_ok=True)

    def wait_out_holdoff(self) -> None:
        """Waits until logind's HoldoffTimeoutSec since start-up and since the last (recorded, fake)
        resume is over, so that a lid close counts again. A known timer of logind's, waited for once."""
        last = max([self._booted_at, *(float(line.split()[0]) for line in self.sleep_requests())])
        remaining = last + self.holdoff_seconds + 0.15 - _uptime()
        if remaining > 0:
            time.sleep(remaining)


def _uptime() -> float:
    """CLOCK_BOOTTIME as /proc/uptime gives it: the clock of the recorder's lines."""
    return float(Path("/proc/uptime").read_text().split()[0])


def _read(path: Path | str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""
