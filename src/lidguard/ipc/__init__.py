"""The runtime's wire protocol and its stdlib-only client (safe for the hook hot path)."""
