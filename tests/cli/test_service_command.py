"""``lidguard service install|remove|status``: the systemd units (checked by ``systemd-analyze verify``),
the launchd agent and the Windows task as generated text; nothing is ever enabled on this machine (test
mode prints the commands; a recording systemctl first on PATH proves none ran)."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from lidguard.platform.service import service_plan, systemd_quote

TASK_NS = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}


def _analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("systemd-analyze is missing (apt package systemd)")
        pytest.skip("systemd-analyze is not installed")
    return path


def _verify(*units: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_analyze(), "verify", *map(str, units)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SYSTEMD_LOG_LEVEL": "notice"})


@pytest.fixture
def recording_systemctl(lidguard: Any, tmp_path: Path) -> Path:
    calls = tmp_path / "systemctl-calls"
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("systemctl", "launchctl", "schtasks"):
        fake = folder / name
        fake.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n')
        fake.chmod(0o755)
    lidguard.env["PATH"] = f"{folder}:{lidguard.env['PATH']}"
    lidguard.env["LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS"] = "1"
    private = Path(lidguard.env["XDG_RUNTIME_DIR"]) / "systemd" / "private"  # a user manager "runs"
    private.parent.mkdir(parents=True, exist_ok=True)
    private.touch()
    return calls


def test_without_a_user_manager_install_refuses_before_writing_and_status_says_why(lidguard, tmp_path):
    units = lidguard.home / ".config" / "systemd" / "user"
    result = lidguard.run("service", "install")
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "no systemd user manager runs for you" in result.stderr and "--no-enable" in result.stderr
    assert not (units / "lidguard.service").exists()
    assert lidguard.run("service", "install", "--no-enable", check=True).returncode == 0
    status = lidguard.run("service", "status", check=True).stdout
    assert "installed" in status and "Not running them: no systemd user manager runs for you" in status


def test_install_status_remove_on_linux_writes_verified_units_and_runs_nothing(lidguard, recording_systemctl):
    units = lidguard.home / ".config" / "systemd" / "user"
    assert "not installed" in lidguard.run("service", "status", check=True).stdout
    result = lidguard.run("service", "install", check=True)
    assert "not run (test mode): systemctl --user enable --now lidguard.socket" in result.stdout
    service, socket_unit = units / "lidguard.service", units / "lidguard.socket"
    for path in (service, socket_unit):
        assert path.stat().st_mode & 0o777 == 0o600
    text = service.read_text()
    assert "Restart=on-failure\n" in text and "KillMode=process\n" in text and "Requires=lidguard.socket\n" in text
    assert text.splitlines()[7].startswith("ExecStart=") and text.splitlines()[7].endswith(' "run-server"')
    assert f"ListenStream={lidguard.socket}\n" in socket_unit.read_text()
    assert "SocketMode=0600\n" in socket_unit.read_text()
    verified = _verify(service, socket_unit)
    assert verified.returncode == 0, verified.stderr
    status = lidguard.json("service", "status")
    assert [entry["state"] for entry in status["files"]] == ["installed", "installed"]
    service.write_text(text.replace("Restart=on-failure", "Restart=no"))
    assert "differs from what install writes now" in lidguard.run("service", "status", check=True).stdout
    result = lidguard.run("service", "remove", check=True)
    assert "not run (test mode): systemctl --user disable --now lidguard.socket lidguard.service" in result.stdout
    assert not service.exists() and not socket_unit.exists()
    assert "nothing to remove" in lidguard.run("service", "remove", check=True).stdout
    assert not recording_systemctl.exists(), "no service manager command ran in test mode"


def test_systemd_analyze_verify_accepts_awkward_paths_and_rejects_a_broken_unit(tmp_path):
    odd = tmp_path / "a folder with 100% $HOME"
    odd.mkdir()
    executable = odd / "lidguard"
    executable.write_text("#!/bin/sh\nexit 0\n")
    executable.chmod(0o755)
    plan = service_plan("linux", argv=[str(executable), "-m", 'it\'s "$x" 5% \\'], data_dir=tmp_path / "data",
                        socket_path=tmp_path / "run 50%" / "runtime.sock", home=tmp_path, config_home=tmp_path / "c",
                        environment={"XDG_DATA_HOME": str(tmp_path / "d$x%y")}, user_id=1000)
    for path, data in plan.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    units = sorted(plan.files)
    verified = _verify(*units)
    assert verified.returncode == 0, verified.stderr
    # The same unit with the arguments unquoted is refused by systemd (verify can fail).
    service = next(path for path in units if path.name == "lidguard.service")
    service.write_text(service.read_text().replace(systemd_quote('it\'s "$x" 5% \\'), 'it\'s "$x" 5% \\'))
    assert _verify(*units).returncode != 0
    # A program path systemd cannot start is said before anything is written.
    with pytest.raises(ValueError, match="quotes, backslashes"):
        service_plan("linux", argv=[str(odd / 'q"uote')], data_dir=tmp_path, socket_path=tmp_path / "s",
                     home=tmp_path, config_home=tmp_path, environment={}, user_id=1)


def test_control_characters_never_reach_a_unit(tmp_path):
    with pytest.raises(ValueError):
        systemd_quote("a\nExecStartPre=/bin/rm")
    with pytest.raises(ValueError):
        service_plan("linux", argv=["/bin/lidguard"], data_dir=tmp_path, socket_path=tmp_path / "x\n[Service]",
                     home=tmp_path, config_home=tmp_path, environment={}, user_id=1)


def test_a_bad_data_folder_is_one_line_and_exit_1(lidguard):
    lidguard.env["XDG_DATA_HOME"] = str(lidguard.home / "data\nExecStartPre=evil")
    result = lidguard.run("service", "install", "--os", "linux")
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and result.stderr.startswith("lidguard: ")
    assert not (lidguard.home / ".config" / "systemd").exists()


def test_the_launchd_agent_restarts_a_failed_runtime_only(lidguard, recording_systemctl):
    result = lidguard.run("service", "install", "--os", "macos", check=True)
    assert "not run (not this OS): launchctl bootstrap gui/" in result.stdout
    path = lidguard.home / "Library" / "LaunchAgents" / "io.lidguard.runtime.plist"
    agent = plistlib.loads(path.read_bytes())
    assert agent["Label"] == "io.lidguard.runtime"
    assert agent["ProgramArguments"][-1] == "run-server" and os.path.isabs(agent["ProgramArguments"][0])
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    assert path.stat().st_mode & 0o777 == 0o600
    assert "installed" in lidguard.run("service", "status", "--os", "macos", check=True).stdout
    lidguard.run("service", "remove", "--os", "macos", check=True)
    assert not path.exists() and not recording_systemctl.exists()


def test_the_windows_task_is_valid_xml_that_restarts_on_failure(lidguard, recording_systemctl):
    result = lidguard.run("service", "install", "--os", "windows", check=True)
    assert 'not run (not this OS): schtasks /Create /TN "LidGuard Runtime" /XML' in result.stdout
    data = (lidguard.data_dir / "lidguard-runtime-task.xml").read_bytes()
    assert data.startswith(b"\xff\xfe")  # schtasks reads UTF-16
    task = ElementTree.fromstring(data.decode("utf-16").split("\n", 1)[1])
    assert task.find("t:Settings/t:RestartOnFailure/t:Count", TASK_NS) is not None
    assert task.find("t:Settings/t:StopIfGoingOnBatteries", TASK_NS).text == "false"
    assert task.find("t:Triggers/t:LogonTrigger", TASK_NS) is not None
    command = task.find("t:Actions/t:Exec/t:Command", TASK_NS).text
    arguments = task.find("t:Actions/t:Exec/t:Arguments", TASK_NS).text
    assert os.path.isabs(command) and arguments.endswith("run-server")
    assert not recording_systemctl.exists()


def test_windows_arguments_with_spaces_and_ampersands_stay_one_word(tmp_path):
    plan = service_plan("windows", argv=[r"C:\Program Files\Python\python.exe", "-m", "lidguard"],
                        data_dir=tmp_path, socket_path=tmp_path / "s", home=tmp_path, config_home=tmp_path,
                        environment={}, user_id=None)
    [data] = plan.files.values()
    task = ElementTree.fromstring(data.decode("utf-16").split("\n", 1)[1])
    assert task.find("t:Actions/t:Exec/t:Command", TASK_NS).text == r"C:\Program Files\Python\python.exe"
    assert task.find("t:Actions/t:Exec/t:Arguments", TASK_NS).text == "-m lidguard run-server"


def test_status_reports_a_fifo_where_a_unit_belongs_without_hanging(lidguard):
    units = lidguard.home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    os.mkfifo(units / "lidguard.service")
    result = lidguard.run("service", "status", "--os", "linux", check=True, timeout=30)
    assert "lidguard.service: unusable" in result.stdout
