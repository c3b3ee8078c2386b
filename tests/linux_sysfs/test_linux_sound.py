"""The Linux sound player against fake player/mixer scripts first on PATH: no real sound is made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lidguard.platform.api import SoundPlayer
from lidguard.platform.linux.sound import (
    LinuxSoundPlayer,
    SoundPlaybackError,
    canonical_system_sound_name,
    find_theme_sound,
    sound_theme_directories,
)

# Records "<tool> <argv...>" per call; FAKE_FAIL=" tool " or " tool:subcommand " makes it fail;
# FAKE_SLEEP makes a player hang. Only shell builtins: PATH holds nothing but the fakes.
_FAKE_TOOL = r"""#!/bin/sh
tool="${0##*/}"
line="$tool"
for argument in "$@"; do line="$line $argument"; done
printf '%s\n' "$line" >> "$FAKE_SOUND_LOG"
case " $FAKE_FAIL " in
  *" $tool "*|*" $tool:$1 "*) echo "$tool: simulated failure" >&2; exit 3 ;;
esac
case "$tool:$1" in
  wpctl:get-volume) printf '%s\n' "${FAKE_WPCTL_VOLUME:-Volume: 0.25 [MUTED]}" ;;
  pactl:get-sink-volume)
    printf '%s\n' "${FAKE_PACTL_VOLUME:-Volume: front-left: 26214 /  40% / -23.88 dB,   front-right: 19661 /  30% / -31.37 dB}"
    printf '        balance -0.25\n' ;;
  pactl:get-sink-mute) printf '%s\n' "${FAKE_PACTL_MUTE:-Mute: yes}" ;;
esac
if [ -n "$FAKE_SLEEP" ] && [ "$tool" != wpctl ] && [ "$tool" != pactl ]; then exec /bin/sleep "$FAKE_SLEEP"; fi
exit 0
"""


class FakeTools:
    def __init__(self, directory: Path, log: Path) -> None:
        self.directory = directory
        self.log = log

    def install(self, *names: str) -> None:
        for name in names:
            script = self.directory / name
            script.write_text(_FAKE_TOOL)
            script.chmod(0o755)

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeTools:
    directory = tmp_path / "bin"
    directory.mkdir()
    log = tmp_path / "calls.log"
    monkeypatch.setenv("PATH", str(directory))
    monkeypatch.setenv("FAKE_SOUND_LOG", str(log))
    for variable in ("FAKE_FAIL", "FAKE_SLEEP", "FAKE_WPCTL_VOLUME", "FAKE_PACTL_VOLUME", "FAKE_PACTL_MUTE"):
        monkeypatch.delenv(variable, raising=False)
    return FakeTools(directory, log)


@pytest.fixture
def sound_theme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(user sounds dir, system sounds dir) wired through XDG_DATA_HOME / XDG_DATA_DIRS."""
    user_data = tmp_path / "user-data"
    system_data = tmp_path / "system-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(user_data))
    monkeypatch.setenv("XDG_DATA_DIRS", f"relative/ignored:{system_data}")
    return user_data / "sounds", system_data / "sounds"


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"RIFF fake sound")
    return path


@pytest.fixture
def wav_file(tmp_path: Path) -> Path:
    return _touch(tmp_path / "done.wav")


# -- player choice -----------------------------------------------------------------------------


def test_implements_the_protocol() -> None:
    assert isinstance(LinuxSoundPlayer(), SoundPlayer)


def test_prefers_pw_play_then_paplay_then_aplay(fake_tools: FakeTools, wav_file: Path) -> None:
    fake_tools.install("aplay", "paplay", "pw-play")
    player = LinuxSoundPlayer()
    assert player.play(str(wav_file), volume_percent=None) == []
    (fake_tools.directory / "pw-play").unlink()
    player.play(str(wav_file), volume_percent=None)
    (fake_tools.directory / "paplay").unlink()
    player.play(str(wav_file), volume_percent=None)
    assert fake_tools.calls() == [f"pw-play {wav_file}", f"paplay {wav_file}", f"aplay -q {wav_file}"]


def test_no_player_raises(fake_tools: FakeTools, wav_file: Path) -> None:
    with pytest.raises(SoundPlaybackError, match="no sound player found on PATH"):
        LinuxSoundPlayer().play(str(wav_file), volume_percent=None)


def test_missing_file_raises_before_touching_the_volume(fake_tools: FakeTools, tmp_path: Path) -> None:
    fake_tools.install("pw-play", "wpctl")
    with pytest.raises(SoundPlaybackError, match="sound file not found"):
        LinuxSoundPlayer().play(str(tmp_path / "missing.wav"), volume_percent=50)
    assert fake_tools.calls() == []


def test_aplay_plays_wav_only(fake_tools: FakeTools, tmp_path: Path) -> None:
    fake_tools.install("aplay")
    ogg = _touch(tmp_path / "done.oga")
    with pytest.raises(SoundPlaybackError, match="aplay plays .wav files only"):
        LinuxSoundPlayer().play(str(ogg), volume_percent=None)
    assert fake_tools.calls() == []


def test_player_failure_raises_with_its_error(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("pw-play")
    monkeypatch.setenv("FAKE_FAIL", "pw-play")
    with pytest.raises(SoundPlaybackError, match=r"pw-play exited with status 3 .*simulated failure"):
        LinuxSoundPlayer().play(str(wav_file), volume_percent=None)


def test_player_timeout_raises(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("pw-play")
    monkeypatch.setenv("FAKE_SLEEP", "30")
    with pytest.raises(SoundPlaybackError, match="did not finish"):
        LinuxSoundPlayer(player_timeout_seconds=0.3).play(str(wav_file), volume_percent=None)


# -- system sounds and the freedesktop theme -----------------------------------------------------


def test_theme_directories_follow_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.delenv("XDG_DATA_DIRS", raising=False)
    home = Path(os.environ["HOME"])
    assert sound_theme_directories() == [
        home / ".local/share/sounds",
        Path("/usr/local/share/sounds"),
        Path("/usr/share/sounds"),
    ]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    monkeypatch.setenv("XDG_DATA_DIRS", f"{tmp_path / 'a'}::relative:{tmp_path / 'a'}")
    assert sound_theme_directories() == [tmp_path / "d/sounds", tmp_path / "a/sounds"]


def test_system_sound_names_are_case_insensitive() -> None:
    assert canonical_system_sound_name("asterisk") == "Asterisk"
    assert canonical_system_sound_name(" QUESTION ") == "Question"
    assert canonical_system_sound_name("Ding") is None


def test_user_theme_wins_for_the_same_name(sound_theme: tuple[Path, Path]) -> None:
    user, system = sound_theme
    _touch(system / "freedesktop/stereo/dialog-warning.oga")
    mine = _touch(user / "mine/stereo/dialog-warning.ogg")
    assert find_theme_sound("Exclamation") == mine


def test_a_better_name_wins_over_a_nearer_directory(sound_theme: tuple[Path, Path]) -> None:
    user, system = sound_theme
    _touch(user / "mine/bell.oga")
    information = _touch(system / "freedesktop/stereo/dialog-information.oga")
    assert find_theme_sound("Asterisk") == information


@pytest.mark.parametrize(
    ("sound", "available", "expected"),
    [
        ("Asterisk", ["message.oga", "bell.oga"], "message.oga"),
        ("Beep", ["message.oga", "audio-volume-change.oga"], "audio-volume-change.oga"),
        ("Exclamation", ["bell.oga"], "bell.oga"),
        ("Hand", ["dialog-warning.oga"], "dialog-warning.oga"),
        ("Question", ["dialog-information.oga"], "dialog-information.oga"),
    ],
)
def test_fallback_names(
    sound_theme: tuple[Path, Path], sound: str, available: list[str], expected: str
) -> None:
    _, system = sound_theme
    for name in available:
        _touch(system / "freedesktop/stereo" / name)
    assert find_theme_sound(sound) == system / "freedesktop/stereo" / expected


def test_wav_is_preferred_and_other_files_are_ignored(sound_theme: tuple[Path, Path]) -> None:
    _, system = sound_theme
    _touch(system / "a/dialog-error.oga")
    wav = _touch(system / "z/deep/dialog-error.wav")
    _touch(system / "a/dialog-error.mp3")
    (system / "a/dialog-error.ogg").mkdir()
    assert find_theme_sound("Hand") == wav
    assert find_theme_sound("Hand", extensions=(".oga",)) == system / "a/dialog-error.oga"
    assert find_theme_sound("Hand", extensions=(".flac",)) is None


def test_plays_a_system_sound_from_the_theme(fake_tools: FakeTools, sound_theme: tuple[Path, Path]) -> None:
    fake_tools.install("paplay")
    _, system = sound_theme
    bell = _touch(system / "freedesktop/stereo/bell.oga")
    LinuxSoundPlayer().play("beep", volume_percent=None)
    assert fake_tools.calls() == [f"paplay {bell}"]


def test_aplay_needs_a_wav_theme_file(fake_tools: FakeTools, sound_theme: tuple[Path, Path]) -> None:
    fake_tools.install("aplay")
    _, system = sound_theme
    _touch(system / "freedesktop/stereo/dialog-question.oga")
    with pytest.raises(SoundPlaybackError, match="aplay plays .wav only"):
        LinuxSoundPlayer().play("Question", volume_percent=None)
    wav = _touch(system / "custom/dialog-information.wav")
    LinuxSoundPlayer().play("Question", volume_percent=None)
    assert fake_tools.calls() == [f"aplay -q {wav}"]


# -- volume override -----------------------------------------------------------------------------


def test_wpctl_override_sequence(fake_tools: FakeTools, wav_file: Path) -> None:
    fake_tools.install("pw-play", "wpctl", "pactl")
    assert LinuxSoundPlayer().play(str(wav_file), volume_percent=40) == []
    assert fake_tools.calls() == [
        "wpctl get-volume @DEFAULT_AUDIO_SINK@",
        "wpctl set-volume @DEFAULT_AUDIO_SINK@ 40%",
        "wpctl set-mute @DEFAULT_AUDIO_SINK@ 0",
        f"pw-play {wav_file}",
        "wpctl set-mute @DEFAULT_AUDIO_SINK@ 1",
        "wpctl set-volume @DEFAULT_AUDIO_SINK@ 0.25",
    ]


def test_wpctl_unmuted_sink_is_not_muted_afterwards(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("pw-play", "wpctl")
    monkeypatch.setenv("FAKE_WPCTL_VOLUME", "Volume: 0.70")
    LinuxSoundPlayer().play(str(wav_file), volume_percent=100)
    assert fake_tools.calls() == [
        "wpctl get-volume @DEFAULT_AUDIO_SINK@",
        "wpctl set-volume @DEFAULT_AUDIO_SINK@ 100%",
        f"pw-play {wav_file}",
        "wpctl set-volume @DEFAULT_AUDIO_SINK@ 0.70",
    ]


def test_pactl_override_sequence_keeps_channel_balance(fake_tools: FakeTools, wav_file: Path) -> None:
    fake_tools.install("paplay", "pactl")
    assert LinuxSoundPlayer().play(str(wav_file), volume_percent=65) == []
    assert fake_tools.calls() == [
        "pactl get-sink-volume @DEFAULT_SINK@",
        "pactl get-sink-mute @DEFAULT_SINK@",
        "pactl set-sink-volume @DEFAULT_SINK@ 65%",
        "pactl set-sink-mute @DEFAULT_SINK@ 0",
        f"paplay {wav_file}",
        "pactl set-sink-mute @DEFAULT_SINK@ 1",
        "pactl set-sink-volume @DEFAULT_SINK@ 26214 19661",
    ]


def test_volume_is_restored_when_the_player_fails(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("pw-play", "wpctl")
    monkeypatch.setenv("FAKE_FAIL", "pw-play wpctl:set-mute")
    with pytest.raises(SoundPlaybackError) as caught:
        LinuxSoundPlayer().play(str(wav_file), volume_percent=40)
    assert fake_tools.calls()[-2:] == [
        "wpctl set-mute @DEFAULT_AUDIO_SINK@ 1",
        "wpctl set-volume @DEFAULT_AUDIO_SINK@ 0.25",
    ]
    assert [warning.split(":")[0] for warning in caught.value.warnings] == ["Volume override"] * 2
    assert "could not unmute" in caught.value.warnings[0]
    assert "could not mute the default output again" in caught.value.warnings[1]


def test_unreadable_volume_skips_the_override_with_a_warning(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("pw-play", "wpctl")
    monkeypatch.setenv("FAKE_FAIL", "wpctl:get-volume")
    warnings = LinuxSoundPlayer().play(str(wav_file), volume_percent=40)
    assert len(warnings) == 1 and warnings[0].startswith("Volume override skipped: could not read")
    assert "simulated failure" in warnings[0]
    assert fake_tools.calls() == ["wpctl get-volume @DEFAULT_AUDIO_SINK@", f"pw-play {wav_file}"]


def test_unexpected_mixer_output_skips_the_override(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("paplay", "pactl")
    monkeypatch.setenv("FAKE_PACTL_MUTE", "Stummschalten: nein")
    warnings = LinuxSoundPlayer().play(str(wav_file), volume_percent=40)
    assert "unexpected `pactl get-sink-mute` output" in warnings[0]
    assert fake_tools.calls()[-1] == f"paplay {wav_file}"
    assert not any("set-sink" in call for call in fake_tools.calls())


def test_set_and_restore_failures_are_warnings(
    fake_tools: FakeTools, wav_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tools.install("paplay", "pactl")
    monkeypatch.setenv("FAKE_FAIL", "pactl:set-sink-volume")
    monkeypatch.setenv("FAKE_PACTL_MUTE", "Mute: no")
    warnings = LinuxSoundPlayer().play(str(wav_file), volume_percent=30)
    assert len(warnings) == 2
    assert "could not set the output volume to 30%" in warnings[0]
    assert "could not restore the output volume 26214 19661" in warnings[1]
    assert f"paplay {wav_file}" in fake_tools.calls()


def test_no_mixer_is_a_warning(fake_tools: FakeTools, wav_file: Path) -> None:
    fake_tools.install("pw-play")
    warnings = LinuxSoundPlayer().play(str(wav_file), volume_percent=40)
    assert warnings == [
        "Volume override skipped: neither wpctl (PipeWire) nor pactl (PulseAudio) is on PATH."
    ]
    assert fake_tools.calls() == [f"pw-play {wav_file}"]


@pytest.mark.parametrize("percent", [0, 101, -5])
def test_out_of_range_volume_is_a_warning(fake_tools: FakeTools, wav_file: Path, percent: int) -> None:
    fake_tools.install("pw-play", "wpctl")
    warnings = LinuxSoundPlayer().play(str(wav_file), volume_percent=percent)
    assert warnings == [f"Volume override {percent}% is outside 1-100; played at the current volume."]
    assert fake_tools.calls() == [f"pw-play {wav_file}"]


def test_describe(fake_tools: FakeTools) -> None:
    player = LinuxSoundPlayer()
    assert player.describe() == (
        "unsupported: no sound player on PATH (pw-play, paplay or aplay); "
        "no wpctl/pactl: volume override unavailable"
    )
    fake_tools.install("aplay", "pactl")
    assert player.describe() == "available (player aplay, .wav only; volume override via pactl)"
    fake_tools.install("pw-play", "wpctl")
    assert player.describe() == "available (player pw-play; volume override via wpctl)"
