"""Post-stop and reply-wait sounds on Linux, with the temporary master-volume override.

Players, in order of preference: ``pw-play`` (PipeWire), ``paplay`` (PulseAudio, also served by
pipewire-pulse), ``aplay`` (ALSA; plays WAV only). System sound names map to files of the
freedesktop sound theme (https://specifications.freedesktop.org/sound-theme-spec/ and the sound
naming spec) found under ``$XDG_DATA_HOME/sounds`` then each ``$XDG_DATA_DIRS`` entry + ``/sounds``
(XDG Base Directory spec defaults: ``~/.local/share`` and ``/usr/local/share:/usr/share``).

The volume override captures the default sink's volume and mute state, sets the requested
percent, unmutes, plays, and restores both in a ``finally``: through ``wpctl`` (WirePlumber) or
``pactl`` (PulseAudio API). Override problems come back as warning strings; a sound that cannot
play raises :class:`SoundPlaybackError` (the caller logs it; it never stops the suspend flow).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PLAYER_PREFERENCE",
    "SYSTEM_SOUND_THEME_NAMES",
    "LinuxSoundPlayer",
    "MixerError",
    "SoundPlaybackError",
    "canonical_system_sound_name",
    "find_theme_sound",
    "sound_theme_directories",
]

PLAYER_PREFERENCE = ("pw-play", "paplay", "aplay")
_WAV_ONLY_PLAYERS = frozenset({"aplay"})
_PLAYER_ARGUMENTS = {"pw-play": [], "paplay": [], "aplay": ["-q"]}
THEME_EXTENSIONS = (".wav", ".oga", ".ogg")

# Names from the freedesktop sound naming spec, best match first.
SYSTEM_SOUND_THEME_NAMES: dict[str, tuple[str, ...]] = {
    "Asterisk": ("dialog-information", "message", "bell"),
    "Beep": ("bell", "audio-volume-change", "message"),
    "Exclamation": ("dialog-warning", "bell"),
    "Hand": ("dialog-error", "dialog-warning"),
    "Question": ("dialog-question", "dialog-information"),
}

DEFAULT_PLAYER_TIMEOUT_SECONDS = 30.0
DEFAULT_MIXER_TIMEOUT_SECONDS = 5.0


class SoundPlaybackError(RuntimeError):
    """The sound did not play; ``warnings`` holds any volume-override warnings of the attempt."""

    def __init__(self, message: str, warnings: list[str] | None = None) -> None:
        super().__init__(message)
        self.warnings = list(warnings or [])


class MixerError(RuntimeError):
    """A wpctl/pactl call failed or printed something unexpected."""


def canonical_system_sound_name(sound: str) -> str | None:
    """``asterisk`` -> ``Asterisk``; None when ``sound`` is not a system sound name."""
    lowered = sound.strip().lower()
    for name in SYSTEM_SOUND_THEME_NAMES:
        if name.lower() == lowered:
            return name
    return None


def sound_theme_directories() -> list[Path]:
    """``<XDG_DATA_HOME>/sounds`` then ``<each XDG_DATA_DIRS entry>/sounds``, read now.

    Relative entries are invalid per the XDG Base Directory spec and ignored.
    """
    data_home = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data_home):
        data_home = str(Path.home() / ".local" / "share")
    data_dirs = os.environ.get("XDG_DATA_DIRS", "") or "/usr/local/share:/usr/share"
    directories: list[Path] = []
    for base in [data_home, *data_dirs.split(":")]:
        if base and os.path.isabs(base):
            candidate = Path(base) / "sounds"
            if candidate not in directories:
                directories.append(candidate)
    return directories


def _find_in_sound_tree(sounds_directory: Path, stem: str, extensions: tuple[str, ...]) -> Path | None:
    """``<sounds_directory>/**/<stem><ext>``: the first extension in order wins, then the path."""
    wanted = {stem + extension: rank for rank, extension in enumerate(extensions)}
    best: tuple[int, str] | None = None
    # Symlinked directories are not followed (a theme linking back to its parent would loop);
    # symlinked files, which themes use for aliases, are found.
    for directory, subdirectories, filenames in os.walk(sounds_directory):
        subdirectories.sort()
        for filename in filenames:
            rank = wanted.get(filename)
            path = os.path.join(directory, filename)
            if rank is not None and os.path.isfile(path) and (best is None or (rank, path) < best):
                best = (rank, path)
    return Path(best[1]) if best else None


def find_theme_sound(system_name: str, *, extensions: tuple[str, ...] = THEME_EXTENSIONS) -> Path | None:
    """The theme file for a system sound: each theme name in order, in each directory in order."""
    canonical = canonical_system_sound_name(system_name)
    if canonical is None:
        return None
    directories = [directory for directory in sound_theme_directories() if directory.is_dir()]
    for stem in SYSTEM_SOUND_THEME_NAMES[canonical]:
        for directory in directories:
            found = _find_in_sound_tree(directory, stem, extensions)
            if found is not None:
                return found
    return None


def find_sound_player() -> tuple[str, str] | None:
    """(name, executable path) of the preferred player on PATH now, or None."""
    for name in PLAYER_PREFERENCE:
        executable = shutil.which(name)
        if executable:
            return name, executable
    return None


def _run_mixer_command(argv: list[str], timeout: float) -> str:
    # LC_ALL=C: pactl translates its output ("Mute: no"), which the parsers below read.
    environment = {**os.environ, "LC_ALL": "C"}
    try:
        completed = subprocess.run(
            argv,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )
    except subprocess.TimeoutExpired as error:
        raise MixerError(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from error
    except OSError as error:
        raise MixerError(f"`{' '.join(argv)}` could not start ({error})") from error
    if completed.returncode != 0:
        detail = completed.stderr.strip().splitlines()[-1:] or ["no error output"]
        raise MixerError(f"`{' '.join(argv)}` exited with status {completed.returncode}: {detail[0]}")
    return completed.stdout


@dataclass(frozen=True, slots=True)
class VolumeState:
    """What to give the mixer's set-volume to put the volume back, and whether it was muted."""

    volume_arguments: tuple[str, ...]
    muted: bool


class _CommandMixer:
    """A mixer driven by one command-line tool."""

    def __init__(self, executable: str, timeout: float) -> None:
        self._executable = executable
        self._timeout = timeout

    def _run(self, *arguments: str) -> str:
        return _run_mixer_command([self._executable, *arguments], self._timeout)


class WpctlMixer(_CommandMixer):
    """WirePlumber's ``wpctl`` on the default sink (``wpctl get-volume`` prints ``Volume: 0.40 [MUTED]``)."""

    name = "wpctl"
    target = "@DEFAULT_AUDIO_SINK@"
    _VOLUME_PATTERN = re.compile(r"Volume:\s*([0-9]+(?:\.[0-9]+)?)(\s*\[MUTED\])?")

    def capture(self) -> VolumeState:
        output = self._run("get-volume", self.target)
        match = self._VOLUME_PATTERN.search(output)
        if match is None:
            raise MixerError(f"unexpected `wpctl get-volume` output: {output.strip()!r}")
        return VolumeState(volume_arguments=(match.group(1),), muted=match.group(2) is not None)

    def set_volume_percent(self, percent: int) -> None:
        self._run("set-volume", self.target, f"{percent}%")

    def set_volume_arguments(self, arguments: tuple[str, ...]) -> None:
        self._run("set-volume", self.target, *arguments)

    def set_muted(self, muted: bool) -> None:
        self._run("set-mute", self.target, "1" if muted else "0")


class PactlMixer(_CommandMixer):
    """``pactl`` on the default sink; the volume is captured per channel as raw values to keep balance."""

    name = "pactl"
    target = "@DEFAULT_SINK@"
    # "Volume: front-left: 26214 /  40% / -23.88 dB,   front-right: 26214 /  40% / -23.88 dB"
    _CHANNEL_PATTERN = re.compile(r"(\d+)\s*/\s*\d+%")
    _MUTE_PATTERN = re.compile(r"Mute:\s*(yes|no)")

    def capture(self) -> VolumeState:
        volume_output = self._run("get-sink-volume", self.target)
        channels = tuple(self._CHANNEL_PATTERN.findall(volume_output))
        if not channels:
            raise MixerError(f"unexpected `pactl get-sink-volume` output: {volume_output.strip()!r}")
        mute_output = self._run("get-sink-mute", self.target)
        mute = self._MUTE_PATTERN.search(mute_output)
        if mute is None:
            raise MixerError(f"unexpected `pactl get-sink-mute` output: {mute_output.strip()!r}")
        return VolumeState(volume_arguments=channels, muted=mute.group(1) == "yes")

    def set_volume_percent(self, percent: int) -> None:
        self._run("set-sink-volume", self.target, f"{percent}%")

    def set_volume_arguments(self, arguments: tuple[str, ...]) -> None:
        self._run("set-sink-volume", self.target, *arguments)

    def set_muted(self, muted: bool) -> None:
        self._run("set-sink-mute", self.target, "1" if muted else "0")


Mixer = WpctlMixer | PactlMixer


def find_mixer(timeout: float = DEFAULT_MIXER_TIMEOUT_SECONDS) -> Mixer | None:
    """wpctl (PipeWire's own) before pactl; looked up on PATH now."""
    wpctl = shutil.which("wpctl")
    if wpctl:
        return WpctlMixer(wpctl, timeout)
    pactl = shutil.which("pactl")
    if pactl:
        return PactlMixer(pactl, timeout)
    return None


class LinuxSoundPlayer:
    """Plays a system sound name or a sound file to completion (SoundPlayer protocol)."""

    def __init__(
        self,
        *,
        player_timeout_seconds: float = DEFAULT_PLAYER_TIMEOUT_SECONDS,
        mixer_timeout_seconds: float = DEFAULT_MIXER_TIMEOUT_SECONDS,
    ) -> None:
        self._player_timeout = player_timeout_seconds
        self._mixer_timeout = mixer_timeout_seconds

    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        player = find_sound_player()
        if player is None:
            raise SoundPlaybackError(
                "no sound player found on PATH: install pw-play (pipewire), paplay (pulseaudio-utils) "
                "or aplay (alsa-utils)"
            )
        player_name, executable = player
        sound_file = self._resolve_sound_file(sound, player_name)
        warnings: list[str] = []
        override = (
            self._begin_volume_override(volume_percent, warnings) if volume_percent is not None else None
        )
        failure: str | None = None
        try:
            failure = self._run_player(player_name, executable, sound_file)
        finally:
            if override is not None:
                self._restore_volume(*override, warnings)
        if failure is not None:
            raise SoundPlaybackError(failure, warnings)
        return warnings

    def _resolve_sound_file(self, sound: str, player_name: str) -> Path:
        wav_only = player_name in _WAV_ONLY_PLAYERS
        system_name = canonical_system_sound_name(sound)
        if system_name is not None:
            extensions = (".wav",) if wav_only else THEME_EXTENSIONS
            found = find_theme_sound(system_name, extensions=extensions)
            if found is None:
                names = "|".join(SYSTEM_SOUND_THEME_NAMES[system_name])
                raise SoundPlaybackError(
                    f"no sound theme file for {system_name} ({names} with {'/'.join(extensions)}) under "
                    + ", ".join(str(directory) for directory in sound_theme_directories())
                    + (
                        " (aplay plays .wav only; install pw-play or paplay for .oga themes)"
                        if wav_only
                        else ""
                    )
                )
            return found
        path = Path(sound)
        if not path.is_file():
            raise SoundPlaybackError(f"sound file not found or not a file: {sound}")
        if wav_only and path.suffix.lower() != ".wav":
            raise SoundPlaybackError(f"aplay plays .wav files only: {sound}")
        return path

    def _run_player(self, player_name: str, executable: str, sound_file: Path) -> str | None:
        """None when the sound played; else why not."""
        argv = [executable, *_PLAYER_ARGUMENTS[player_name], str(sound_file)]
        try:
            completed = subprocess.run(
                argv,
                check=False,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                timeout=self._player_timeout,
            )
        except subprocess.TimeoutExpired:  # subprocess.run kills the player before raising
            return f"{player_name} did not finish {sound_file} within {self._player_timeout:g} s"
        except OSError as error:
            return f"{player_name} could not start: {error}"
        if completed.returncode != 0:
            detail = completed.stderr.strip().splitlines()[-1:] or ["no error output"]
            return (
                f"{player_name} exited with status {completed.returncode} playing {sound_file}: {detail[0]}"
            )
        return None

    def _begin_volume_override(self, percent: int, warnings: list[str]) -> tuple[Mixer, VolumeState] | None:
        """Captures then applies the override; returns what to restore, or None (nothing changed)."""
        if not 1 <= percent <= 100:
            warnings.append(f"Volume override {percent}% is outside 1-100; played at the current volume.")
            return None
        mixer = find_mixer(self._mixer_timeout)
        if mixer is None:
            warnings.append(
                "Volume override skipped: neither wpctl (PipeWire) nor pactl (PulseAudio) is on PATH."
            )
            return None
        try:
            state = mixer.capture()
        except MixerError as error:
            warnings.append(f"Volume override skipped: could not read the default output volume ({error}).")
            return None
        # Volume first, then unmute: the first audible sample is already at the override volume.
        try:
            mixer.set_volume_percent(percent)
        except MixerError as error:
            warnings.append(f"Volume override: could not set the output volume to {percent}% ({error}).")
        if state.muted:
            try:
                mixer.set_muted(False)
            except MixerError as error:
                warnings.append(f"Volume override: could not unmute the default output ({error}).")
        return mixer, state

    def _restore_volume(self, mixer: Mixer, state: VolumeState, warnings: list[str]) -> None:
        # Mute back first (if it was muted), then the volume: nothing is heard at a wrong level.
        if state.muted:
            try:
                mixer.set_muted(True)
            except MixerError as error:
                warnings.append(f"Volume override: could not mute the default output again ({error}).")
        try:
            mixer.set_volume_arguments(state.volume_arguments)
        except MixerError as error:
            previous = " ".join(state.volume_arguments)
            warnings.append(f"Volume override: could not restore the output volume {previous} ({error}).")

    def describe(self) -> str:
        player = find_sound_player()
        mixer = find_mixer(self._mixer_timeout)
        volume = (
            f"volume override via {mixer.name}" if mixer else "no wpctl/pactl: volume override unavailable"
        )
        if player is None:
            return f"unsupported: no sound player on PATH (pw-play, paplay or aplay); {volume}"
        wav_note = ", .wav only" if player[0] in _WAV_ONLY_PLAYERS else ""
        return f"available (player {player[0]}{wav_note}; {volume})"
