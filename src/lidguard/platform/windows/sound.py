"""Post-stop and reply-wait sounds on Windows, with the temporary master-volume override.

System sound names play as registry sound aliases (Asterisk -> SystemAsterisk, Beep ->
SystemDefault, Exclamation -> SystemExclamation, Hand -> SystemHand, Question -> SystemQuestion;
SND_ALIAS | SND_SYNC), other values as WAV files (winsound plays WAV only) - REFERENCE 8.1. The
override captures the default render endpoint's master volume scalar and mute state
(IAudioEndpointVolume), sets the percent, unmutes, plays, and restores both in a ``finally``.
Override problems come back as warnings; a sound that cannot play raises ``SoundPlaybackError``.
"""

from __future__ import annotations

from pathlib import Path

from .winapi import WindowsApi, WindowsApiError

__all__ = ["SYSTEM_SOUND_ALIASES", "SoundPlaybackError", "WindowsSoundPlayer"]

SYSTEM_SOUND_ALIASES = {
    "asterisk": "SystemAsterisk",
    "beep": "SystemDefault",
    "exclamation": "SystemExclamation",
    "hand": "SystemHand",
    "question": "SystemQuestion",
}


class SoundPlaybackError(RuntimeError):
    def __init__(self, message: str, warnings: list[str] | None = None) -> None:
        super().__init__(message)
        self.warnings = list(warnings or [])


class WindowsSoundPlayer:
    def __init__(self, api: WindowsApi) -> None:
        self._api = api

    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        alias = SYSTEM_SOUND_ALIASES.get(sound.strip().lower())
        if alias is None:
            path = Path(sound)
            if not path.is_file():
                raise SoundPlaybackError(f"sound file not found or not a file: {sound}")
            if path.suffix.lower() != ".wav":
                raise SoundPlaybackError(f"Windows plays .wav files only: {sound}")
        warnings: list[str] = []
        saved = self._begin_override(volume_percent, warnings) if volume_percent is not None else None
        failure: str | None = None
        try:
            self._api.play_sound(alias or sound, alias=alias is not None)
        except WindowsApiError as error:
            failure = f"PlaySound could not play {sound}: {error}"
        finally:
            if saved is not None:
                self._restore(saved, warnings)
        if failure is not None:
            raise SoundPlaybackError(failure, warnings)
        return warnings

    def _begin_override(self, percent: int, warnings: list[str]) -> tuple[float, bool] | None:
        if not 1 <= percent <= 100:
            warnings.append(f"Volume override {percent}% is outside 1-100; played at the current volume.")
            return None
        try:
            saved = self._api.get_endpoint_volume()
        except WindowsApiError as error:
            warnings.append(f"Volume override skipped: could not read the default output volume ({error}).")
            return None
        try:
            self._api.set_endpoint_volume(percent / 100.0)
        except WindowsApiError as error:
            warnings.append(f"Volume override: could not set the output volume to {percent}% ({error}).")
        if saved[1]:
            try:
                self._api.set_endpoint_mute(False)
            except WindowsApiError as error:
                warnings.append(f"Volume override: could not unmute the default output ({error}).")
        return saved

    def _restore(self, saved: tuple[float, bool], warnings: list[str]) -> None:
        scalar, muted = saved
        if muted:
            try:
                self._api.set_endpoint_mute(True)
            except WindowsApiError as error:
                warnings.append(f"Volume override: could not mute the default output again ({error}).")
        try:
            self._api.set_endpoint_volume(scalar)
        except WindowsApiError as error:
            warnings.append(f"Volume override: could not restore the output volume {scalar:.2f} ({error}).")

    def describe(self) -> str:
        try:
            scalar, muted = self._api.get_endpoint_volume()
        except WindowsApiError as error:
            return f"available (PlaySound; volume override unavailable: {error})"
        return f"available (PlaySound; default output at {round(scalar * 100)}%{', muted' if muted else ''})"
