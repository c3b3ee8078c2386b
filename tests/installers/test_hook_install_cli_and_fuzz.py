"""The hook-* commands as real processes, and hypothesis fuzz of existing config files: whatever the
user's file holds, it is either edited (a JSON object / valid TOML) or refused with one line and left
byte for byte."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lidguard.agents import claude as claude_agent
from lidguard.agents import codex as codex_agent
from lidguard.agents import copilot as copilot_agent
from lidguard.agents import gemini as gemini_agent
from lidguard.agents import qwen as qwen_agent
from lidguard.installers.common import InstallError

JSON_ISH = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                 max_leaves=12).map(lambda value: json.dumps(value).encode()),
    st.sampled_from([b'{"hooks": []}', b'{"hooks": {"Stop": {}}}', b'{"hooks": {"Stop": [1, "x", {"hooks": 3}]}}',
                     b"[]", b"\xff\xfe{}", b'{"a": 1,}']),
)
TOML_ISH = st.one_of(
    st.text(max_size=200).map(str.encode),
    st.sampled_from([b"hooks = 1\n", b"[hooks]\nstate = 2\n", b"[features\n", b'a = "\n', b"[x]\n[x]\n",
                     b"# comment only\n", b"\xff"]),
)

claude, gemini, qwen = claude_agent.installer(), gemini_agent.installer(), qwen_agent.installer()
codex, copilot = codex_agent.installer(), copilot_agent.installer()


@contextlib.contextmanager
def _homes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="lg-fuzz-"))
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME", "GEMINI_CLI_HOME", "QWEN_HOME"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _check(installer, path: Path, data: bytes) -> None:  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        installer()
    except InstallError as error:
        message = str(error)
        assert "\n" not in message and str(path) in message
        assert path.read_bytes() == data
        return
    assert path.exists()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSON_ISH)
def test_garbage_agent_settings_never_overwritten(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    with _homes(monkeypatch) as home:
        _check(lambda: claude.install(None, 430), home / ".claude" / "settings.json", data)
        _check(lambda: claude.remove(None), home / ".claude" / "settings.json", data)
        _check(lambda: gemini.install(None, 430), home / ".gemini" / "settings.json", data)
        _check(lambda: qwen.remove(None), home / ".qwen" / "settings.json", data)
        _check(lambda: qwen.status_lines(None, 430), home / ".qwen" / "settings.json", data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSON_ISH)
def test_garbage_codex_hooks_json_never_overwritten(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    with _homes(monkeypatch) as home:
        _check(lambda: codex.install(None, 430), home / ".codex" / "hooks.json", data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=TOML_ISH)
def test_garbage_codex_config_toml_never_overwritten(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    with _homes(monkeypatch) as home:
        _check(lambda: codex.install(None, 430), home / ".codex" / "config.toml", data)
        if not (home / ".codex" / "hooks.json").exists():  # refused: hooks.json was not written either
            assert (home / ".codex" / "config.toml").read_bytes() == data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSON_ISH)
def test_garbage_copilot_managed_file_never_overwritten(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    with _homes(monkeypatch) as home:
        _check(lambda: copilot.install(None, 430), home / ".copilot" / "hooks" / "lidguard.json", data)


# -- the commands ----------------------------------------------------------------------------------------
def test_hook_install_all_status_and_remove_through_the_cli(lidguard) -> None:  # type: ignore[no-untyped-def]
    (lidguard.home / ".claude").mkdir()
    (lidguard.home / ".codex").mkdir()
    result = lidguard.run("hook-install", "--provider", "all", check=True)
    assert "Skipping absent provider: GitHubCopilot" in result.stdout
    assert "Skipping absent provider: OpenCode" in result.stdout
    assert result.stdout.count("Changed: True") == 2
    assert lidguard.run("hook-install", "--provider", "all", check=True).stdout.count("Changed: False") == 2
    status = lidguard.run("hook-status", "--provider", "codex", check=True).stdout
    assert "Hook installation:" in status and "  Status: Installed" in status and "Stop hook timeout: 450" in status
    result = lidguard.run("hook-uninstall", "--provider", "claude", check=True)
    assert "Changed: True" in result.stdout
    settings_file = lidguard.home / ".claude" / "settings.json"
    assert not settings_file.exists()  # lidguard created it; nothing else was in it: no "{}" left behind
    assert f"Note: Deleted {settings_file}: nothing but lidguard's hooks was in it." in result.stdout


def test_prompt_when_provider_is_omitted(lidguard) -> None:  # type: ignore[no-untyped-def]
    result = lidguard.run("hook-install", input_text="opencode\n", check=True)
    assert "default: all" in result.stdout and "Installed the LidGuard OpenCode plugin." in result.stdout
    result = lidguard.run("hook-status", input_text="")
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "--provider" in result.stderr


def test_cli_errors_are_one_line(lidguard) -> None:  # type: ignore[no-untyped-def]
    result = lidguard.run("hook-install", "--provider", "all", "--config", "x.json")
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "--config" in result.stderr
    result = lidguard.run("hook-install", "--provider", "vim")
    assert result.returncode == 1 and "Unknown provider: vim" in result.stderr
    bad = lidguard.home / "bad.json"
    bad.write_text("{nope")
    result = lidguard.run("hook-install", "--provider", "claude", "--config", str(bad))
    assert result.returncode == 1 and "is not valid JSON" in result.stdout and bad.read_text() == "{nope"
    assert result.stderr.count("\n") == 1
    result = lidguard.run("claude-hooks", "--format", "yaml")
    assert result.returncode == 1 and "settings-json" in result.stderr


def test_snippet_printers_print_parsable_snippets(lidguard) -> None:  # type: ignore[no-untyped-def]
    out = lidguard.run("claude-hooks", check=True).stdout
    assert "claude-hook" in json.loads(out)["hooks"]["Stop"][0]["hooks"][0]["command"]
    out = lidguard.run("codex-hooks", check=True).stdout
    assert "[[hooks.Stop]]" in out and "trusted_hash" in out
    out = lidguard.run("copilot-hooks", "--format", "hooks-json", check=True).stdout
    assert json.loads(out)["version"] == 1
