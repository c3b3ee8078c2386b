"""Shared by tests/mcp: both servers run as real ``python -m lidguard ...`` processes inside the root conftest's
isolation (``lidguard`` fixture: own HOME/XDG folders, fake platform) and are driven through the SDK's
own stdio client."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install 'lidguard[mcp]'")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")


@asynccontextmanager
async def mcp_client(env: dict[str, str], *arguments: str) -> AsyncIterator[ClientSession]:
    """An initialized client session with ``python -m lidguard <arguments>`` (its stderr is discarded)."""
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "lidguard", *arguments], env=env)
    with open("/dev/null", "w") as errors:  # noqa: SIM115 - the server's logs
        async with stdio_client(parameters, errlog=errors) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                yield session


def run_client(env: dict[str, str], arguments: list[str],
               body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with mcp_client(env, *arguments) as session:
            with anyio.fail_after(120):
                return await body(session)

    return anyio.run(main)


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool result (and it matches the text content)."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return "\n".join(getattr(block, "text", "") for block in result.content)


def camel_keys(value: Any, path: str = "") -> list[str]:
    """Every object key (recursively) that is not camelCase, with where it is."""
    bad: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not CAMEL.match(str(key)):
                bad.append(f"{path}.{key}")
            bad += camel_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            bad += camel_keys(item, f"{path}[{index}]")
    return bad


def start_runtime(lidguard: Any, timeout: float = 60.0) -> None:
    """Starts the runtime and waits for its socket: the CLI's own auto-start allows 5 s, which a loaded
    test machine can exceed (auto-start itself is checked in test_provider_server.py without a process)."""
    import subprocess

    subprocess.Popen([sys.executable, "-m", "lidguard", "run-server"], env=lidguard.env, start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers() -> bool:
        result = lidguard.run("status", "--json")
        return result.returncode == 0 and json.loads(result.stdout)["runtimeRunning"] is True

    assert lidguard.wait_until(answers, timeout=timeout), "the runtime did not start"
