"""The hook path (start, stop, mark-session-*, remove-session) with real processes: stdlib only, raw
settings (the runtime validates them), the same options and messages as the full CLI."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from lidguard.providers import PROVIDER_CHOICES_TEXT

HEAVY = {"pydantic", "pydantic_core", "anyio", "httpx", "trio", "cffi", "psutil", "rich", "mcp", "argparse"}
# lidguard modules that would mean the full CLI or the settings model was loaded.
HEAVY_LIDGUARD = {"lidguard.settings", "lidguard.runtime.daemon", "lidguard.cli.full", "lidguard.platform.api",
                  "lidguard.cli.context"}

# Runs the console script's entry point in-process, then records every imported module.
PROBE = (
    "import json, os, sys\n"
    "from lidguard.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "with open(os.environ['H4_MODULES_OUT'], 'w') as handle:\n"
    "    json.dump(sorted(sys.modules), handle)\n"
    "raise SystemExit(code)\n"
)


def run_probe(lidguard, *args: str, cwd: str | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = lidguard.home / "modules.json"
    env = {**lidguard.env, "H4_MODULES_OUT": str(out)}
    result = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, text=True, capture_output=True,
                            timeout=30, cwd=cwd)
    modules = set(json.loads(out.read_text())) if out.exists() else set()
    out.unlink(missing_ok=True)
    return result, modules


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(name for name in modules
                  if name.split(".")[0] in HEAVY or any(name == m or name.startswith(m + ".") for m in HEAVY_LIDGUARD))


def settings_file(lidguard):
    return lidguard.data_dir / "settings.json"


def test_hook_commands_import_only_the_standard_library(lidguard):
    commands = [
        ("start", "--provider", "claude", "--session", "s1"),  # auto-starts the runtime
        ("start", "--provider", "claude", "--session", "s1"),  # runtime already up
        ("mark-session-softlocked", "--provider", "claude", "--session", "s1", "--reason", "permission"),
        ("mark-session-active", "--provider", "claude", "--session", "s1"),
        ("stop", "--provider", "claude", "--session", "s1"),
        ("remove-session", "--session", "s1"),
        ("stop", "--provider", "claude", "--session", "s1"),
    ]
    for args in commands:
        result, modules = run_probe(lidguard, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert modules, args
        assert heavy_in(modules) == [], args


def test_start_creates_missing_settings_with_the_headless_defaults(lidguard):
    from lidguard.settings.model import headless_defaults

    result, modules = run_probe(lidguard, "start", "--provider", "codex", "--session", "a")
    assert result.returncode == 0, result.stderr
    assert heavy_in(modules) == []
    path = settings_file(lidguard)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == headless_defaults().to_file_json()
    assert path.read_text() == json.dumps(headless_defaults().to_file_json(), indent=2) + "\n"
    assert result.stderr == ""


def test_stdlib_default_dict_matches_the_model():
    from lidguard.settings.model import headless_defaults
    from lidguard.shared.raw_settings import headless_defaults_json

    assert headless_defaults_json() == headless_defaults().to_file_json()
    assert list(headless_defaults_json()) == list(headless_defaults().to_file_json())


def test_start_sends_the_hand_edited_settings_to_a_running_runtime(lidguard):
    lidguard.run("start", "--provider", "codex", "--session", "a", check=True)
    path = settings_file(lidguard)
    data = json.loads(path.read_text())
    data["SessionTimeoutMinutes"] = 33
    path.write_text(json.dumps(data))
    lidguard.run("start", "--provider", "codex", "--session", "b", check=True)
    status = lidguard.json("status")
    assert status["settings"]["sessionTimeoutMinutes"] == 33


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe garbage",
                                     b'{"PowerRequest": {"Reason": "\\ud800"}}'])
def test_start_with_a_corrupt_settings_file_still_protects_and_warns_once(lidguard, content):
    path = settings_file(lidguard)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    result, modules = run_probe(lidguard, "start", "--provider", "codex", "--session", "a")
    assert result.returncode == 0, result.stderr
    assert heavy_in(modules) == []
    warnings = result.stderr.splitlines()
    assert len(warnings) == 1 and str(path) in warnings[0] and warnings[0].startswith("lidguard: warning:")
    assert "Started Codex:a." in result.stdout
    assert path.read_bytes() == content, "the file is never rewritten"
    status = lidguard.json("status")
    assert status["activeSessionCount"] == 1


def test_unreadable_settings_file_still_protects(lidguard):
    if os.geteuid() == 0:
        # root reads a 0000 file; a directory in its place is unreadable for everyone.
        settings_file(lidguard).mkdir(parents=True)
    else:
        settings_file(lidguard).parent.mkdir(parents=True)
        settings_file(lidguard).write_text("{}")
        settings_file(lidguard).chmod(0)
    result = lidguard.run("start", "--provider", "codex", "--session", "a")
    assert result.returncode == 0, result.stderr
    assert len(result.stderr.splitlines()) == 1 and str(settings_file(lidguard)) in result.stderr


def test_equals_syntax_aliases_and_case_insensitive_names(lidguard):
    result = lidguard.run("START", "--Provider=claude", "--session-identifier=x y", "--cwd=/tmp")
    assert result.returncode == 0, result.stderr
    assert "Started Claude:x y." in result.stdout
    result = lidguard.run("stop", "--provider", "claude", "--session-id", "x y", "--watched-process-id=0")
    assert result.returncode == 0, result.stderr
    assert "Stopped Claude:x y." in result.stdout


def test_mcp_sessions_and_the_fallback_identifier(lidguard, tmp_path):
    result = lidguard.run("start", "--provider", "mcp", "--mcp-provider-name", "tool", "--cwd", str(tmp_path) + "/")
    assert result.returncode == 0, result.stderr
    [session] = lidguard.json("status")["sessions"]
    assert session["sessionIdentifier"] == f"Mcp:tool:{tmp_path}"
    assert session["providerName"] == "tool" and session["workingDirectory"] == str(tmp_path)


@pytest.mark.parametrize(("args", "message"), [
    (("start",),
     f"A provider is required. Use {PROVIDER_CHOICES_TEXT}."),
    (("start", "--provider", "banana"),
     f"Unknown provider: banana. Use {PROVIDER_CHOICES_TEXT}."),
    (("stop", "--provider=banana"),
     f"Unknown provider: banana. Use {PROVIDER_CHOICES_TEXT}."),
    (("start", "--provider", "mcp"), "The --provider-name option is required when --provider mcp is used."),
    (("start", "--provider", "codex", "--parent-pid", "99999999999999999999"),
     "The watched process identifier must be a non-negative integer of at most 2147483647."),
    (("start", "--provider", "codex", "--parent-pid", "-1"),
     "The watched process identifier must be a non-negative integer of at most 2147483647."),
    (("start", "--provider", "codex", "--parent-pid", "1_000"),
     "The watched process identifier must be a non-negative integer of at most 2147483647."),
    (("start", "--provider", "codex", "--parent-pid", "9" * 5000),
     "The watched process identifier must be a non-negative integer of at most 2147483647."),
    (("start", "--provider", "codex", "oops"), "Unexpected argument: oops"),
    (("start", "--provider", "codex", "--"), "An option name is required after --."),
    (("start", "--provider", "codex", "--session", "x" * 600),
     "The session identifier must be at most 512 characters."),
    (("start", "--provider", "mcp", "--provider-name", "n" * 200),
     "The provider name must be at most 128 characters."),
    (("start", "--provider", "codex", "--bogus", "1"), "Unknown option --bogus for start (see `lidguard help start`)."),
    (("remove-session",), "A session identifier is required."),
    (("remove-session", "--all", "--session", "x"), "The --all option cannot be combined with --session."),
    (("remove-session", "--all", "maybe"), "The --all option must be true or false."),
])
def test_validation_errors_are_one_line_and_exit_1(lidguard, args, message):
    result = lidguard.run(*args)
    assert result.returncode == 1
    assert result.stderr == f"lidguard: {message}\n"
    assert result.stdout == ""
    assert not lidguard.runtime_pids()


def test_unknown_provider_text_is_escaped_and_bounded(lidguard):
    result = lidguard.run("start", "--provider", "x\x1b[31m" + "y" * 300)
    assert result.returncode == 1
    assert "\x1b" not in result.stderr and "\\x1b[31m" in result.stderr
    # the echoed word is cut to ~60 characters; the rest is the list of providers the registry names
    assert len(result.stderr) < 120 + len(PROVIDER_CHOICES_TEXT) and result.stderr.count("\n") == 1


def test_stop_and_marks_need_a_running_runtime(lidguard):
    for command in ("stop", "mark-session-active", "mark-session-softlocked"):
        result = lidguard.run(command, "--provider", "claude", "--session", "s")
        assert result.returncode == 1 and result.stderr == "lidguard: LidGuard runtime is not running.\n", command
    result = lidguard.run("remove-session", "--session", "s")
    assert result.returncode == 0
    assert result.stdout == "LidGuard runtime is not running. No active session was removed.\n"
    assert not lidguard.runtime_pids()


def test_mark_softlocked_and_active_reach_the_runtime(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    lidguard.run("mark-session-softlocked", "--provider", "claude", "--session", "s", "--reason=permission", check=True)
    [session] = lidguard.json("status")["sessions"]
    assert session["softLockState"] == "SoftLocked" and session["softLockReason"] == "permission"
    lidguard.run("mark-session-active", "--provider", "claude", "--session", "s", check=True)
    [session] = lidguard.json("status")["sessions"]
    assert session["softLockState"] == "None"


def test_remove_session_all(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    lidguard.run("start", "--provider", "codex", "--session", "t", check=True)
    result = lidguard.run("remove-session", "--all", check=True)
    assert "Active sessions: 0" in result.stdout


@pytest.mark.parametrize("args", [("help", "start"), ("start", "--help"), ("stop", "-h"), ("help", "remove-session"),
                                  ("help", "mark-session-active"), ("mark-session-softlocked", "--HELP")])
def test_help_for_hook_commands_is_the_full_help(lidguard, args):
    result = lidguard.run(*args)
    assert result.returncode == 0, result.stderr
    assert "--provider" in result.stdout or "--session" in result.stdout
    assert "usage:" in result.stdout.lower()


def test_start_from_a_directory_whose_name_is_not_utf8(lidguard):
    folder = os.path.join(os.fsencode(lidguard.home), b"caf\xff")
    os.mkdir(folder)
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "codex"], env=lidguard.env,
                            text=True, capture_output=True, timeout=30, cwd=folder)
    assert result.returncode == 0, result.stderr
    [session] = lidguard.json("status")["sessions"]
    assert session["workingDirectory"].startswith(str(lidguard.home))
    assert session["workingDirectory"].endswith("caf\\xff")
    assert session["sessionIdentifier"] == f"Codex:{session['workingDirectory']}"
    # the same directory gives the same fallback session: a stop from it finds the session
    result = subprocess.run([sys.executable, "-m", "lidguard", "stop", "--provider", "codex"], env=lidguard.env,
                            text=True, capture_output=True, timeout=30, cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "Active sessions: 0" in result.stdout


def test_a_non_utf8_session_argument_is_sent_safely(lidguard):
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "codex", "--session",
                             b"id\xfe"], env=lidguard.env, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    [session] = lidguard.json("status")["sessions"]
    assert session["sessionIdentifier"] == "id\\xfe"


def test_crash_recovery_runs_before_hook_commands_only_when_no_runtime_holds_the_lock(lidguard):
    import signal

    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    assert backup.exists(), "a live runtime keeps the backup while the lid policy is changed"
    result, modules = run_probe(lidguard, "mark-session-active", "--provider", "claude", "--session", "s1")
    assert result.returncode == 0 and heavy_in(modules) == [] and backup.exists()
    assert not [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
    for pid in lidguard.runtime_pids():
        os.kill(pid, signal.SIGKILL)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    stopped = lidguard.run("stop", "--provider", "claude", "--session", "s1")
    assert stopped.returncode == 1 and stopped.stderr == "lidguard: LidGuard runtime is not running.\n"
    assert not backup.exists()
    lidguard.run("stop", "--provider", "claude", "--session", "s1")
    restores = [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
    assert len(restores) == 1


def test_a_deep_working_directory_still_gets_a_bounded_stable_fallback_session(lidguard):
    folder = "/tmp/" + "/".join(["d" * 50] * 12)  # ~600 characters: longer than a session identifier
    first = lidguard.run("start", "--provider", "codex", "--cwd", folder)
    assert first.returncode == 0, first.stderr
    [session] = lidguard.json("status")["sessions"]
    assert session["workingDirectory"] == folder
    assert len(session["sessionIdentifier"]) <= 512 and session["sessionIdentifier"].startswith("Codex:")
    assert session["sessionIdentifier"].endswith(folder[-100:])
    stopped = lidguard.run("stop", "--provider", "codex", "--cwd", folder)
    assert stopped.returncode == 0 and "Active sessions: 0" in stopped.stdout
    other = lidguard.run("start", "--provider", "codex", "--cwd", "/tmp/x" + folder[6:])
    assert other.returncode == 0
    assert lidguard.json("status")["sessions"][0]["sessionIdentifier"] != session["sessionIdentifier"]


@pytest.mark.parametrize("stored", [
    {"SessionTimeoutMinutes": 9999999999}, {"SessionTimeoutMinutes": "soon"}, {"PowerRequest": "yes"},
    {"SuspendMode": "Banana", "PostStopSuspendDelaySeconds": -5},
])
def test_start_and_stop_go_on_whatever_values_the_settings_file_holds(lidguard, stored):
    lidguard.run("start", "--provider", "codex", "--session", "first", check=True)
    path = settings_file(lidguard)
    path.write_text(json.dumps({**json.loads(path.read_text()), **stored}))
    started = lidguard.run("start", "--provider", "codex", "--session", "a")
    assert started.returncode == 0, started.stderr
    stopped = lidguard.run("stop", "--provider", "codex", "--session", "a")
    assert stopped.returncode == 0, stopped.stderr
    assert [s["sessionIdentifier"] for s in lidguard.json("status")["sessions"]] == ["first"]
