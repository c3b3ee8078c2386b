"""hook-install / hook-remove / hook-status for Gemini CLI and Qwen Code on real files in a temp HOME
(AGENT_CLIS_MORE.md): the user's settings kept, Gemini timeouts in milliseconds, Qwen's seconds-or-milliseconds
rule, GEMINI_CLI_HOME (a home) and QWEN_HOME (the .qwen folder), and hook-status explaining when the CLI will
run no hooks (Gemini's folder trust and hooksConfig, Qwen's disableAllHooks and safe mode)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from lidguard.agents import gemini as gemini_agent
from lidguard.agents import qwen as qwen_agent
from lidguard.installers import PROVIDERS
from lidguard.installers.common import hook_command

gemini, qwen = gemini_agent.installer(), qwen_agent.installer()

ENV = ("GEMINI_CLI_HOME", "QWEN_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE",
       "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "QWEN_CODE_SAFE_MODE", "QWEN_CODE_SIMPLE")
DING = {"type": "command", "name": "ding", "command": "notify-send done"}
USER_GEMINI = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {"AfterAgent": [{"hooks": [DING]}]}}


@pytest.fixture(autouse=True)
def agent_homes(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return isolated_home


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4))
    return path


def test_gemini_install_keeps_the_users_settings_in_milliseconds_and_is_idempotent(agent_homes: Path) -> None:
    path = write(agent_homes / ".gemini" / "settings.json", USER_GEMINI)
    mode_before = stat.S_IMODE(path.stat().st_mode)
    result = gemini.install(None, 430)
    assert result.changed and result.config == path and len(result.backups) == 1
    data = json.loads(path.read_text())
    assert data["security"] == USER_GEMINI["security"]
    after = data["hooks"]["AfterAgent"]
    assert after[0] == USER_GEMINI["hooks"]["AfterAgent"][0]  # the user's handler stays first
    ours = after[1]["hooks"][0]
    assert ours == {"type": "command", "name": "lidguard", "command": hook_command("gemini-hook"), "timeout": 430_000}
    assert data["hooks"]["BeforeTool"] == [{"matcher": "*", "hooks": [{**ours, "timeout": 30_000}]}]
    assert set(data["hooks"]) == set(gemini.EVENTS)
    assert stat.S_IMODE(path.stat().st_mode) == mode_before and path.read_text().startswith("{\n    ")
    assert not gemini.install(None, 430).changed
    assert gemini.status_lines(None, 430)[0] == "Status: Installed"
    assert gemini.status_lines(None, 500)[0] == "Status: NeedsUpdate"  # the AfterAgent timeout follows settings
    assert gemini.remove(None).changed
    assert json.loads(path.read_text()) == USER_GEMINI


def test_gemini_cli_home_replaces_the_home_not_the_gemini_folder(agent_homes: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(agent_homes / "alt"))
    assert gemini.install(None, 430).config == agent_homes / "alt" / ".gemini" / "settings.json"
    assert PROVIDERS["gemini"].roots() == [agent_homes / "alt" / ".gemini"]
    monkeypatch.setenv("GEMINI_CLI_HOME", "relative/ignored")
    assert gemini_agent.config_root() == agent_homes / ".gemini"


def test_qwen_install_uses_qwen_home_and_writes_long_timeouts_in_milliseconds(agent_homes: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QWEN_HOME", str(agent_homes / "q"))
    write(agent_homes / "q" / "settings.json", {"disableAllHooks": False, "model": {"name": "m"}})
    result = qwen.install(None, 430)
    assert result.config == agent_homes / "q" / "settings.json" and result.changed
    data = json.loads(result.config.read_text())
    assert data["model"] == {"name": "m"} and set(data["hooks"]) == set(qwen.EVENTS)
    assert data["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": hook_command("qwen-hook"),
                                                 "timeout": 430}]}]
    assert data["hooks"]["Notification"][0]["matcher"] == "permission_prompt"
    # Qwen reads 1000 and more as milliseconds: a Stop wait that long is written in milliseconds.
    assert qwen_agent.timeout_value(999) == 999 and qwen_agent.timeout_value(1000) == 1_000_000
    qwen.install(None, 86_400 + 300)
    assert json.loads(result.config.read_text())["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 86_700_000
    assert qwen.remove(None).changed and "hooks" not in json.loads(result.config.read_text())


def status(agent_homes: Path, **settings: object) -> list[str]:
    write(agent_homes / ".gemini" / "settings.json", {**USER_GEMINI, **settings})
    gemini.install(None, 430)
    return gemini.status_lines(None, 430)


def test_gemini_status_explains_an_untrusted_or_undecided_folder(agent_homes: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    project = agent_homes / "work" / "app"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    lines = status(agent_homes)
    assert "Current folder trust: not decided (no rule in" in "\n".join(lines)
    assert any(line.startswith("Warning: Gemini CLI runs no hooks at all, user hooks included") for line in lines)
    rules = agent_homes / ".gemini" / "trustedFolders.json"
    for rule, word in (({str(project): "DO_NOT_TRUST"}, "not trusted (DO_NOT_TRUST"),
                       ({str(agent_homes / "work"): "TRUST_FOLDER"}, "trusted (TRUST_FOLDER"),
                       ({str(project / "x"): "TRUST_PARENT"}, "trusted (TRUST_PARENT"),
                       ({str(agent_homes / "work"): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}, "not trusted"),
                       ({str(agent_homes / "wor"): "TRUST_FOLDER"}, "not decided")):
        write(rules, rule)
        text = "\n".join(gemini.status_lines(None, 430))
        assert f"Current folder trust: {word}" in text, (rule, text)
        assert ("Warning: Gemini CLI runs no hooks at all" in text) == (not word.startswith("trusted")), text
    rules.write_text("{nope")
    text = "\n".join(gemini.status_lines(None, 430))
    assert "not trusted (The Gemini CLI trusted folders file" in text and "refuses to start" in text
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert "Current folder trust: trusted (GEMINI_CLI_TRUST_WORKSPACE=true" in "\n".join(gemini.status_lines(None, 430))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE")
    text = "\n".join(status(agent_homes, security={"folderTrust": {"enabled": False}}))
    assert "trusted (folder trust is off" in text and "Warning" not in text


def test_gemini_and_qwen_status_report_hooks_turned_off(agent_homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    lines = status(agent_homes, hooksConfig={"enabled": False})
    assert "Hooks enabled: False" in lines
    assert "Warning: hooksConfig.enabled is false in this settings file; Gemini CLI runs no hooks." in lines
    lines = status(agent_homes, hooksConfig={"disabled": ["lidguard"]})
    assert "Hooks enabled: False" in lines and any("hooksConfig.disabled lists" in line for line in lines)
    assert "Hooks enabled: True" in status(agent_homes, hooksConfig={"disabled": ["other"], "enabled": True})

    write(agent_homes / ".qwen" / "settings.json", {"disableAllHooks": True})
    qwen.install(None, 430)
    lines = qwen.status_lines(None, 430)
    assert lines[0] == "Status: Installed" and "Hooks enabled: False" in lines
    assert "Warning: disableAllHooks is true in this settings file; Qwen Code runs no hooks." in lines
    write(agent_homes / ".qwen" / "settings.json", json.loads((agent_homes / ".qwen" / "settings.json").read_text())
          | {"disableAllHooks": False})
    assert "Hooks enabled: True" in qwen.status_lines(None, 430)
    monkeypatch.setenv("QWEN_CODE_SAFE_MODE", "1")
    assert any(line.startswith("Warning: QWEN_CODE_SAFE_MODE is set") for line in qwen.status_lines(None, 430))


def test_hook_install_all_includes_gemini_and_qwen_through_the_cli(lidguard) -> None:  # type: ignore[no-untyped-def]
    (lidguard.home / ".gemini").mkdir()
    (lidguard.home / ".qwen").mkdir()
    result = lidguard.run("hook-install", "--provider", "all", check=True)
    assert "Provider: Gemini" in result.stdout and "Provider: Qwen" in result.stdout
    assert result.stdout.count("Changed: True") == 2, result.stdout
    status = lidguard.run("hook-status", "--provider", "gemini-cli", check=True).stdout
    assert "  Status: Installed" in status and "  Command: " in status and "gemini-hook" in status
    assert "Current folder trust:" in status
    status = lidguard.run("hook-status", "--provider", "qwen", check=True).stdout
    assert "  Status: Installed" in status and "Stop hook timeout: 450 seconds" in status
    assert "Changed: True" in lidguard.run("hook-remove", "--provider", "qwen-code", check=True).stdout
