"""preview-system-sound and preview-current-sound (REFERENCE 1.2): play a sound the way the suspend
flow would - the same ``platform.api.play_sound`` call with the saved volume override - so the user
can check it before trusting it. Volume-override warnings go to stderr as ``Warning: ...``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..l10n import _
from ..platform.api import play_sound
from ..settings import SettingsFileError, load_settings
from ..settings.model import SYSTEM_SOUND_NAMES, Settings
from .context import CliContext
from .output import CliError, escape_control

__all__ = ["add_sound_commands"]

_NO_SOUND_GUIDE = (
    "No post-stop suspend sound is configured.",
    "To play a system sound before suspending, run: lidguard settings --post-stop-suspend-sound Asterisk",
    "To play a .wav file instead, run: lidguard settings --post-stop-suspend-sound /path/to/sound.wav",
    f"System sound names: {', '.join(SYSTEM_SOUND_NAMES)}",
)


def _saved_settings(context: CliContext) -> Settings | None:
    try:
        return load_settings(context.paths.settings_file)
    except SettingsFileError as error:
        raise CliError(str(error)) from error


def _play(context: CliContext, sound: str, volume: int | None) -> None:
    outcome = play_sound(context.platform.sound, sound, volume)
    for warning in outcome.warnings:
        sys.stderr.write(_("Warning: {value}").format(value=escape_control(warning)) + "\n")
    if outcome.failure is not None:
        raise CliError(_("The sound {value} could not be played: {value2}").format(
            value=escape_control(sound), value2=escape_control(outcome.failure)))


def _volume_line(volume: int | None) -> str:
    return f"Volume override setting: {'off' if volume is None else f'{volume}%'}"


def _preview_system_sound(context: CliContext, args: argparse.Namespace) -> int:
    requested = (args.name or "").strip()
    if not requested:
        raise CliError(_("A system sound name is required. Supported values: {value}.").format(
            value=', '.join(SYSTEM_SOUND_NAMES)))
    name = next((item for item in SYSTEM_SOUND_NAMES if item.lower() == requested.lower()), None)
    if name is None:
        raise CliError(_("Unsupported system sound name: {value}").format(value=escape_control(requested)))
    stored = _saved_settings(context)
    volume = stored.post_stop_suspend_sound_volume_override_percent if stored else None
    _play(context, name, volume)
    print(_("Played system sound: {name}").format(name=name))
    print(_volume_line(volume))
    return 0


def _preview_current_sound(context: CliContext, args: argparse.Namespace) -> int:
    stored = _saved_settings(context)
    sound = stored.post_stop_suspend_sound if stored else ""
    if not sound:
        print("\n".join(_NO_SOUND_GUIDE))
        return 0
    volume = stored.post_stop_suspend_sound_volume_override_percent if stored else None
    _play(context, sound, volume)
    print(_("Played current post-stop suspend sound: {value}").format(value=escape_control(sound)))
    print(_volume_line(volume))
    return 0


def add_sound_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "preview-system-sound", help=_("Play a system sound with the saved volume override."),
        description=_("Play a system sound exactly as the post-stop suspend flow would, with the saved volume "
                      "override. Names: {value}.").format(value=', '.join(SYSTEM_SOUND_NAMES)))
    parser.add_argument("--name", "--system-sound", dest="name", metavar="|".join(SYSTEM_SOUND_NAMES))
    parser.set_defaults(handler=_preview_system_sound)
    parser = subparsers.add_parser(
        "preview-current-sound", help=_("Play the configured post-stop suspend sound."),
        description=_("Play the saved post-stop suspend sound exactly as the suspend flow would."))
    parser.set_defaults(handler=_preview_current_sound)
