"""lidguard's CLI and runtime run INSIDE a real-logind instance (``ns_host``), as root or as the
instance's unprivileged test user, with the Linux backend and a private HOME.

The machine is the real logind (lid from its ``LidClosed``: the sysfs root has no ACPI lid file) plus
a sysfs root with one internal panel and no external display. What the suspend path reaches is the
instance's recorder (``RealLogind.sleep_requests``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ns_host import run_inside
from real_logind import RealLogind


def build_machine(root: Path, *, external_display: bool = False) -> None:
    drm = root / "sys" / "class" / "drm"
    for name, status in (("card0-eDP-1", "connected"),
                         ("card0-HDMI-A-1", "connected" if external_display else "disconnected")):
        (drm / name).mkdir(parents=True, exist_ok=True)
        (drm / name / "status").write_text(f"{status}\n")


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid)
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


class InsideLidguard:
    """``run``/``json`` the lidguard CLI inside ``instance``; the runtime it starts lives there too."""

    def __init__(self, instance: RealLogind, home: Path, *, uid: int | None = None) -> None:
        self.instance, self.home, self.uid = instance, home, uid
        self.machine_root = home / "machine"
        build_machine(self.machine_root)
        (home / "run").mkdir(mode=0o700, exist_ok=True)
        self.data_dir = home / "data" / "LidGuard"
        self.env = {
            "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_RUNTIME_DIR": str(home / "run"),
            "XDG_CONFIG_HOME": str(home / "config"), "LANG": "C.UTF-8",
            "LIDGUARD_PLATFORM": "linux", "LIDGUARD_TEST_MODE": "1",
            "LIDGUARD_SYSFS_ROOT": str(self.machine_root),
            "LIDGUARD_POLKIT_RULE_PATH": str(instance.rules_dir / "49-lidguard.rules"),
            "LIDGUARD_WATCHDOG": "off",
        }
        for name in ("PYTHONDONTWRITEBYTECODE", "LIDGUARD_NO_EXTENSIONS", "LIDGUARD_LOGIND_BINDING"):
            if name in os.environ:
                self.env[name] = os.environ[name]
        if uid is not None:
            _chown_tree(home, uid)

    def run(self, *args: str, check: bool = False, timeout: float = 60, env: dict[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        result = run_inside(self.instance, [sys.executable, "-m", "lidguard", *args], uid=self.uid,
                            env={**self.env, **(env or {})}, timeout=timeout, input_text=input_text)
        if check and result.returncode != 0:
            raise AssertionError(f"lidguard {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json", check=True).stdout)

    def request(self, payload: dict[str, Any]) -> Any:
        """One IPC request to this HOME's runtime, sent from inside (as the same user)."""
        code = ("import json, sys\nfrom lidguard.ipc.client import send_request\n"
                "from lidguard.platform.paths import resolve_paths\n"
                "print(json.dumps(send_request(resolve_paths().socket_file, json.loads(sys.argv[1]))))")
        result = run_inside(self.instance, [sys.executable, "-c", code, json.dumps(payload)], uid=self.uid,
                            env=self.env)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def write_settings(self, **settings: Any) -> None:
        path = self.data_dir / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
        if self.uid is not None:
            _chown_tree(self.home, self.uid)

    def runtime_pids(self) -> list[int]:
        """Host pids of this HOME's runtimes (the host's /proc sees into the namespace)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if b"run-server" in command and f"\0HOME={self.home}\0".encode() in b"\0" + environ:
                found.append(int(entry.name))
        return found

    def ours(self) -> list[tuple[str, str, str, str, int, int]]:
        return [entry for entry in self.instance.inhibitors() if entry[1] == "lidguard"]

    def wait_until(self, predicate: Any, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            began = time.monotonic()
            if predicate():
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            time.sleep(min(max(0.05, 2 * (now - began)), deadline - now))

    def stop_runtimes(self) -> None:
        for pid in self.runtime_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
