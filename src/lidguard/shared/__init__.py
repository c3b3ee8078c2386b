"""What the CLI, the hook commands and the MCP servers share (stdlib only; nothing here imports cli/)."""
