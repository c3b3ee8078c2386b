"""The tray shows a platform mismatch (issue 33.1): a tray on the real platform following the demo's
(fake-platform) runtime through ``ipc.watch`` gets the refusal, shown as such in its tooltip."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any

import pytest

from lidguard.ipc.watch import watch_status
from lidguard.platform.paths import resolve_paths
from lidguard.tray.model import TrayState, tray_view


def test_a_real_tray_following_the_demo_runtime_shows_the_mismatch(lidguard: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    lidguard.run("start", "--provider", "claude", "--session", "demo-1", check=True)  # the fake runtime
    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")  # this process: a real tray
    stop = threading.Event()
    try:
        first = next(iter(watch_status(resolve_paths(), stop=stop, reconnect_seconds=0.2)))
    finally:
        stop.set()
    assert first is not None and first["PlatformMismatch"] is True
    view = tray_view(first, now=datetime.now(timezone.utc))
    assert view.state is TrayState.ERROR and view.session_count == 0
    assert view.tooltip.startswith("LidGuard: platform mismatch. Refused: the running LidGuard runtime uses the "
                                   "test suite's fake platform"), view.tooltip
