"""Post-stop and reply-wait sounds on macOS: ``afplay`` and the output volume through ``osascript``.

System sound names map to the files in /System/Library/Sounds (REFERENCE 8.3): Asterisk -> Glass,
Beep -> Tink, Exclamation -> Basso, Hand -> Sosumi, Question -> Ping; any other value is a file path.
The volume override reads ``output volume`` and ``output muted`` of ``get volume settings``, sets
``set volume output volume N without output muted`` for playback, and restores both in a
``finally`` (AppleScript Standard Additions). Override problems are returned as warnings; a sound
that cannot play raises :class:`SoundPlaybackError` (the runtime logs it and carries on).
"""

from __future__ import annotations

import os
import subprocess

from .commands import CommandResult, RealToolRefused, ToolMissing, describe_tool, run_tool

__all__ = ["SYSTEM_SOUND_FILES", "MacSoundPlayer", "SoundPlaybackError", "resolve_sound_file"]

SYSTEM_SOUND_FILES = {
    "asterisk": "/System/Library/Sounds/Glass.aiff",
    "beep": "/System/Library/Sounds/Tink.aiff",
    "exclamation": "/System/Library/Sounds/Basso.aiff",
    "hand": "/System/Library/Sounds/Sosumi.aiff",
    "question": "/System/Library/Sounds/Ping.aiff",
}
PLAYER_TIMEOUT_SECONDS = 30.0
OSASCRIPT_TIMEOUT_SECONDS = 5.0


class SoundPlaybackError(RuntimeError):
    def __init__(self, message: str, warnings: list[str] | None = None) -> None:
        super().__init__(message)
        self.warnings = list(warnings or [])


def resolve_sound_file(sound: str) -> str:
    return SYSTEM_SOUND_FILES.get(sound.strip().lower(), sound)


def _osascript(script: str) -> CommandResult:
    try:
        return run_tool("osascript", ["-e", script], capability="sound", timeout=OSASCRIPT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return CommandResult(("osascript", "-e", script), 124, "", "timed out")


class MacSoundPlayer:
    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        path = resolve_sound_file(sound)
        if not path.startswith("/System/") and not os.path.isfile(path):
            raise SoundPlaybackError(f"sound file not found or not a file: {sound}")
        warnings: list[str] = []
        restore = self._begin_volume_override(volume_percent, warnings) if volume_percent is not None else None
        try:
            try:
                result = run_tool("afplay", [path], capability="sound", timeout=PLAYER_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                raise SoundPlaybackError(f"afplay did not finish {path} within {PLAYER_TIMEOUT_SECONDS:g} s",
                                         warnings) from None
            except (ToolMissing, RealToolRefused) as error:
                raise SoundPlaybackError(str(error), warnings) from error
            if not result.ok:
                raise SoundPlaybackError(result.failure_text(), warnings)
        finally:
            if restore is not None:
                self._restore_volume(*restore, warnings)
        return warnings

    def _begin_volume_override(self, percent: int, warnings: list[str]) -> tuple[int, bool] | None:
        if not 1 <= percent <= 100:
            warnings.append(f"Volume override {percent}% is outside 1-100; played at the current volume.")
            return None
        try:
            volume = _osascript("output volume of (get volume settings)")
            muted = _osascript("output muted of (get volume settings)")
        except (ToolMissing, RealToolRefused) as error:
            warnings.append(f"Volume override skipped: {error}.")
            return None
        if not (volume.ok and muted.ok and volume.stdout.strip().isdigit()):
            failed = volume if not volume.ok else muted
            warnings.append(f"Volume override skipped: could not read the output volume ({failed.failure_text()}).")
            return None
        state = (int(volume.stdout.strip()), muted.stdout.strip().lower() == "true")
        result = _osascript(f"set volume output volume {percent} without output muted")
        if not result.ok:
            warnings.append(f"Volume override: could not set the output volume to {percent}% "
                            f"({result.failure_text()}).")
        return state

    @staticmethod
    def _restore_volume(volume: int, muted: bool, warnings: list[str]) -> None:
        for script in (f"set volume output volume {volume}",
                       f"set volume output muted {'true' if muted else 'false'}"):
            try:
                result = _osascript(script)
            except (ToolMissing, RealToolRefused) as error:
                warnings.append(f"Volume override: could not restore ({error}).")
                return
            if not result.ok:
                warnings.append(f"Volume override: `{script}` failed ({result.failure_text()}).")

    def describe(self) -> str:
        player, mixer = describe_tool("afplay"), describe_tool("osascript")
        volume = "volume override via osascript" if mixer.startswith("available") else f"osascript {mixer}"
        if not player.startswith("available"):
            return f"unavailable: afplay {player}; {volume}"
        return f"available (command-line: afplay; {volume})"
