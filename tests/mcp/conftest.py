"""tests/mcp: the MCP servers through the SDK's own client, and the installers against the real agent CLIs."""

from __future__ import annotations

import sys
from pathlib import Path

# --import-mode=importlib puts no test folder on sys.path; mcp_harness.py and agent_clis.py live here.
sys.path.insert(0, str(Path(__file__).resolve().parent))
