"""What a runtime start imports: only what every runtime needs (issue 22, item 7: ~430 runtime starts per suite run)."""

from __future__ import annotations

import subprocess


def _loaded(fresh_venv, modules: str, packages: set[str]) -> str:
    """Which of ``packages`` importing ``modules`` loads, in a clean-start interpreter (-I, fresh venv)."""
    wanted = sorted(packages)
    probe = f"import sys, {modules}; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({wanted!r})))"
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_runtime_start_never_imports_the_http_client(fresh_venv):
    """httpx (~45 ms of CPU with its CLI's click and pygments) is imported by the webhook and follow-up
    senders when they first send: a runtime without webhooks never pays for it."""
    assert _loaded(fresh_venv, "lidguard.runtime.server, lidguard.cli.diagnostic_commands",
                   {"httpx", "httpcore", "click", "pygments"}) == "[]"


def test_a_runtime_start_never_imports_pydantic(fresh_venv):
    """The request boundary (``runtime/requests.py``) and the settings model are stdlib: pydantic (~120 ms
    of CPU) stays out of every runtime start and out of the request path."""
    assert _loaded(fresh_venv, "lidguard.runtime.server, lidguard.runtime.app, lidguard.runtime.handlers",
                   {"pydantic", "pydantic_core", "annotated_types"}) == "[]"


def test_the_probe_sees_what_a_module_loads(fresh_venv):
    """Not vacuous: the same probe reports a package the imported modules do load."""
    assert _loaded(fresh_venv, "lidguard.mcp.servers", {"pydantic"}) == "['pydantic']"
