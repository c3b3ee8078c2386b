"""The user's language (issue 38.2): English is the source, catalogs for ko, ja, zh-Hans and zh-Hant.

Chosen like the original: ``--ui-culture`` (``set_culture``), else ``LIDGUARD_UI_CULTURE``, else the
settings file's ``UiCulture`` unless it is ``auto``, else the locale (``LANGUAGE``, ``LC_ALL``,
``LC_MESSAGES``, ``LANG``); anything unknown is English. Stdlib ``gettext`` only; the catalogs are the
committed ``locale/<culture>/LC_MESSAGES/lidguard.mo`` files compiled from the ``.po`` files beside them
(``python3 ci/l10n_catalogs.py compile``). English loads no catalog.

What stays English: log files, JSON keys and values (``--json``), hook output agents parse, error codes.
The hook path never imports this module (``tests/hooks/test_hook_imports.py``).

Messages are ``str.format`` templates with named fields: ``_("Settings file: {path}").format(path=...)``.
``N_`` marks a text kept in a table and translated where it is shown (``_(text)``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import gettext
    from collections.abc import Mapping

__all__ = ["CULTURES", "ENV", "SETTING_VALUES", "N_", "_", "culture", "culture_from_locale", "negotiate",
           "normalize_culture", "reset", "set_culture", "translation"]

CULTURES = ("en", "ko", "ja", "zh-Hans", "zh-Hant")
SETTING_VALUES = ("auto", *CULTURES)  # the settings file's UiCulture (the original's values)
ENV = "LIDGUARD_UI_CULTURE"
DOMAIN = "lidguard"
LOCALE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")
# Chinese written in traditional characters: Taiwan, Hong Kong, Macao (and an explicit script tag).
_HANT_REGIONS = ("tw", "hk", "mo", "hant")

_chosen: str | None = None  # --ui-culture / set_culture
_resolved: str | None = None
_cache: dict[str, gettext.NullTranslations] = {}


def N_(message: str) -> str:  # noqa: N802 - the gettext convention
    """Marks ``message`` for the catalogs without translating it (kept in a table, shown with ``_``)."""
    return message


def normalize_culture(value: str | None) -> str | None:
    """``ko``, ``ko-KR``, ``ko_KR.UTF-8``, ``zh-TW``, ``zh_Hant_HK``, ``ZH-hans`` ... -> one of ``CULTURES``;
    ``auto``, empty or unknown -> None."""
    if not value:
        return None
    text = value.strip().split(".", 1)[0].split("@", 1)[0].replace("_", "-").lower()
    if not text or text in ("auto", "c", "posix"):
        return None
    parts = text.split("-")
    language = parts[0]
    if language == "zh":
        return "zh-Hant" if any(part in _HANT_REGIONS for part in parts[1:]) else "zh-Hans"
    return language if language in ("en", "ko", "ja") else None


def culture_from_locale(environ: Mapping[str, str] | None = None) -> str:
    """The culture the POSIX locale variables name (``LANGUAGE`` may list several), else English."""
    env = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if not value:
            continue
        if name == "LANGUAGE":
            for item in value.split(":"):
                found = normalize_culture(item)
                if found is not None:
                    return found
            continue
        language = value.split(".", 1)[0]
        return normalize_culture(language) or "en"  # the first one set decides, as in setlocale(3)
    return "en"


def _setting_culture() -> str | None:
    """The settings file's ``UiCulture`` (None: ``auto``, no file, unreadable)."""
    try:
        import json

        from ..platform.paths import resolve_paths

        path = resolve_paths().settings_file
        if not path.is_file() or path.stat().st_size > 256 * 1024:
            return None
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except Exception:  # noqa: BLE001 - a missing or broken file: the other commands say why
        return None
    value = data.get("UiCulture") if isinstance(data, dict) else None
    return normalize_culture(value) if isinstance(value, str) else None


def set_culture(value: str | None) -> None:
    """The culture asked for on the command line (``--ui-culture``; None or ``auto``: choose again)."""
    global _chosen, _resolved
    _chosen = normalize_culture(value)
    _resolved = None


def reset() -> None:
    """Forget what was chosen (the settings changed, a test)."""
    set_culture(None)


def culture() -> str:
    """This process's culture, chosen once: ``--ui-culture``, env, setting, locale."""
    global _resolved
    if _chosen is not None:
        return _chosen
    if _resolved is None:
        _resolved = normalize_culture(os.environ.get(ENV)) or _setting_culture() or culture_from_locale()
    return _resolved


def translation(name: str) -> gettext.NullTranslations:
    """The catalog of one culture (English: none), loaded once."""
    import gettext

    found = _cache.get(name)
    if found is None:
        if name == "en" or name not in CULTURES:
            found = gettext.NullTranslations()
        else:
            found = gettext.translation(DOMAIN, LOCALE_DIR, languages=[name], fallback=True)
        _cache[name] = found
    return found


def _(message: str) -> str:
    """``message`` in this process's culture (itself when the catalog lacks it)."""
    name = culture()
    if name == "en":
        return message
    return translation(name).gettext(message)


def negotiate(accept_language: str | None) -> str:
    """The best of ``CULTURES`` for an HTTP ``Accept-Language`` header (RFC 9110 q-values), else English."""
    best: tuple[float, int, str] | None = None
    for position, item in enumerate((accept_language or "").split(",")[:32]):
        tag, _sep, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _eq, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        found = normalize_culture(tag.strip()) if tag.strip() != "*" else None
        if found is None or quality <= 0:
            continue
        candidate = (quality, -position, found)
        if best is None or candidate > best:
            best = candidate
    return best[2] if best is not None else "en"
