"""Which language: --ui-culture, then LIDGUARD_UI_CULTURE, then the settings file's UiCulture, then the locale."""

from __future__ import annotations

import json

import pytest

from lidguard import l10n

from .conftest import translated


@pytest.mark.parametrize(("value", "culture"), [
    ("ko", "ko"), ("ko-KR", "ko"), ("ko_KR.UTF-8", "ko"), ("ja_JP.eucJP", "ja"), ("JA", "ja"),
    ("zh-Hans", "zh-Hans"), ("zh_CN.UTF-8", "zh-Hans"), ("zh-SG", "zh-Hans"), ("zh", "zh-Hans"),
    ("zh-Hant", "zh-Hant"), ("zh_TW.UTF-8", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh_Hant_MO", "zh-Hant"),
    ("en_US.UTF-8", "en"), ("en", "en"), ("auto", None), ("", None), ("C", None), ("POSIX", None),
    ("fr_FR.UTF-8", None), ("kok", None), (None, None),
])
def test_normalize_culture(value: str | None, culture: str | None) -> None:
    assert l10n.normalize_culture(value) == culture


@pytest.mark.parametrize(("environ", "culture"), [
    ({}, "en"), ({"LANG": "ko_KR.UTF-8"}, "ko"), ({"LANG": "C.UTF-8"}, "en"),
    ({"LC_ALL": "ja_JP.UTF-8", "LANG": "ko_KR.UTF-8"}, "ja"),
    ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh-Hant"),
    ({"LANGUAGE": "fr:zh_CN", "LANG": "en_US.UTF-8"}, "zh-Hans"),
    ({"LANGUAGE": "fr", "LANG": "ja_JP.UTF-8"}, "ja"),
    ({"LC_ALL": "de_DE.UTF-8", "LANG": "ko_KR.UTF-8"}, "en"),
])
def test_culture_from_locale(environ: dict[str, str], culture: str) -> None:
    assert l10n.culture_from_locale(environ) == culture


@pytest.mark.parametrize(("header", "culture"), [
    (None, "en"), ("", "en"), ("ko-KR,ko;q=0.9,en-US;q=0.8", "ko"), ("en-US,en;q=0.9,ko;q=0.8", "en"),
    ("fr-FR,ja;q=0.5", "ja"), ("zh-TW,zh;q=0.9", "zh-Hant"), ("zh-CN", "zh-Hans"),
    ("en;q=0.1, zh-Hant;q=0.7, ja;q=0.7", "zh-Hant"), ("ko;q=0, ja;q=0.2", "ja"), ("*", "en"),
    ("ko;q=abc, ja;q=0.1", "ja"), ("de,fr", "en"),
])
def test_negotiate_accept_language(header: str | None, culture: str) -> None:
    assert l10n.negotiate(header) == culture


def _write_setting(value: str) -> None:
    from lidguard.platform.paths import resolve_paths

    path = resolve_paths().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"UiCulture": value}))


def test_the_order_flag_env_setting_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(l10n.ENV, raising=False)
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    l10n.reset()
    assert l10n.culture() == "ja"  # no setting file: the locale
    _write_setting("zh-Hant")
    l10n.reset()
    assert l10n.culture() == "zh-Hant"  # the setting over the locale
    _write_setting("auto")
    l10n.reset()
    assert l10n.culture() == "ja"  # auto: the locale again
    _write_setting("zh-Hant")
    monkeypatch.setenv(l10n.ENV, "ko")
    l10n.reset()
    assert l10n.culture() == "ko"  # the environment over the setting
    l10n.set_culture("zh-Hans")
    assert l10n.culture() == "zh-Hans"  # --ui-culture over everything
    monkeypatch.setenv(l10n.ENV, "klingon")
    l10n.reset()
    assert l10n.culture() == "zh-Hant"  # an unknown value in the environment is ignored


def test_gettext_follows_the_choice() -> None:
    l10n.set_culture("ko")
    assert l10n._("Settings file: {path}") == translated("ko", "Settings file: {path}")
    assert l10n._("a text no catalog has") == "a text no catalog has"
    l10n.set_culture("en")
    assert l10n._("Settings file: {path}") == "Settings file: {path}"


def test_english_loads_no_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "gettext", raising=False)
    l10n._cache.clear()
    l10n.set_culture("en")
    assert l10n._("Settings file: {path}") == "Settings file: {path}"
    assert "gettext" not in sys.modules


def test_the_setting_is_stored_with_the_original_key_and_values() -> None:
    from lidguard.settings.model import Settings, UiCulture

    assert [member.value for member in UiCulture] == list(l10n.SETTING_VALUES)
    assert Settings().to_file_json()["UiCulture"] == "auto"
    assert Settings.from_raw({"UiCulture": "zh-hant"}).ui_culture is UiCulture.ZH_HANT
    assert Settings.from_raw({"UiCulture": "xx"}).ui_culture is UiCulture.AUTO
