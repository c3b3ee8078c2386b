"""Every catalog compiles, holds every message id in full, keeps every placeholder and indentation."""

from __future__ import annotations

import gettext
import shutil
from pathlib import Path

import pytest

from .conftest import CULTURES, catalog, catalog_tool


def test_the_catalogs_are_complete_and_compiled() -> None:
    assert catalog_tool().problems() == []


def test_there_are_messages_to_translate() -> None:
    assert len(catalog_tool().extract()) > 100


@pytest.mark.parametrize("culture", CULTURES)
def test_the_committed_mo_is_what_stdlib_gettext_reads(culture: str) -> None:
    from lidguard.l10n import DOMAIN, LOCALE_DIR

    reader = gettext.translation(DOMAIN, LOCALE_DIR, languages=[culture])
    entries = catalog(culture)
    for message in catalog_tool().extract():
        assert reader.gettext(message) == entries[message], message


@pytest.mark.parametrize("culture", CULTURES)
def test_every_translation_formats_with_the_english_fields(culture: str) -> None:
    tool = catalog_tool()
    for message, text in catalog(culture).items():
        if not message:
            continue
        names = {field.split("!")[0].split(":")[0] for field in tool.fields(message)}
        values = {name: "x" for name in names}
        assert message.format(**values) is not None
        text.format(**values)  # raises on a broken or foreign field


def _copy_locale(tmp_path: Path) -> Path:
    tool = catalog_tool()
    target = tmp_path / "locale"
    shutil.copytree(tool.LOCALE, target)
    return target


def _replace_in_po(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_check_finds_a_lost_placeholder(tmp_path: Path) -> None:
    tool = catalog_tool()
    locale = _copy_locale(tmp_path)
    _replace_in_po(tool.po_path("ko", locale), 'msgstr "설정 파일: {path}"', 'msgstr "설정 파일: {paht}"')
    found = tool.problems(locale)
    assert any("placeholders differ" in line and "Settings file: {path}" in line for line in found), found


def test_the_check_finds_a_missing_id_and_a_stale_mo(tmp_path: Path) -> None:
    tool = catalog_tool()
    locale = _copy_locale(tmp_path)
    path = tool.po_path("ja", locale)
    lines = path.read_text(encoding="utf-8").splitlines()
    index = lines.index('msgid "Settings file: {path}"')
    del lines[index:index + 2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = tool.problems(locale)
    assert any(line.startswith("ja: missing 'Settings file: {path}'") for line in found), found
    assert any(line.startswith("ja:") and "is not compiled from the .po" in line for line in found), found


def test_the_check_finds_lost_indentation_and_an_untranslated_id(tmp_path: Path) -> None:
    tool = catalog_tool()
    locale = _copy_locale(tmp_path)
    _replace_in_po(tool.po_path("zh-Hans", locale), 'msgstr "  会话超时: {value}"', 'msgstr "会话超时: {value}"')
    _replace_in_po(tool.po_path("zh-Hant", locale), 'msgstr "設定檔: {path}"', 'msgstr ""')
    found = tool.problems(locale)
    assert any(line.startswith("zh-Hans: leading or trailing white space") for line in found), found
    assert any(line.startswith("zh-Hant: untranslated 'Settings file: {path}'") for line in found), found


def test_a_po_file_round_trips_through_the_compiler(tmp_path: Path) -> None:
    tool = catalog_tool()
    path = tmp_path / "x.po"
    entries = {"": tool.HEADER.format(culture="ko"), 'say "hi"\n\tthere\\': '"안녕"\n\t거기\\'}
    tool.write_po(path, "ko", entries, {})
    assert tool.read_po(path) == entries
    mo = tmp_path / "x.mo"
    mo.write_bytes(tool.mo_bytes(entries))
    with mo.open("rb") as handle:
        assert gettext.GNUTranslations(handle).gettext('say "hi"\n\tthere\\') == '"안녕"\n\t거기\\'
