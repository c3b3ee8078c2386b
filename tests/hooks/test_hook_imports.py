"""What a hook process imports beyond its floor (``python -c "import json, socket, os"``), in a fresh
virtual environment started with ``-I`` (issue 22): this machine's global interpreter pre-imports
``typing``, ``pathlib`` and more through a ``.pth`` file, which would hide them in a plain run.

Every stdlib module the hook adds costs its budget (about 6 ms above the floor for everything); one
that is needed goes into ``ALLOWED_BEYOND_THE_FLOOR`` on purpose, with its cost measured."""

from __future__ import annotations

import json
import subprocess

from lidguard.agents import AGENTS, agent
from lidguard.providers import AgentProvider, agent_process_word

from .conftest import run_hook_process

# __future__: ``from __future__ import annotations`` (0.1 ms); fcntl: the runtime lock probe.
ALLOWED_BEYOND_THE_FLOOR = {"__future__", "fcntl"}
PROBE = (
    "import json, socket, os, sys\n"
    "before = set(sys.modules)\n"
    "from lidguard.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "new = set(sys.modules) - before\n"
    "print(json.dumps({'code': code, 'modules': sorted(new)}), file=sys.stderr)\n"
)
SESSION = {"session_id": "s1", "cwd": "/w/app", "transcript_path": "/w/t.jsonl"}
PROMPT = {**SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "run the tests"}
EVENTS = [
    {**SESSION, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
     "tool_use_id": "toolu_1"},
    {**SESSION, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
     "tool_use_id": "toolu_1"},
    {**SESSION, "hook_event_name": "Notification", "message": "Claude needs your permission",
     "notification_type": "permission_prompt"},
    {**SESSION, "hook_event_name": "PermissionRequest", "tool_name": "Bash"},
    {**SESSION, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"},
]


def _beyond_the_floor(lidguard, fresh_venv, event: dict) -> tuple[set[str], set[str]]:
    """(stdlib modules, lidguard modules) a `claude-hook` run of ``event`` loaded beyond the floor."""
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", PROBE, "claude-hook"], env=lidguard.env,
                            input=json.dumps(event).encode(), capture_output=True, timeout=60)
    report = json.loads(result.stderr.decode().strip().splitlines()[-1])
    assert report["code"] == 0, result.stderr
    modules = set(report["modules"])
    return {m for m in modules if not m.startswith("lidguard")}, {m for m in modules if m.startswith("lidguard")}


def test_a_tool_event_of_a_live_session_loads_nothing_costly_in_a_fresh_interpreter(lidguard, fresh_venv):
    # A live, protected session: the runtime holds its lock and a lid backup exists (the recovery check
    # then looks at the lock; it once built pathlib objects for that).
    assert lidguard.wait_until(lambda: run_hook_process(lidguard, "claude", json.dumps(PROMPT)).returncode == 0
                               and "s1" in {s["sessionIdentifier"] for s in lidguard.json("status")["sessions"]},
                               timeout=60)
    for event in EVENTS:
        stdlib, ours = _beyond_the_floor(lidguard, fresh_venv, event)
        assert stdlib <= ALLOWED_BEYOND_THE_FLOOR, (event["hook_event_name"], sorted(stdlib - ALLOWED_BEYOND_THE_FLOOR))
        assert "lidguard.providers" not in ours and "lidguard.hooks.outputs" not in ours, sorted(ours)
        # The lazy registry: a claude-hook loads the Claude module and no other agent's (issue 35.1).
        assert {m for m in ours if m.startswith("lidguard.agents.")} == {"lidguard.agents.claude"}, sorted(ours)
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert log.count("command=mark-session-active") >= 2 and "command=stop" in log


def test_the_hook_names_its_providers_as_the_provider_module_does():
    # The registry holds plain text (the enum costs the hook path); it must stay the enum's values, each
    # agent module must say the same, and each hook's key must be its provider's ancestry word.
    for key, value in AGENTS.items():
        provider = AgentProvider(value)
        module = agent(key)
        assert module is not None and module.KEY == key and module.PROVIDER == value
        assert agent_process_word(provider) == key
