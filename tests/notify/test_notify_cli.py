"""Issue 18, lidguard-notify on the first day, as a user runs it (real processes): ``serve`` says where it
listens and where the dashboard is; ``--config`` defaults to the user config folder for both ``init`` and
``serve``; a missing config file says "not found: <path>"; ``--version``; help shows the defaults; a port
in use is one clear line."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from notify_harness import stop_follow_up, wait_for


def notify_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("LIDGUARD_NOTIFY_") and key not in ("XDG_CONFIG_HOME", "APPDATA")}
    env.pop("PYTEST_CURRENT_TEST", None)
    return {**env, "HOME": str(home), **extra}


def notify(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard.notify", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("lidguard-notify: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return result.stderr.strip()


@contextmanager
def serving(env: dict[str, str], *args: str, out: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    with out.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "lidguard.notify", "serve", *args], env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        yield process, out
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def printed_listen_url(process: subprocess.Popen[bytes], out: Path) -> str:
    def listening() -> str | None:
        if process.poll() is not None:
            raise AssertionError(f"serve exited {process.returncode}: {out.read_text()}")
        found = re.search(r"^Listening on (http://\S+)$", out.read_text(), re.MULTILINE)
        return found.group(1) if found else None

    url: str = wait_for(listening, timeout=30, what="serve to print where it listens")
    return url


def test_serve_prints_where_it_listens_and_the_dashboard_url(tmp_path: Path) -> None:
    env = notify_env(tmp_path)
    config = tmp_path / "n.json"
    init = notify(env, "init", "--config", str(config), "--public-base-url", "https://phone.example.org")
    assert init.returncode == 0, init.stderr
    with serving(env, "--config", str(config), "--port", "0", out=tmp_path / "serve.out") as (process, out):
        url = printed_listen_url(process, out)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
        assert httpx.get(f"{url}/healthz", timeout=10).text == "ok"  # the printed address is the real one
        text = out.read_text()
        assert "Dashboard: https://phone.example.org/" in text, text
        assert str(config) in text, text  # which config file it serves


def test_config_defaults_to_the_user_config_folder_for_init_and_serve(tmp_path: Path) -> None:
    env = notify_env(tmp_path)
    expected = tmp_path / ".config" / "LidGuard" / "notify.json"
    missing = notify(env, "serve", "--port", "0")
    assert one_line_error(missing) == f"lidguard-notify: config file not found: {expected} (create it with " \
                                      "lidguard-notify init --public-base-url URL)"
    port_probe = socket.socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    init = notify(env, "init", "--public-base-url", f"http://127.0.0.1:{port}")
    assert init.returncode == 0, init.stderr
    assert f"Wrote {expected} (mode 0600)" in init.stdout and "Then run: lidguard-notify serve\n" in init.stdout
    assert (expected.stat().st_mode & 0o777) == 0o600
    secret = json.loads(expected.read_text())["WebhookSecret"]
    with serving(env, "--port", str(port), out=tmp_path / "serve.out") as (process, out):
        url = printed_listen_url(process, out)
        answer = httpx.post(f"{url}/api/webhooks/lidguard/{secret}", json=stop_follow_up(), timeout=10)
        assert answer.status_code == 202  # serve read the file init wrote
    # XDG_CONFIG_HOME moves it (when absolute), and LIDGUARD_NOTIFY_CONFIG / --config still win.
    other = tmp_path / "other"
    xdg = notify(notify_env(other, XDG_CONFIG_HOME=str(tmp_path / "xdg")), "serve")
    assert f"not found: {tmp_path / 'xdg' / 'LidGuard' / 'notify.json'} " in one_line_error(xdg)
    relative = notify(notify_env(other, XDG_CONFIG_HOME="relative/dir"), "serve")
    assert f"not found: {other / '.config' / 'LidGuard' / 'notify.json'} " in one_line_error(relative)
    chosen = notify(notify_env(tmp_path, LIDGUARD_NOTIFY_CONFIG=str(tmp_path / "env.json")), "serve")
    assert f"not found: {tmp_path / 'env.json'} " in one_line_error(chosen)
    given = notify(notify_env(tmp_path), "serve", "--config", str(tmp_path / "given.json"))
    assert f"not found: {tmp_path / 'given.json'} " in one_line_error(given)


def test_a_config_or_database_path_that_is_no_regular_file_is_one_line(tmp_path: Path) -> None:
    env = notify_env(tmp_path)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert "not a regular file" in one_line_error(notify(env, "serve", "--config", str(fifo), timeout=30))
    assert time.monotonic() - started < 30
    assert "not a regular file" in one_line_error(notify(env, "serve", "--config", str(tmp_path)))
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps({"AccessToken": "x" * 200_000}))
    assert "larger than" in one_line_error(notify(env, "serve", "--config", str(huge)))
    config = tmp_path / "n.json"
    assert notify(env, "init", "--config", str(config), "--public-base-url", "http://127.0.0.1:9").returncode == 0
    database_is_a_folder = notify({**env, "LIDGUARD_NOTIFY_DATABASE_PATH": str(tmp_path)}, "serve", "--config",
                                  str(config), "--port", "0")
    assert f"cannot open the database {tmp_path}: " in one_line_error(database_is_a_folder)


def test_version_and_help_show_the_defaults(tmp_path: Path) -> None:
    env = notify_env(tmp_path)
    shown = notify(env, "--version")
    assert shown.returncode == 0 and shown.stdout == f"lidguard-notify {version('lidguard')}\n", shown
    help_text = notify(env, "serve", "--help")
    assert help_text.returncode == 0, help_text.stderr
    flat = " ".join(help_text.stdout.split())
    assert "--host HOST" in flat and "(default: 127.0.0.1" in flat, help_text.stdout
    assert "--port PORT" in flat and "(default: 8787" in flat, help_text.stdout
    unwrapped = "".join(help_text.stdout.split())  # argparse may wrap a long path
    assert f"(default:{tmp_path / '.config' / 'LidGuard' / 'notify.json'})" in unwrapped, help_text.stdout
    for args in (("--help",), ("init", "--help"), ("serve", "--help")):
        lines = notify(env, *args).stdout.splitlines()
        assert lines and max(len(line) for line in lines) <= 100, args


def test_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    env = notify_env(tmp_path)
    config = tmp_path / "n.json"
    assert notify(env, "init", "--config", str(config), "--public-base-url", "http://127.0.0.1:9").returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = notify(env, "serve", "--config", str(config), "--port", str(port))
    assert one_line_error(result) == f"lidguard-notify: cannot listen on 127.0.0.1:{port}: the port is already in " \
                                     "use (another lidguard-notify?); choose another with --port."
    assert result.stdout == ""
    bad_host = notify(env, "serve", "--config", str(config), "--host", "no-such-host.invalid", "--port", "0")
    assert "cannot listen on no-such-host.invalid:0" in one_line_error(bad_host)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_serve_listens_on_the_host_it_is_given(tmp_path: Path, host: str) -> None:
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    env = notify_env(tmp_path)
    config = tmp_path / "n.json"
    assert notify(env, "init", "--config", str(config), "--public-base-url", "http://localhost:9").returncode == 0
    with serving(env, "--config", str(config), "--host", host, "--port", "0", out=tmp_path / "s.out") as (process, out):
        url = printed_listen_url(process, out)
        assert url.startswith("http://[::1]:" if host == "::1" else "http://127.0.0.1:"), url
        assert httpx.get(f"{url}/healthz", timeout=10).text == "ok"
