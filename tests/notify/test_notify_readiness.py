"""Issue 38.3 on the dashboard: the "Safe to close the lid?" line from this user's runtime on this machine,
and no line (never a guess) when no runtime answers here."""

from __future__ import annotations

import os
from typing import Any

import pytest

from lidguard.notify.pages import environment
from lidguard.notify.readiness_line import local_readiness


def render_dashboard(ready: dict[str, Any] | None) -> str:
    return environment().get_template("dashboard.html").render(
        signed_in=True, csrf="c", counts={"ActiveSubscriptions": 0}, follow_ups=[], events=[], webhook_url="u",
        ready=ready)


def test_the_line_comes_from_the_local_runtime_and_goes_with_it(lidguard: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in lidguard.env.items():
        if key.startswith(("LIDGUARD_", "XDG_")) or key == "HOME":
            monkeypatch.setenv(key, value)
    for key in list(os.environ):
        if key.startswith("XDG_") and key not in lidguard.env:
            monkeypatch.delenv(key)
    assert local_readiness() is None  # no runtime here: no line
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    ready = local_readiness()
    assert ready is not None and ready["safe"] is False  # the tests' runtime is the fake platform
    assert ready["text"].startswith("Safe to close the lid: not yet - this runtime is the fake platform")
    assert 'id="readiness"' in render_dashboard(ready)
    lidguard.run("stop-runtime", "--force", check=True)
    assert local_readiness() is None


def test_the_dashboard_line_is_escaped_and_absent_without_a_runtime() -> None:
    assert 'id="readiness"' not in render_dashboard(None)
    html = render_dashboard({"safe": True, "reason": "ready", "text": "Safe to close the lid: yes - <b>2</b>"})
    assert "&lt;b&gt;2&lt;/b&gt;" in html and 'class="card readiness ok"' in html
