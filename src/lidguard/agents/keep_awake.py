"""The agents' own keep-awake (issue 35.5): what an agent holds by itself, read from its own config.

Each agent module may have ``own_keep_awake(env) -> OwnKeepAwake | None`` (``env``: the environment
to resolve its config folder from - ``HOME`` and the agent's own variable); :func:`configured` asks
every registered agent. ``can_block`` says whether what the agent holds can still be held when
lidguard's post-session suspend comes: one that holds it only while a turn runs cannot (the session's
Stop ends the turn), one that keeps it while idle can, and lidguard's suspend then waits for it unless
``SuspendIgnoresOtherBlockers`` is on (``runtime/blockers.py``).

Config files are read through ``fileio_open.read_regular_file`` (regular files only, never waiting on
a FIFO, at most :data:`CONFIG_LIMIT_BYTES`); a missing, huge, malformed or wrongly typed value is
reported in the text and read as the agent's own default. Never imported on a hook's path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CONFIG_LIMIT_BYTES", "OwnKeepAwake", "config_folder", "configured", "describe_switch", "read_config",
           "read_setting", "read_switch"]

# Larger agent config files are not read (a settings.json or config.toml is a few KiB).
CONFIG_LIMIT_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class OwnKeepAwake:
    """One agent's own keep-awake: ``text`` is the line doctor prints after the agent's name."""

    agent: str
    text: str
    can_block: bool
    setting: str = ""  # where it is configured ("[features].prevent_idle_sleep in ~/.codex/config.toml")
    enabled: bool | None = None  # None: not a setting (the agent always does it, or it is per session)

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "text": self.text, "canBlockSuspend": self.can_block,
                "setting": self.setting, "enabled": self.enabled}


def config_folder(env: Mapping[str, str], variable: str, default: str) -> str:
    """``$variable`` when it names an absolute folder, else ``$HOME/<default>``."""
    value = env.get(variable, "").strip()
    if value and os.path.isabs(value):
        return value
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, default)


def read_config(path: str) -> tuple[str | None, str | None]:
    """(the file's text or None, why it could not be used or None); a missing file is (None, None)."""
    from ..fileio_open import UnusableFileError, read_regular_file

    try:
        data = read_regular_file(path, limit=CONFIG_LIMIT_BYTES)
    except FileNotFoundError:
        return None, None
    except UnusableFileError as error:
        return None, error.reason
    except OSError as error:
        return None, error.strerror or str(error)
    try:
        return (data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "it is not valid UTF-8"


def read_setting(path: str, parse: Callable[[str], Any], kind: str, section: str, key: str,
                 section_problem: str) -> tuple[object, str | None]:
    """(``<section>.<key>`` of the config file at ``path``, None when unset; why the file could not be used,
    else None). ``parse``: ``tomllib.loads`` or ``json.loads`` (``kind``: "TOML", "JSON")."""
    text, problem = read_config(path)
    if text is None:
        return None, problem
    try:
        root = parse(text)
    except (ValueError, RecursionError) as error:  # tomllib.TOMLDecodeError is a ValueError
        return None, f"it is not valid {kind} ({str(error).splitlines()[0] if str(error) else 'unreadable'})"
    if not isinstance(root, dict):
        return None, f"it does not hold a {kind} object"
    table = root.get(section)
    if table is None:
        return None, None
    if not isinstance(table, dict):
        return None, section_problem
    return table.get(key), None


def describe_switch(setting: str, path: str, name: str, value: object, problem: str | None, *, default: bool,
                    unset_note: str) -> tuple[str, bool]:
    """(the head of doctor's text, the value the agent goes by) for a true/false setting with a default:
    an unusable file, an unset value and a value that is not a boolean all read as the default."""
    word = "on" if default else "off"
    if problem is not None:
        return f"{path} could not be read ({problem}); {name} read as its default, {word}", default
    if value is None:
        return f"{word} ({setting} not set; {unset_note})", default
    if not isinstance(value, bool):
        return f"{setting} is not true or false ({type(value).__name__}); read as its default, {word}", default
    return f"{'on' if value else 'off'} ({setting} = {str(value).lower()})", value


def read_switch(env: Mapping[str, str], folder_variable: str, folder_default: str, file_name: str, section: str,
                key: str, *, default: bool, unset_note: str) -> tuple[str, str, bool]:
    """(where the setting lives, the head of doctor's text, the value the agent goes by) for the true/false
    ``<section>.<key>`` of ``$folder_variable/<file_name>`` (else ``~/<folder_default>``): TOML for a
    ``.toml`` file, else JSON."""
    import os

    path = os.path.join(config_folder(env, folder_variable, folder_default), file_name)
    if file_name.endswith(".toml"):
        import tomllib

        label, value_problem = f"[{section}].{key}", (tomllib.loads, "TOML", f"[{section}] is not a table")
    else:
        import json

        label, value_problem = f"{section}.{key}", (json.loads, "JSON", f'"{section}" is not an object')
    setting = f"{label} in {path}"
    parse, kind, section_problem = value_problem
    value, problem = read_setting(path, parse, kind, section, key, section_problem)
    head, on = describe_switch(setting, path, key, value, problem, default=default, unset_note=unset_note)
    return setting, head, on


def configured(env: Mapping[str, str] | None = None) -> list[OwnKeepAwake]:
    """Every registered agent's own keep-awake, in registry order (agents without one are left out)."""
    from . import all_agents

    env = os.environ if env is None else env
    found = []
    for module in all_agents():
        reader = getattr(module, "own_keep_awake", None)
        if reader is None:
            continue
        try:
            item = reader(env)
        except Exception as error:  # noqa: BLE001 - one agent's reader never breaks doctor
            item = OwnKeepAwake(module.DISPLAY, f"could not be read: {error}", False)
        if item is not None:
            found.append(item)
    return found
