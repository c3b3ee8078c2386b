"""MCP integration: the two stdio servers (``mcp-server``, ``provider-mcp-server``) and the installers.

The official ``mcp`` SDK is the optional extra ``lidguard[mcp]`` and costs about 600 ms to import, so
only ``servers.py`` and its stdio transport ``wire.py`` import it, and only the two server commands import
``servers.py``. The tool logic
lives in ``tools.py`` (plain functions returning camelCase dicts), the installers in ``install.py``
(provider CLIs) and ``config_file.py`` (any JSON MCP config file); none of them needs the SDK.
"""

from __future__ import annotations

import importlib.util

from ..shared.extras import ExtraMissing, missing_message

__all__ = ["McpSdkMissing", "require_sdk"]


class McpSdkMissing(ExtraMissing):
    """The ``mcp`` SDK is not installed (or is a major version lidguard does not speak)."""


def require_sdk() -> None:
    """Raises ``McpSdkMissing`` with the one-line install hint, without importing the SDK."""
    try:
        found = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("mcp.server.mcpserver")
    except (ImportError, ValueError):
        found = None
    if not found:
        raise McpSdkMissing(missing_message("mcp", "The MCP server", ["mcp 2.3 or newer"]))
