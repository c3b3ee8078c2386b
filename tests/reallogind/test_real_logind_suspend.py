"""The Linux backend's suspend path against a real logind 252 (HandleLidSwitch=suspend): lidguard's
inhibitors hold the closed lid, and a session that stops with the lid closed and no display ends in
exactly ONE recorded suspend, with the PreSuspend webhook first and the lid inhibitor released only
after lidguard's own Suspend request (releasing it first makes logind suspend by itself)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytestmark = pytest.mark.xdist_group("reallogind-suspend")

STOP = {"Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1", "IsProviderSessionEnd": True,
        "SessionEndReason": "Stop", "LastAssistantMessage": "Done."}


class Receiver:
    """A local webhook receiver noting, at each POST, what the real logind holds and has recorded."""

    def __init__(self, instance: Any) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                receiver.posts.append({"body": body, "sleeps": instance.sleep_requests(),
                                       "ours": sorted(e[0] for e in instance.inhibitors() if e[1] == "lidguard")})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


def ours(inside) -> list[str]:
    return sorted(entry[0] for entry in inside.ours())


# Longer than the window the tests count suspends in (see RealLogind's holdoff_seconds).
HOLDOFF_SECONDS = 6


def test_stop_with_the_lid_closed_gives_exactly_one_suspend_after_the_pre_suspend_webhook(fresh_logind, inside):
    logind = fresh_logind(holdoff_seconds=HOLDOFF_SECONDS)
    lg = inside(logind)
    receiver = Receiver(logind)
    lg.run("settings", "--post-stop-suspend-delay-seconds", "1", "--pre-suspend-webhook-url", receiver.url,
           check=True)
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert lg.wait_until(lambda: ours(lg) == ["handle-lid-switch", "sleep", "idle"] or len(ours(lg)) >= 2)
    held = ours(lg)
    assert "handle-lid-switch" in held, held
    logind.set_lid(True)
    assert logind.wait_for(lambda: logind.prop("LidClosed"), timeout=10)
    logind.wait_out_holdoff()  # from now on logind acts on the closed lid unless an inhibitor holds it
    assert not logind.wait_for(lambda: logind.sleep_requests(), timeout=1.0)  # the lid inhibitor holds it
    reply = lg.request(STOP)
    assert reply["Succeeded"], reply
    assert lg.wait_until(lambda: lg.json("suspend-history")["entries"], timeout=30)
    # logind re-checks the still-closed lid once lidguard's lid inhibitor is gone: give it the time it
    # takes (0.2 s seen) several times over, then count.
    assert logind.wait_for(lambda: not ours(lg), timeout=10)
    assert not logind.wait_for(lambda: len(logind.sleep_requests()) > 1, timeout=3.0)
    assert [line.split()[1] for line in logind.sleep_requests()] == ["systemd-suspend.service"]
    # logind saw the closed lid without lidguard's inhibitor, inside its resume hold-off: no action.
    assert "Ignoring lid switch request, system startup or resume too close." in logind.log_text("logind.log")
    receiver.server.shutdown()
    [post] = receiver.posts
    assert post["body"]["eventType"] == "PreSuspend"
    assert post["sleeps"] == [] and "handle-lid-switch" in post["ours"]  # the webhook came first
    [entry] = lg.json("suspend-history")["entries"]
    assert entry["Succeeded"] is True, entry
    assert "already in progress" not in json.dumps(entry)
