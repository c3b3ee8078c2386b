"""preview-system-sound / preview-current-sound (REFERENCE 1.2) as real processes on the fake platform:
the same platform.api.play_sound call as the suspend flow, the saved volume override, warnings on stderr."""

from __future__ import annotations

import pytest

from lidguard.platform.api import SoundOutcome, play_sound
from lidguard.platform.fake import FakeMachine, FakePlatform

NAMES = "Asterisk, Beep, Exclamation, Hand, Question"


def _played(lidguard):
    return [(a["sound"], a["volumePercent"]) for a in lidguard.actions() if a["action"].startswith("sound-")]


def test_system_sound_plays_with_the_saved_volume_override(lidguard):
    lidguard.run("settings", "--post-stop-suspend-sound-volume-override-percent", "40", check=True)
    result = lidguard.run("preview-system-sound", "--name", "hand")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Played system sound: Hand", "Volume override setting: 40%"]
    assert result.stderr == ""
    assert _played(lidguard) == [("Hand", 40)]
    result = lidguard.run("preview-system-sound", "--system-sound=Question")
    assert result.returncode == 0 and "Played system sound: Question" in result.stdout
    assert _played(lidguard)[-1] == ("Question", 40)


def test_without_a_settings_file_the_volume_override_is_off(lidguard):
    result = lidguard.run("preview-system-sound", "--name", "Beep")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Played system sound: Beep", "Volume override setting: off"]
    assert _played(lidguard) == [("Beep", None)]


@pytest.mark.parametrize(("args", "message"), [
    ((), f"A system sound name is required. Supported values: {NAMES}."),
    (("--name", "  "), f"A system sound name is required. Supported values: {NAMES}."),
    (("--name", "Ding"), "Unsupported system sound name: Ding"),
    (("--name", "/tmp/x.wav"), "Unsupported system sound name: /tmp/x.wav"),
    (("--name", "Beep\x1b[2J\nX"), "Unsupported system sound name: Beep\\x1b[2J\\nX"),
    (("--name", "Hand", "--volume", "3"), "unrecognized arguments: --volume 3"),
])
def test_bad_names_are_one_line_errors_and_play_nothing(lidguard, args, message):
    result = lidguard.run("preview-system-sound", *args)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr
    assert _played(lidguard) == []


def test_volume_warnings_go_to_stderr_and_a_failure_is_one_error_line(lidguard):
    lidguard.run("settings", "--post-stop-suspend-sound-volume-override-percent", "70", check=True)
    lidguard.set_machine(soundWarnings=["Volume override skipped: no mixer."])
    result = lidguard.run("preview-system-sound", "--name", "Asterisk")
    assert result.returncode == 0
    assert result.stderr == "Warning: Volume override skipped: no mixer.\n"
    assert "Played system sound: Asterisk" in result.stdout
    lidguard.set_machine(soundWarnings=["could not restore\x1b[0m"], soundFailure="no player found")
    result = lidguard.run("preview-system-sound", "--name", "Asterisk")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == ["Warning: could not restore\\x1b[0m",
                                          "lidguard: The sound Asterisk could not be played: no player found"]


def test_current_sound_guides_when_none_is_configured(lidguard):
    result = lidguard.run("preview-current-sound")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "No post-stop suspend sound is configured."
    assert "lidguard settings --post-stop-suspend-sound Asterisk" in result.stdout
    assert _played(lidguard) == []


def test_current_sound_plays_the_saved_sound_and_volume(lidguard, tmp_path):
    wav = tmp_path / "done.wav"
    wav.write_bytes(b"RIFF")
    lidguard.run("settings", "--post-stop-suspend-sound", str(wav),
                 "--post-stop-suspend-sound-volume-override-percent", "100", check=True)
    result = lidguard.run("preview-current-sound")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"Played current post-stop suspend sound: {wav}",
                                          "Volume override setting: 100%"]
    assert _played(lidguard) == [(str(wav), 100)]


def test_current_sound_rejects_options(lidguard):
    result = lidguard.run("preview-current-sound", "--name", "Beep")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert _played(lidguard) == []


def test_a_corrupt_settings_file_is_one_error_line(lidguard):
    lidguard.run("settings", "--post-stop-suspend-sound", "Beep", check=True)
    (lidguard.data_dir / "settings.json").write_text("{not json")
    for command in ("preview-current-sound", "preview-system-sound --name Beep"):
        result = lidguard.run(*command.split())
        assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert _played(lidguard) == []


def test_play_sound_never_raises_and_keeps_the_warnings_of_a_failed_attempt():
    platform = FakePlatform(FakeMachine(sound_warnings=["w1"], sound_failure="boom"))
    assert play_sound(platform.sound, "Beep", 5) == SoundOutcome(False, ("w1",), "boom")
    platform = FakePlatform(FakeMachine(sound_warnings=["w2"]))
    assert play_sound(platform.sound, "Beep", None) == SoundOutcome(True, ("w2",), None)

    class Silent:
        def play(self, sound, *, volume_percent):
            raise OSError()

    assert play_sound(Silent(), "Beep", None) == SoundOutcome(False, (), "OSError")
