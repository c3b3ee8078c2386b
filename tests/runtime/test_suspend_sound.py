"""The post-stop sound goes through platform.api.play_sound (as the preview commands): the volume
warnings are logged also when the attempt fails, and a failed sound never stops the suspend."""

from __future__ import annotations

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime, with_settings


def test_a_failed_sound_logs_its_volume_warnings_and_the_suspend_goes_on():
    machine = closed_lid_machine()
    machine.sound_warnings = ["Volume override: could not set the output volume to 30% (no sink)."]
    machine.sound_failure = "no player found"
    harness = Harness(settings=with_settings(PostStopSuspendSound="Hand",
                                             PostStopSuspendSoundVolumeOverridePercent=30), machine=machine)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop("s1", IsProviderSessionEnd=True, SessionEndReason="Stop")
        await anyio.sleep(12)
        [warning] = h.log_entries("stop-suspend-sound-volume-warning")
        assert "could not set the output volume to 30%" in warning["Message"]
        [failed] = h.log_entries("stop-suspend-sound-failed")
        assert failed["Message"] == "Post-stop sound Hand failed: no player found"
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))
