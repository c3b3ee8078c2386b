"""macOS backend over stand-in tools: `mac` drives real lidguard processes with LIDGUARD_PLATFORM=macos
and the stand-ins of standin.py first on PATH; `standins` gives the same for in-process tests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

# --import-mode=importlib puts no test folder on sys.path (as in tests/linux/conftest.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import macos_standin as standin  # noqa: E402


class Standins:
    def __init__(self, folder: Path) -> None:
        self.bin = standin.install(folder / "bin")
        self.state_file = folder / "standin-state.json"
        self.log_file = folder / "standin-calls.jsonl"
        self.sudoers = folder / "sudoers.d" / "lidguard"
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "LIDGUARD_MACOS_STANDIN_DIR": str(self.bin),
            "LIDGUARD_MACOS_TEST_ROOT": "0",
            "LIDGUARD_MACOS_BINDING": "off",
            "LIDGUARD_STANDIN_STATE": str(self.state_file),
            "LIDGUARD_STANDIN_LOG": str(self.log_file),
            "LIDGUARD_MACOS_SUDOERS_PATH": str(self.sudoers),
        }

    def set_machine(self, **state: Any) -> None:
        current = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        current.update(state)
        self.state_file.write_text(json.dumps(current))

    def machine(self) -> dict[str, Any]:
        stored = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        return {**standin.DEFAULT_STATE, **stored}

    def calls(self, tool: str | None = None) -> list[dict[str, Any]]:
        if not self.log_file.exists():
            return []
        entries = [json.loads(line) for line in self.log_file.read_text().splitlines() if line.strip()]
        return [entry for entry in entries if tool is None or entry["tool"] == tool]

    def commands(self, tool: str | None = None) -> list[list[str]]:
        """Each call as [tool, args...], absolute stand-in paths shortened to the tool name."""
        prefix = str(self.bin) + os.sep
        return [[entry["tool"], *[arg[len(prefix):] if arg.startswith(prefix) else arg for arg in entry["argv"]]]
                for entry in self.calls(tool)]

    def clear_calls(self) -> None:
        self.log_file.unlink(missing_ok=True)


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Standins:
    tools = Standins(tmp_path)
    for key, value in tools.env.items():
        monkeypatch.setenv(key, value)
    return tools


@pytest.fixture
def mac(lidguard, standins):
    """The `lidguard` process helper switched to the macOS backend over the stand-ins."""
    lidguard.env.update(standins.env)
    lidguard.env["LIDGUARD_PLATFORM"] = "macos"
    lidguard.tools = standins
    return lidguard
