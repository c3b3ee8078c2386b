"""Stand-ins for the macOS command-line tools, for running the macOS backend on any OS.

Each tool in the test's bin folder is a two-line script calling ``main(<tool>)``. Every call is
appended to ``$LIDGUARD_STANDIN_LOG`` as one JSON line ``{"tool", "argv", "pid", "sudo"}``; outputs
come from the recorded fixtures in ``fixtures/`` filled from the machine state in
``$LIDGUARD_STANDIN_STATE`` (JSON), which ``pmset -a ...`` and ``osascript set volume`` update.
Nothing here touches the real machine: ``sudo`` only re-runs its (stand-in) command line.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEFAULT_STATE = {
    "machine": "apple-silicon",     # pmset -g flavour: apple-silicon | intel
    "clamshell": "open",            # open | closed | absent (desktop: no AppleClamshellState)
    "displays": "apple-silicon-builtin",
    "sleep_disabled": 0,
    "hibernatemode": 3,
    "power": "ac",                  # pmset -g batt: ac | battery | desktop
    "sudo": "ok",                   # ok | password (no sudoers rule: sudo -n refuses; without -n the user
                                    # types the password, unless "sudo_terminal": "none")
    "sleepnow_exit": 0,
    "powermetrics": "intel",        # intel | apple-silicon | unsupported
    "cpu_temperature": 61.25,
    "volume": 35,
    "hid_idle_ns": 1_500_000_000,   # ioreg IOHIDSystem HIDIdleTime; null: the key is missing
    "muted": False,
    "visudo": "ok",                 # ok | reject
    # pmset -g assertions: [{"pid", "process", "type", "name", "details"?}] beside powerd's UserIsActive
    # (the caffeinate stand-in adds nothing here).
    "assertions": [],
}


def _state_path() -> Path:
    return Path(os.environ["LIDGUARD_STANDIN_STATE"])


def load_state() -> dict:
    path = _state_path()
    state = dict(DEFAULT_STATE)
    if path.exists():
        state.update(json.loads(path.read_text()))
    return state


def save_state(state: dict) -> None:
    path = _state_path()
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state))
    os.replace(temporary, path)


def _log(tool: str, argv: list[str]) -> None:
    entry = {"tool": tool, "argv": argv, "pid": os.getpid(), "sudo": os.environ.get("LIDGUARD_STANDIN_SUDO") == "1"}
    with open(os.environ["LIDGUARD_STANDIN_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")


def _fixture(name: str, **values: object) -> str:
    text = (FIXTURES / name).read_text()
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def _fail(message: str, code: int = 1) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def caffeinate(argv: list[str]) -> None:
    watched = int(argv[argv.index("-w") + 1]) if "-w" in argv else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:  # caffeinate(8) -w: hold the assertion until that process exits
        if watched is not None:
            try:
                os.kill(watched, 0)
            except ProcessLookupError:
                return
            if Path(f"/proc/{watched}/stat").exists():
                fields = Path(f"/proc/{watched}/stat").read_text().rsplit(")", 1)[1].split()
                if fields and fields[0] == "Z":
                    return
        time.sleep(0.05)


# pmset(1): "pmset must be run as root in order to modify any settings" (reads need no root).
PMSET_NEEDS_ROOT = "pmset must be run as root in order to modify any settings"


def pmset(argv: list[str]) -> None:
    state = load_state()
    if argv[:2] == ["-g", "batt"]:
        print(_fixture(f"pmset-g-batt-{state['power']}.txt"), end="")
    elif argv[:2] == ["-g", "custom"]:
        print(_fixture("pmset-g-custom-apple-silicon.txt", hibernatemode=state["hibernatemode"]), end="")
    elif argv == ["-g"]:
        note = " (sleep prevented by SleepDisabled, caffeinate)" if state["sleep_disabled"] else ""
        print(_fixture(f"pmset-g-{state['machine']}.txt", sleep_disabled=state["sleep_disabled"],
                       hibernatemode=state["hibernatemode"], sleep_note=note), end="")
    elif argv[:2] == ["-g", "assertions"]:
        print(_assertions(state), end="")
    elif argv == ["sleepnow"]:
        if state["sleepnow_exit"]:
            _fail("Sleep could not be requested: IOPMSleepSystem returned 0xe00002bc", state["sleepnow_exit"])
        # As on a Mac: with SleepDisabled set `sleepnow` answers as usual but the machine stays awake.
        key = "sleeps_prevented" if state["sleep_disabled"] else "sleeps"
        state[key] = state.get(key, 0) + 1
        save_state(state)
        print("Sleeping now...")
    elif len(argv) == 3 and argv[0] == "-a" and argv[1] in ("disablesleep", "hibernatemode"):
        if os.environ.get("LIDGUARD_STANDIN_SUDO") != "1" and not state.get("root"):
            _fail(PMSET_NEEDS_ROOT)
        key = "sleep_disabled" if argv[1] == "disablesleep" else "hibernatemode"
        state[key] = int(argv[2])
        save_state(state)
    else:
        _fail(f"pmset stand-in: unexpected arguments {argv}", 2)


def _assertions(state: dict) -> str:
    listed = ""
    for item in state.get("assertions", []):
        listed += (f"   pid {item['pid']}({item['process']}): [0x0000a1b2000{item['pid']:05d}] 00:05:12 "
                   f"{item['type']} named: \"{item['name']}\"  \n")
        if item.get("details"):
            listed += f"\tDetails: {item['details']}\n"
    kinds = [item["type"] for item in state.get("assertions", [])]
    return _fixture("pmset-g-assertions.txt", listed=listed,
                    prevent_system_sleep=int("PreventSystemSleep" in kinds),
                    prevent_idle_sleep=int("PreventUserIdleSystemSleep" in kinds))


def _sudoers_allows(command: list[str]) -> bool:
    """As real sudo: an installed NOPASSWD rule lets a command run without a password when one of its
    commands is that exact command line (a rule command without arguments allows any arguments)."""
    path = os.environ.get("LIDGUARD_MACOS_SUDOERS_PATH")
    try:
        text = Path(path).read_text() if path else ""
    except OSError:
        return False
    for line in text.splitlines():
        if line.lstrip().startswith("#") or "NOPASSWD:" not in line:
            continue
        for allowed in line.split("NOPASSWD:", 1)[1].split(","):
            words = allowed.split()
            if words == command or words == command[:1]:
                return True
    return False


# sudo(8)'s own words, without a rule: with -n it never asks; without -n and no terminal it cannot ask.
SUDO_PASSWORD_REQUIRED = "sudo: a password is required"
SUDO_NO_TERMINAL = ("sudo: a terminal is required to read the password; either use the -S option to read "
                    "from standard input or configure an askpass helper")


def sudo(argv: list[str]) -> None:
    state = load_state()
    arguments = [word for word in argv if word != "-n"]
    if state["sudo"] != "ok" and not _sudoers_allows(arguments):
        if "-n" in argv:
            _fail(SUDO_PASSWORD_REQUIRED)
        if state.get("sudo_terminal") == "none":  # else: the user at the terminal types the password
            _fail(SUDO_NO_TERMINAL)
    os.environ["LIDGUARD_STANDIN_SUDO"] = "1"
    os.execv(arguments[0], arguments)


def ioreg(argv: list[str]) -> None:
    state = load_state()
    if "IOHIDSystem" in argv:  # the idle time, as `ioreg -c IOHIDSystem -r -d 1 -k HIDIdleTime` prints it
        if state["hid_idle_ns"] is not None:
            print(f'+-o IOHIDSystem  <class IOHIDSystem, id 0x100000431, registered, matched, active>\n'
                  f'    {{\n      "HIDIdleTime" = {state["hid_idle_ns"]}\n    }}\n')
        return
    if state["clamshell"] == "absent":
        return
    value = "Yes" if state["clamshell"] == "closed" else "No"
    print(_fixture("ioreg-clamshell.txt", clamshell=value, causes_sleep="Yes"), end="")


def system_profiler(argv: list[str]) -> None:
    state = load_state()
    if state.get("system_profiler_seconds"):  # a slow system_profiler (issue 32.10): answers after that long
        time.sleep(float(state["system_profiler_seconds"]))
    print(_fixture(f"displays-{state['displays']}.json"), end="")


def powermetrics(argv: list[str]) -> None:
    state = load_state()
    if os.environ.get("LIDGUARD_STANDIN_SUDO") != "1":
        _fail("powermetrics must be invoked as the superuser")
    if state["powermetrics"] == "unsupported":
        _fail("powermetrics: unrecognized sampler: smc")
    print(_fixture(f"powermetrics-smc-{state['powermetrics']}.txt", cpu=state["cpu_temperature"]), end="")


def ps(argv: list[str]) -> None:
    print(_fixture("ps-axo.txt"), end="")


def afplay(argv: list[str]) -> None:
    if not argv:
        _fail("usage: afplay [option...] audio_file")


def osascript(argv: list[str]) -> None:
    state = load_state()
    script = argv[argv.index("-e") + 1]
    if script == "output volume of (get volume settings)":
        print(state["volume"])
    elif script == "output muted of (get volume settings)":
        print("true" if state["muted"] else "false")
    elif script.startswith("set volume output volume "):
        words = script.split()
        state["volume"] = int(words[4])
        if script.endswith("without output muted"):
            state["muted"] = False
        save_state(state)
    elif script.startswith("set volume output muted "):
        state["muted"] = script.endswith("true")
        save_state(state)
    else:
        _fail(f"osascript stand-in: unexpected script {script!r}", 2)


def visudo(argv: list[str]) -> None:
    path = argv[argv.index("-cf") + 1]
    if load_state()["visudo"] != "ok" or "NOPASSWD:" not in Path(path).read_text():
        _fail(f"{path}:3:1: syntax error")
    print(f"{path}: parsed OK")


TOOLS = {name: function for name, function in globals().items()
         if name in ("caffeinate", "pmset", "sudo", "ioreg", "system_profiler", "powermetrics", "ps",
                     "afplay", "osascript", "visudo")}


def main(tool: str) -> None:
    argv = sys.argv[1:]
    _log(tool, argv)
    TOOLS[tool](argv)


def install(folder: Path) -> Path:
    """Writes one executable per tool into ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for tool in TOOLS:
        script = folder / tool
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(here)!r})\n"
                          f"import macos_standin\nmacos_standin.main({tool!r})\n")
        script.chmod(0o755)
    return folder
