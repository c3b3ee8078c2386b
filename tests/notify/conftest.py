"""Fixtures of tests/notify (the notification server). Its packages are the ``notify`` extra, installed
by ci/install-notify-test-deps.sh: without them these tests skip, except under CI=true."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

NEEDED = ("starlette", "uvicorn", "jinja2", "pywebpush", "py_vapid", "http_ece", "httpx")
MISSING = [name for name in NEEDED if importlib.util.find_spec(name) is None]
if MISSING and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
    pytest.skip(f"the notify extra is not installed (missing {', '.join(MISSING)}); "
                "run bash ci/install-notify-test-deps.sh", allow_module_level=True)

# --import-mode=importlib puts no test folder on sys.path; notify_harness.py lives here.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from notify_harness import PushReceiver, ServerProcess, free_port  # noqa: E402


@pytest.fixture
def notify_port() -> int:
    return free_port()


@pytest.fixture
def notify_config(tmp_path: Path, notify_port: int) -> Any:
    from lidguard.notify.config import init_config

    return init_config(tmp_path / "notify.json", f"http://127.0.0.1:{notify_port}")


@pytest.fixture
def notify_client(notify_config: Any) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from lidguard.notify.app import create_app

    with TestClient(create_app(notify_config, idle_poll_seconds=0.2), base_url=notify_config.public_base_url) as client:
        yield client


@pytest.fixture
def push_receiver() -> Iterator[PushReceiver]:
    with PushReceiver().running() as receiver:
        yield receiver


@pytest.fixture
def notify_server(notify_config: Any, notify_port: int, tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path / "notify.json", notify_port).start()
    try:
        yield server
    finally:
        server.stop()
