"""Bounds every request field must respect, shared by the CLI/hook side and the runtime (stdlib only).

A value outside these bounds is refused at the boundary with a readable message: the CLI before it
sends, the runtime when it parses (it never trusts the client).
"""

from __future__ import annotations

__all__ = [
    "MAX_ASSISTANT_MESSAGE_CHARS",
    "MAX_PROMPT_PREVIEW_CHARS",
    "MAX_PROCESS_IDENTIFIER",
    "MAX_PROVIDER_NAME_CHARS",
    "MAX_REASON_CHARS",
    "MAX_REQUEST_ID_CHARS",
    "MAX_SENT_AT_MILLISECONDS",
    "MAX_TOOL_CALL_ID_CHARS",
    "MAX_TURN_ID_CHARS",
    "MAX_SESSION_IDENTIFIER_CHARS",
    "MAX_PATH_CHARS",
    "SESSION_JOURNAL_FILE_NAME",
]

# Process identifiers are C ints on every OS we support (Linux pid_max is at most 2^22).
MAX_PROCESS_IDENTIFIER = 2**31 - 1
MAX_SESSION_IDENTIFIER_CHARS = 512
MAX_PROVIDER_NAME_CHARS = 128
MAX_PATH_CHARS = 4096  # working directory, transcript path (PATH_MAX)
MAX_REASON_CHARS = 512  # session end reason, soft-lock reason
MAX_PROMPT_PREVIEW_CHARS = 2048  # the turn's prompt preview carried to webhooks (senders truncate)
MAX_ASSISTANT_MESSAGE_CHARS = 16384  # the last assistant message carried to webhooks (senders truncate)
MAX_REQUEST_ID_CHARS = 128  # a hook's request id (replay-safe events); hooks send 24 hex digits
MAX_TURN_ID_CHARS = 256  # a provider's turn id (Codex turn_id)
MAX_TOOL_CALL_ID_CHARS = 256  # a provider's tool call id (Claude tool_use_id, Codex call id, ...)
MAX_SENT_AT_MILLISECONDS = 2**53  # when the hook sent the request (Unix ms); exact in a JSON double

# The runtime's session journal in the data folder (``runtime/journal_file.py``). The hook side only
# asks whether it holds anything: then any hook event brings a dead runtime back to replay it.
SESSION_JOURNAL_FILE_NAME = "session-journal.jsonl"
