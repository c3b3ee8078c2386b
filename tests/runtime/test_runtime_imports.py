"""What a runtime start imports: only what every runtime needs (issue 22, item 7: ~430 runtime starts per suite run)."""

from __future__ import annotations

import subprocess


def test_a_runtime_start_never_imports_the_http_client(fresh_venv):
    """httpx (~45 ms of CPU with its CLI's click and pygments) is imported by the webhook and follow-up
    senders when they first send: a runtime without webhooks never pays for it."""
    probe = ("import sys, lidguard.runtime.server, lidguard.cli.diagnostic_commands; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('httpx', 'httpcore', 'click', 'pygments')))")
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_runtime_start_never_imports_pydantic(fresh_venv):
    """The request boundary (``runtime/requests.py``) and the settings model are stdlib: pydantic (~120 ms
    of CPU) stays out of every runtime start and out of the request path."""
    probe = ("import sys, lidguard.runtime.server, lidguard.runtime.app, lidguard.runtime.handlers; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'pydantic_core', 'annotated_types'}))")
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
