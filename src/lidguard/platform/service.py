"""The OS service-manager definitions behind ``lidguard service install|remove|status``.

One plan per OS, as text and commands (nothing here runs anything):

* Linux: a systemd user unit pair in ``$XDG_CONFIG_HOME/systemd/user`` (``~/.config/systemd/user``):
  ``lidguard.socket`` listens on the runtime's socket path (0600 in a 0700 folder) and starts
  ``lidguard.service`` on the first connection, which gets the socket as descriptor 3 (LISTEN_FDS,
  ``runtime/activation.py``); the service restarts on failure (a crash, or the watchdog's SIGKILL)
  and leaves the watchdog alone when the runtime dies (``KillMode=process``), so its recovery runs.
* macOS: a launchd agent ``~/Library/LaunchAgents/<label>.plist`` with ``KeepAlive`` restarting it
  after any exit that is not a clean one (an idle runtime that exits cleanly stays down).
* Windows: a Task Scheduler task (XML, UTF-16) that starts the runtime at logon and restarts it on
  failure, registered with ``schtasks /Create /XML``.

The runtime exits when idle; a hook or CLI call brings it back as before, and the session journal
lets a restarted runtime come back with its sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LAUNCHD_LABEL", "SERVICE_OS_NAMES", "WINDOWS_TASK_NAME", "ServicePlan", "service_plan",
           "systemd_quote"]

SERVICE_OS_NAMES = ("linux", "macos", "windows")
LAUNCHD_LABEL = "io.lidguard.runtime"
WINDOWS_TASK_NAME = "LidGuard Runtime"
SYSTEMD_SERVICE = "lidguard.service"
SYSTEMD_SOCKET = "lidguard.socket"
RESTART_SECONDS = 2


@dataclass(frozen=True)
class ServicePlan:
    """What ``install`` writes (path -> bytes) and runs, what ``remove`` runs and deletes."""

    manager: str
    files: dict[Path, bytes]
    enable: list[list[str]] = field(default_factory=list)
    disable: list[list[str]] = field(default_factory=list)
    after_remove: list[list[str]] = field(default_factory=list)  # once the files are gone
    check: list[str] = field(default_factory=list)  # a command that shows the manager's own view


def systemd_quote(word: str) -> str:
    """One ExecStart word for systemd: double-quoted, backslash escapes, ``%`` and ``$`` doubled."""
    if any(ord(character) < 32 for character in word):
        raise ValueError(f"A control character cannot be part of a systemd command line: {word!r}")
    text = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{text}"'


def _systemd_executable(path: str) -> str:
    """The ExecStart program: systemd refuses quotes and backslashes in it and expands no ``$`` there."""
    if any(ord(character) < 32 or character in "\"'\\" for character in path):
        raise ValueError(f"systemd cannot start a program whose path contains quotes, backslashes or control "
                         f"characters: {path!r}. Install lidguard under another path.")
    return '"' + path.replace("%", "%%") + '"'


def _systemd_environment(environment: dict[str, str]) -> str:
    lines = []
    for name, value in sorted(environment.items()):
        lines.append(f"Environment={systemd_quote(f'{name}={value}')}\n")
    return "".join(lines)


def _systemd(argv: list[str], socket_path: Path, config_home: Path, environment: dict[str, str]) -> ServicePlan:
    folder = config_home / "systemd" / "user"
    program, *arguments = [*argv, "run-server"]
    exec_start = " ".join([_systemd_executable(program), *(systemd_quote(word) for word in arguments)])
    listen = str(socket_path)
    if any(ord(character) < 32 for character in listen) or "\\" in listen:
        raise ValueError(f"The socket path {listen!r} cannot be written into a systemd unit.")
    listen = listen.replace("%", "%%")  # a unit path is not quoted; only specifiers need escaping
    socket_unit = (
        "[Unit]\n"
        "Description=lidguard runtime socket (starts the runtime on the first request)\n"
        "\n"
        "[Socket]\n"
        f"ListenStream={listen}\n"
        "SocketMode=0600\n"
        "DirectoryMode=0700\n"
        "\n"
        "[Install]\n"
        "WantedBy=sockets.target\n"
    )
    service_unit = (
        "[Unit]\n"
        "Description=lidguard runtime (keeps the laptop awake while AI coding agents work)\n"
        f"Requires={SYSTEMD_SOCKET}\n"
        f"After={SYSTEMD_SOCKET}\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={exec_start}\n"
        + _systemd_environment(environment) +
        "Restart=on-failure\n"
        f"RestartSec={RESTART_SECONDS}\n"
        "KillMode=process\n"
        "\n"
        "[Install]\n"
        f"Also={SYSTEMD_SOCKET}\n"
    )
    return ServicePlan(
        manager="systemd user units",
        files={folder / SYSTEMD_SOCKET: socket_unit.encode(), folder / SYSTEMD_SERVICE: service_unit.encode()},
        enable=[["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", SYSTEMD_SOCKET]],
        disable=[["systemctl", "--user", "disable", "--now", SYSTEMD_SOCKET, SYSTEMD_SERVICE]],
        after_remove=[["systemctl", "--user", "daemon-reload"]],
        check=["systemctl", "--user", "status", SYSTEMD_SOCKET, SYSTEMD_SERVICE],
    )


def _launchd(argv: list[str], home: Path, log_file: Path, environment: dict[str, str],
             user_id: int | None) -> ServicePlan:
    path = home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    agent: dict[str, object] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": [*argv, "run-server"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # again after a crash or a kill, not after an idle exit
        "ThrottleInterval": RESTART_SECONDS * 5,
        "ProcessType": "Background",
        "StandardErrorPath": str(log_file),
    }
    if environment:
        agent["EnvironmentVariables"] = dict(sorted(environment.items()))
    domain = f"gui/{user_id if user_id is not None else 0}"
    return ServicePlan(
        manager="launchd agent",
        files={path: _plist(agent)},
        enable=[["launchctl", "bootstrap", domain, str(path)]],
        disable=[["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"]],
        check=["launchctl", "print", f"{domain}/{LAUNCHD_LABEL}"],
    )


def _windows(argv: list[str], data_dir: Path, environment: dict[str, str]) -> ServicePlan:
    import subprocess  # lazily (with xml.sax): every CLI command builds this command's parser
    from xml.sax.saxutils import escape

    path = data_dir / "lidguard-runtime-task.xml"
    command, *arguments = [*argv, "run-server"]
    task = (
        '<?xml version="1.0" encoding="UTF-16"?>\n'
        '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">\n'
        "  <RegistrationInfo><Description>lidguard runtime: keeps the laptop awake while AI coding agents "
        "work</Description></RegistrationInfo>\n"
        "  <Triggers><LogonTrigger><Enabled>true</Enabled></LogonTrigger></Triggers>\n"
        "  <Principals><Principal id=\"Author\"><LogonType>InteractiveToken</LogonType>"
        "<RunLevel>LeastPrivilege</RunLevel></Principal></Principals>\n"
        "  <Settings>\n"
        "    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n"
        "    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n"
        "    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n"
        "    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>\n"
        "    <RestartOnFailure><Interval>PT1M</Interval><Count>999</Count></RestartOnFailure>\n"
        "    <Hidden>true</Hidden>\n"
        "  </Settings>\n"
        "  <Actions Context=\"Author\"><Exec>\n"
        f"    <Command>{escape(command)}</Command>\n"
        f"    <Arguments>{escape(subprocess.list2cmdline(arguments))}</Arguments>\n"
        "  </Exec></Actions>\n"
        "</Task>\n"
    )
    del environment  # a scheduled task inherits the user's environment
    return ServicePlan(
        manager="Windows scheduled task",
        files={path: b"\xff\xfe" + task.encode("utf-16-le")},
        enable=[["schtasks", "/Create", "/TN", WINDOWS_TASK_NAME, "/XML", str(path), "/F"],
                ["schtasks", "/Run", "/TN", WINDOWS_TASK_NAME]],
        disable=[["schtasks", "/Delete", "/TN", WINDOWS_TASK_NAME, "/F"]],
        check=["schtasks", "/Query", "/TN", WINDOWS_TASK_NAME, "/V", "/FO", "LIST"],
    )


def service_plan(os_name: str, *, argv: list[str], data_dir: Path, socket_path: Path, home: Path,
                 config_home: Path, environment: dict[str, str], user_id: int | None) -> ServicePlan:
    """The plan for ``os_name`` (one of ``SERVICE_OS_NAMES``); ``environment`` is what the runtime must
    see that the service manager would not give it (``XDG_DATA_HOME`` set in the user's shell)."""
    if os_name == "linux":
        return _systemd(argv, socket_path, config_home, environment)
    if os_name == "macos":
        return _launchd(argv, home, data_dir / "log" / "launchd-runtime.log", environment, user_id)
    if os_name == "windows":
        return _windows(argv, data_dir, environment)
    raise ValueError(f"No service manager is supported on {os_name}.")


def manager_problem(os_name: str, user_id: int | None) -> str | None:
    """Why the service manager cannot run the definitions for this user now, else None. Linux: a
    systemd user manager answers on ``$XDG_RUNTIME_DIR/systemd/private`` (``/run/user/<uid>`` when the
    variable is unset); a container, an ssh login without PAM or an init without systemd has none.
    launchd and the Task Scheduler are always there."""
    import os

    if os_name != "linux":
        return None
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if not runtime or not os.path.isabs(runtime):
        runtime = f"/run/user/{user_id}" if user_id is not None else ""
    private = os.path.join(runtime, "systemd", "private") if runtime else ""
    if private and os.path.exists(private):
        return None
    return (f"no systemd user manager runs for you ({private or 'XDG_RUNTIME_DIR is unset'} is missing: a "
            "container, an ssh login without a PAM session, or an init without systemd)")


def _plist(agent: dict[str, object]) -> bytes:
    import plistlib  # lazily: see above

    return plistlib.dumps(agent, sort_keys=True)
