"""Every provider in the lists a user reads, ``--provider`` as a comma list or repeated, and a
"did you mean" for a typo (issue 33, items 7 and 13)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from lidguard.installers import PROVIDERS


@pytest.mark.parametrize(("typo", "meant"), [("statsu", "status"), ("hook-instal", "hook-install"),
                                             ("docter", "doctor")])
def test_a_mistyped_command_names_the_near_one_in_one_line(lidguard: Any, typo: str, meant: str) -> None:
    result = lidguard.run(typo)
    assert result.returncode == 1
    assert result.stderr == f"lidguard: Unknown command: {typo} (did you mean `{meant}`?)\n"
    assert f"did you mean `{meant}`" in lidguard.run("help", typo).stderr


def test_a_command_far_from_every_name_points_to_help(lidguard: Any) -> None:
    assert lidguard.run("xyzzy").stderr == "lidguard: Unknown command: xyzzy (see `lidguard help`)\n"


def test_provider_takes_a_comma_list_and_repeats(lidguard: Any) -> None:
    for folder in (".claude", ".gemini", ".qwen"):
        (lidguard.home / folder).mkdir()
    result = lidguard.run("hook-install", "--provider", "claude,gemini", "--provider", "qwen", check=True)
    for display in ("Claude", "Gemini", "Qwen"):
        assert f"Provider: {display}" in result.stdout
    status = lidguard.run("hook-status", "--provider", "gemini,qwen", check=True).stdout
    assert status.count("Status: Installed") == 2, status


def test_an_unknown_provider_in_the_list_is_refused_with_a_suggestion(lidguard: Any) -> None:
    result = lidguard.run("hook-install", "--provider", "claude,gemnii")
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "Unknown provider: gemnii (did you mean `gemini`?)" in result.stderr
    assert not (lidguard.home / ".claude" / "settings.json").exists()


def test_a_typo_at_the_provider_prompt_asks_again(lidguard: Any) -> None:
    (lidguard.home / ".claude").mkdir()
    result = lidguard.run("hook-install", input_text="cluade\nclaude\n")
    assert result.returncode == 0, result.stderr
    assert "did you mean `claude`" in result.stdout and "Provider: Claude" in result.stdout


def test_setup_lists_every_provider(lidguard: Any) -> None:
    text = " ".join(lidguard.run("setup", "--help", check=True).stdout.split())
    for key in PROVIDERS:
        assert key in text
    lidguard.env["PATH"] = "/nonexistent"
    none_found = lidguard.run("setup", "--yes").stdout
    assert "No agent CLI found (" + ", ".join(PROVIDERS) in none_found
    both = lidguard.run("setup", "--yes", "--provider", "gemini,qwen").stdout
    assert "gemini (asked for with --provider)" in both and "qwen (asked for with --provider)" in both


def test_setup_skips_the_polkit_rule_where_no_logind_answers_and_says_why(lidguard: Any) -> None:
    rule = lidguard.home / "polkit" / "49-lidguard.rules"
    lidguard.env.update(LIDGUARD_PLATFORM="linux", LIDGUARD_POLKIT_RULE_PATH=str(rule),
                        DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={lidguard.home}/no-such-bus")
    (lidguard.home / ".claude").mkdir()
    result = lidguard.run("setup", "--yes", "--provider", "claude")
    assert "skipped: systemd-logind cannot be reached here" in result.stdout, result.stdout
    assert "Install it now" not in result.stdout and not rule.exists()


@pytest.mark.parametrize(("euid", "says_password"), [(1000, True), (0, False)])
def test_the_permission_prompt_mentions_a_password_only_to_a_user_who_needs_one(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], euid: int, says_password: bool) -> None:
    """Issue 33.5: root installs the permission rule without sudo, so its prompt never says "asks for your
    password"; a normal user's does (the install runs sudo)."""
    from types import SimpleNamespace

    from lidguard.cli import setup_command

    asked: list[str] = []
    ran: list[str] = []
    permission = SimpleNamespace(describe=lambda: "not installed", moot_reason=lambda: None,
                                 run=lambda action, out, err: ran.append(action) or 0)
    context = SimpleNamespace(platform=SimpleNamespace(name="linux", permission=permission))
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(setup_command, "_ask", lambda question, assume_yes: asked.append(question) or True)
    setup_command._offer_permission(context, assume_yes=True)  # type: ignore[arg-type]
    [question] = asked
    assert question.startswith("Install it now (`lidguard linux-permission install`")
    assert ("asks for your password" in question) is says_password, question
    assert ran == ["install"]
