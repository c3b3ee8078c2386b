"""`lidguard status`, `doctor`, `settings` (help, prompts, output) and `help` in ko, ja, zh-Hans and zh-Hant
(issue 38.2), chosen through LIDGUARD_UI_CULTURE, --ui-culture, the UiCulture setting or the locale; the
JSON stays English; every line fits 100 terminal columns (East Asian wide characters count two)."""

from __future__ import annotations

import json
import sys
import unicodedata
from typing import Any

import pytest

from .conftest import CULTURES, prefix, translated

WIDTH = 100


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(character) in ("W", "F") else 1 for character in text)


def run_in(lidguard: Any, culture: str | None, *args: str, input_text: str | None = None) -> Any:
    saved = dict(lidguard.env)
    try:
        lidguard.env.pop("LIDGUARD_UI_CULTURE", None)
        if culture is not None:
            lidguard.env["LIDGUARD_UI_CULTURE"] = culture
        return lidguard.run(*args, input_text=input_text)
    finally:
        lidguard.env.clear()
        lidguard.env.update(saved)


def _version() -> str:
    from lidguard import __version__

    return __version__


def assert_fits(lidguard: Any, text: str, what: str, english: str | None = None) -> None:
    """Every line within 100 columns once this test's HOME (a temporary path) is shown as ``~``; the
    session lines (REFERENCE 1.2's ``- <agent>:<id> process=... cwd=...``, untranslated data) are as long as
    their data in every language. With ``english`` (the same report in English, line for line): a line
    may be as long as its English one, whose length comes from data no catalog holds (doctor's agent
    texts, a backend's reasons)."""
    def shown(report: str) -> str:  # data no catalog holds, at a fixed length (a dirty tree's version is long)
        return report.replace(str(lidguard.home), "~").replace(_version(), "0.0").replace(sys.executable, "python3")

    lines = shown(text).splitlines()
    originals = shown(english).splitlines() if english is not None else None
    if originals is not None:
        assert len(originals) == len(lines), f"{what}: {len(lines)} lines, {len(originals)} in English"
    for index, line in enumerate(lines):
        if line.startswith("- ") and " process=" in line:
            continue
        allowed = max(WIDTH, columns(originals[index])) if originals is not None else WIDTH
        assert columns(line) <= allowed, f"{what}: {columns(line)} columns: {line!r}"


@pytest.mark.parametrize("culture", CULTURES)
def test_status_without_a_runtime(lidguard: Any, culture: str) -> None:
    result = run_in(lidguard, culture, "status")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(prefix(culture, "Safe to close the lid: not yet - {answer}"))
    assert translated(culture, "lidguard is not running, so no agent is protected") in lines[0]
    assert lines[1] == translated(culture, "LidGuard runtime is not running.")
    assert translated(culture, "Active sessions: {count}", count=0) in lines
    assert translated(culture, "Pending suspend: none") in lines
    assert translated(culture, "Settings file: {path}", path=lidguard.data_dir / "settings.json") in lines
    assert "LidGuard runtime is not running." not in result.stdout
    assert_fits(lidguard, result.stdout, f"status {culture}")


@pytest.mark.parametrize("culture", CULTURES)
def test_status_with_sessions_and_every_setting(lidguard: Any, culture: str) -> None:
    for session in ("one", "two"):
        lidguard.run("start", "--provider", "claude", "--session", session, check=True)
    try:
        result = run_in(lidguard, culture, "status", "--verbose")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[1] == translated(culture, "LidGuard runtime is running.")
        assert translated(culture, "Active sessions: {count}", count=2) in lines
        assert translated(culture, "Settings:") in lines
        assert translated(culture, "  Session timeout: {value}", value=translated(culture, "{value} minutes",
                                                                                   value=12)) in lines
        assert translated(culture, "  Change lid action: {value}", value=translated(culture, "on")) in lines
        assert translated(culture, "  UI culture: {value}", value="auto") in lines
        assert_fits(lidguard, result.stdout, f"status --verbose {culture}")
        # The machine-readable view stays English.
        data = json.loads(run_in(lidguard, culture, "status", "--json").stdout)
        assert data["message"] == "LidGuard runtime is running."
        assert data["readiness"]["text"].startswith("Safe to close the lid: not yet - ")
        assert data["activeSessionCount"] == 2
    finally:
        lidguard.run("stop-runtime", "--force")


@pytest.mark.parametrize("culture", CULTURES)
def test_doctor(lidguard: Any, culture: str) -> None:
    result = run_in(lidguard, culture, "doctor")
    assert result.returncode in (0, 1), result.stderr
    lines = result.stdout.splitlines()
    for heading in ("Native modules:", "Capabilities:", "Paths:"):
        assert translated(culture, heading) in lines, heading
    assert translated(culture, "Runtime: not running") in lines
    assert translated(culture, "platform: fake ({reason}) - protects nothing",
                      reason="LIDGUARD_PLATFORM=fake") in lines
    assert lines[-1].startswith(prefix(culture, "Verdict: {verdict}"))
    assert "Native modules:" not in lines
    english = run_in(lidguard, "en", "doctor").stdout
    assert_fits(lidguard, result.stdout, f"doctor {culture}", english)
    data = json.loads(run_in(lidguard, culture, "doctor", "--json").stdout)
    assert "verdict" in data and data["verdict"]["text"].isascii()  # JSON keys and values stay English


@pytest.mark.parametrize("culture", CULTURES)
def test_settings_help_and_the_summary_help(lidguard: Any, culture: str) -> None:
    result = run_in(lidguard, culture, "settings", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert result.stdout.startswith(translated(culture, "usage: "))
    assert "\n" + translated(culture, "options") + ":\n" in result.stdout
    for message in ("Block idle system sleep while a session works.", "Also keep the display awake.",
                    "start from the defaults before applying options"):
        assert " ".join(translated(culture, message).split()) in text.replace(" ", "") or \
            translated(culture, message).replace(" ", "") in text.replace(" ", ""), message
    assert "Block idle system sleep" not in text
    assert_fits(lidguard, result.stdout, f"settings --help {culture}")
    summary = run_in(lidguard, culture, "help")
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith(translated(culture, "Usage: lidguard <command> [options]"))
    assert translated(culture, "Session Control") + ":" in summary.stdout.splitlines()
    assert_fits(lidguard, summary.stdout, f"help {culture}")


@pytest.mark.parametrize("culture", CULTURES)
def test_settings_changes_and_interactive_prompts(lidguard: Any, culture: str) -> None:
    result = run_in(lidguard, culture, "settings", "--session-timeout-minutes", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == translated(culture, "Settings file: {path}", path=lidguard.data_dir / "settings.json")
    assert translated(culture, "Changed:") in lines
    assert translated(culture, "Runtime is not running; saved settings will be used on the next start.") in lines
    assert_fits(lidguard, result.stdout, f"settings change {culture}")
    wrong = run_in(lidguard, culture, "settings", "--session-timeout-minutes", "0")
    assert wrong.returncode == 1
    assert translated(culture, "The {option} option must be off or an integer from {minimum} to {maximum}.",
                      option="session-timeout-minutes", minimum=1, maximum=10080) in wrong.stderr
    prompts = run_in(lidguard, culture, "settings", input_text="")
    assert prompts.returncode == 1
    label = translated(culture, "Prevent system sleep")
    assert prompts.stdout.startswith(translated(culture, "{label} (stored: {stored}, default: {default}, {extra}"
                                                "press Enter to keep stored): ", label=label, stored="true",
                                                default="true", extra=""))
    assert translated(culture, "Input ended before {label} was entered.", label=label) in prompts.stderr


def test_the_command_line_option_and_the_setting_choose_too(lidguard: Any) -> None:
    result = run_in(lidguard, None, "--ui-culture", "ko", "status")
    assert result.returncode == 0 and translated("ko", "LidGuard runtime is not running.") in result.stdout
    result = run_in(lidguard, "zh-Hans", "status", "--ui-culture=ja")  # the option wins over the environment
    assert translated("ja", "LidGuard runtime is not running.") in result.stdout.splitlines()
    bad = run_in(lidguard, None, "--ui-culture", "xx", "status")
    assert bad.returncode == 1 and "Unknown UI culture: xx" in bad.stderr
    # `settings --ui-culture` stores the original's key and value, and speaks it at once.
    saved = run_in(lidguard, None, "settings", "--ui-culture", "zh-Hant")
    assert saved.returncode == 0, saved.stderr
    assert translated("zh-Hant", "Runtime settings updated.") in saved.stdout or \
        translated("zh-Hant", "Runtime is not running; saved settings will be used on the next start.") in saved.stdout
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert stored["UiCulture"] == "zh-Hant"
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        lidguard.env.pop(name, None)
    lidguard.env["LANG"] = "ja_JP.UTF-8"
    assert translated("zh-Hant", "LidGuard runtime is not running.") in run_in(lidguard, None, "status").stdout
    run_in(lidguard, None, "settings", "--ui-culture", "auto")
    assert json.loads((lidguard.data_dir / "settings.json").read_text())["UiCulture"] == "auto"
    assert translated("ja", "LidGuard runtime is not running.") in run_in(lidguard, None, "status").stdout
    lidguard.env["LANG"] = "C.UTF-8"
    assert "LidGuard runtime is not running." in run_in(lidguard, None, "status").stdout.splitlines()


def test_english_stays_as_it_was(lidguard: Any) -> None:
    result = run_in(lidguard, "en", "status")
    lines = result.stdout.splitlines()
    assert lines[0] == "Safe to close the lid: not yet - lidguard is not running, so no agent is protected"
    assert lines[1:3] == ["LidGuard runtime is not running.", "Active sessions: 0"]
    assert result.stdout.isascii()


@pytest.mark.parametrize("culture", CULTURES)
def test_the_session_commands_errors_and_the_argument_errors(lidguard: Any, culture: str) -> None:
    """cli/fast.py (start/stop without argparse) and argparse's error line: translated on the way out only
    (the hook path never imports the catalogs: tests/hooks/test_hook_imports.py)."""
    from lidguard.providers import PROVIDER_CHOICES_TEXT

    result = run_in(lidguard, culture, "start", "--provider", "nope")
    assert result.returncode == 1
    assert result.stderr == "lidguard: " + translated(culture, "Unknown provider: {provider}. Use {choices}.",
                                                      provider="nope", choices=PROVIDER_CHOICES_TEXT) + "\n"
    result = run_in(lidguard, culture, "remove-session", "--session", "s")
    removed = translated(culture, "LidGuard runtime is not running. No active session was removed.")
    assert result.stdout == removed + "\n"
    result = run_in(lidguard, culture, "status", "--bogus")
    hint = translated(culture, "lidguard: {message} (see `lidguard help{topic}`)").split("{message}")[1]
    assert result.returncode != 0 and result.stderr.endswith(hint.format(topic="") + "\n"), result.stderr
