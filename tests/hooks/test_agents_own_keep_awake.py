"""Issue 35.5: each agent module reads its own keep-awake setting from the agent's config (temp HOMEs),
and survives every hostile file (missing, malformed, huge, wrong types, a directory or FIFO there)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lidguard.agents import agent
from lidguard.agents.keep_awake import CONFIG_LIMIT_BYTES, OwnKeepAwake, configured


def _read(key: str, home: Path, **env: str) -> OwnKeepAwake:
    module = agent(key)
    assert module is not None
    result = module.own_keep_awake({"HOME": str(home), **env})
    assert isinstance(result, OwnKeepAwake)
    assert result.agent == module.DISPLAY
    return result


def _codex(home: Path, text: str | bytes) -> OwnKeepAwake:
    folder = home / ".codex"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_bytes(text.encode() if isinstance(text, str) else text)
    return _read("codex", home)


def _qwen(home: Path, text: str | bytes) -> OwnKeepAwake:
    folder = home / ".qwen"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_bytes(text.encode() if isinstance(text, str) else text)
    return _read("qwen", home)


# -- Codex: [features].prevent_idle_sleep, off unless set; held only during a turn ------------------------
def test_codex_without_a_config_is_off_and_cannot_block(tmp_path):
    result = _read("codex", tmp_path)
    assert (result.enabled, result.can_block) == (False, False)
    assert "not set" in result.text and str(tmp_path / ".codex" / "config.toml") in result.text
    assert "cannot block lidguard's suspend after the session ends" in result.text


@pytest.mark.parametrize("text", ["[features]\nprevent_idle_sleep = true\n", "features.prevent_idle_sleep = true\n",
                                  'model = "x"\n[features]\nhooks = true\nprevent_idle_sleep = true\n'])
def test_codex_on(tmp_path, text):
    result = _codex(tmp_path, text)
    assert (result.enabled, result.can_block) == (True, False)
    assert result.text.startswith("on (") and "= true" in result.text


def test_codex_off_and_a_config_without_features(tmp_path):
    assert _codex(tmp_path, "[features]\nprevent_idle_sleep = false\n").enabled is False
    assert _codex(tmp_path, 'model = "gpt"\n').enabled is False


@pytest.mark.parametrize(("text", "words"), [
    ("[features\nprevent_idle_sleep = true\n", "not valid TOML"),
    ("features = 3\n", "[features] is not a table"),
    (b"\xff\xfe[features]\n", "not valid UTF-8"),
    ("[features]\n" + "a = [" * 5000 + "\n", "not valid TOML"),
])
def test_codex_unusable_config_is_reported_and_read_as_off(tmp_path, text, words):
    result = _codex(tmp_path, text)
    assert words in result.text and "read as its default, off" in result.text
    assert (result.enabled, result.can_block) == (False, False)


@pytest.mark.parametrize(("value", "kind"), [('"yes"', "str"), ("1", "int"), ("[true]", "list"),
                                             ("{ on = true }", "dict")])
def test_codex_wrong_type(tmp_path, value, kind):
    result = _codex(tmp_path, f"[features]\nprevent_idle_sleep = {value}\n")
    assert f"is not true or false ({kind}); read as its default, off" in result.text
    assert result.enabled is False


def test_codex_huge_config_is_not_read(tmp_path):
    result = _codex(tmp_path, "[features]\nprevent_idle_sleep = true\n# " + "x" * CONFIG_LIMIT_BYTES + "\n")
    assert f"larger than {CONFIG_LIMIT_BYTES} bytes" in result.text and result.enabled is False


def test_codex_home_is_honoured_when_absolute(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "config.toml").write_text("[features]\nprevent_idle_sleep = true\n")
    assert _read("codex", tmp_path, CODEX_HOME=str(other)).enabled is True
    assert _read("codex", tmp_path, CODEX_HOME="relative/dir").enabled is False  # not absolute: ~/.codex


# -- Qwen Code: general.preventSystemSleep, default true; held only while streaming or running a tool ----
def test_qwen_without_settings_is_on_by_default_and_cannot_block(tmp_path):
    result = _read("qwen", tmp_path)
    assert (result.enabled, result.can_block) == (True, False)
    assert "on by default" in result.text and "cannot block lidguard's suspend" in result.text


def test_qwen_explicit_values(tmp_path):
    assert _qwen(tmp_path, '{"general": {"preventSystemSleep": false}}').enabled is False
    assert _qwen(tmp_path, '{"general": {"preventSystemSleep": true}}').enabled is True
    assert _qwen(tmp_path, '{"general": {"language": "auto"}}').enabled is True
    assert _qwen(tmp_path, "\ufeff{}").enabled is True  # a byte-order mark


@pytest.mark.parametrize(("text", "words"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "does not hold a JSON object"),
    ('{"general": "off"}', '"general" is not an object'),
    ("[" * 100000, "not valid JSON"),
    ("", "not valid JSON"),
])
def test_qwen_unusable_settings_read_as_the_default(tmp_path, text, words):
    result = _qwen(tmp_path, text)
    assert words in result.text and "its default, on" in result.text
    assert result.enabled is True


@pytest.mark.parametrize("value", ['"false"', "0", "null", "[]", "NaN"])
def test_qwen_wrong_type_reads_as_the_default(tmp_path, value):
    result = _qwen(tmp_path, f'{{"general": {{"preventSystemSleep": {value}}}}}')
    if value == "null":  # null is "not set"
        assert "not set" in result.text
    else:
        assert "is not true or false" in result.text
    assert result.enabled is True


def test_qwen_huge_settings_and_qwen_home_and_safe_mode(tmp_path):
    result = _qwen(tmp_path, '{"general": {"preventSystemSleep": false}, "x": "' + "y" * CONFIG_LIMIT_BYTES + '"}')
    assert "larger than" in result.text and result.enabled is True
    other = tmp_path / "qwenhome"
    other.mkdir()
    (other / "settings.json").write_text('{"general": {"preventSystemSleep": false}}')
    assert _read("qwen", tmp_path, QWEN_HOME=str(other)).enabled is False
    safe = _read("qwen", tmp_path / "none", QWEN_CODE_SAFE_MODE="true")
    assert "QWEN_CODE_SAFE_MODE" in safe.text and safe.enabled is False


@pytest.mark.parametrize("key", ["codex", "qwen"])
def test_a_directory_or_fifo_at_the_config_path_is_refused_at_once(tmp_path, key):
    name = {"codex": ".codex/config.toml", "qwen": ".qwen/settings.json"}[key]
    path = tmp_path / name
    path.parent.mkdir()
    path.mkdir()
    assert "directory" in _read(key, tmp_path).text
    path.rmdir()
    os.mkfifo(path)  # never waited on: the read would hang without a writer
    assert "could not be read" in _read(key, tmp_path).text


# -- Claude Code, Copilot and the registry ----------------------------------------------------------------
def test_claude_always_holds_during_turns_and_can_briefly_block(tmp_path):
    result = _read("claude", tmp_path)
    assert result.can_block is True and result.enabled is None
    assert "caffeinate -i -t 300" in result.text and "30 s" in result.text


def test_configured_lists_the_agents_with_a_reader_and_survives_a_broken_one(tmp_path, monkeypatch):
    names = [item.agent for item in configured({"HOME": str(tmp_path)})]
    assert names == ["Claude Code", "Codex", "GitHub Copilot CLI", "Qwen Code"]
    module = agent("codex")

    def broken(env):
        raise RuntimeError("boom")

    monkeypatch.setattr(module, "own_keep_awake", broken)
    items = {item.agent: item for item in configured({"HOME": str(tmp_path)})}
    assert "could not be read: boom" in items["Codex"].text
    assert items["Codex"].to_json()["canBlockSuspend"] is False
