"""A fake libSystem notify(3) over a real pipe: ``notify_register_file_descriptor`` creates the pipe
(its read end is the descriptor handed out, as libnotify does), NOTIFY_REUSE adds a name to it,
``post(name)`` writes that registration's token in network byte order (what notifyd's delivery
does), and ``notify_cancel`` of the last token closes the descriptor."""

from __future__ import annotations

import os
from typing import Any

NOTIFY_STATUS_FAILED = 1000000  # notify.h NOTIFY_STATUS_FAILED


class FakeNotify:
    def __init__(self, ffi: Any, *, refuse: set[str] | None = None) -> None:
        self.ffi = ffi
        self.refuse = refuse or set()
        self.read_end: int | None = None
        self.write_end: int | None = None
        self.tokens: dict[int, str] = {}
        self.registered: list[tuple[str, int]] = []  # (name, flags)
        self.cancelled: list[int] = []
        self._next_token = 0x7A00_0001  # high bit patterns make the byte order matter

    def notify_register_file_descriptor(self, name: Any, notify_fd: Any, flags: int, out_token: Any) -> int:
        text = (name if isinstance(name, bytes) else self.ffi.string(name)).decode()
        self.registered.append((text, flags))
        if text in self.refuse:
            return NOTIFY_STATUS_FAILED
        if flags & 1:  # NOTIFY_REUSE: the caller's descriptor must be ours
            assert notify_fd[0] == self.read_end
        else:
            assert self.read_end is None
            self.read_end, self.write_end = os.pipe()
            notify_fd[0] = self.read_end
        token = self._next_token
        self._next_token += 0x0101_0000
        self.tokens[token] = text
        out_token[0] = token
        return 0

    def notify_cancel(self, token: int) -> int:
        self.cancelled.append(token)
        if self.tokens.pop(token, None) is None:
            return 2  # NOTIFY_STATUS_INVALID_TOKEN
        if not self.tokens and self.read_end is not None:
            os.close(self.read_end)
            self.read_end = None
        return 0

    def token_of(self, name: str) -> int:
        return next(token for token, registered in self.tokens.items() if registered == name)

    def post(self, name: str) -> None:
        self.write(self.token_of(name).to_bytes(4, "big"))

    def write(self, data: bytes) -> None:
        assert self.write_end is not None
        os.write(self.write_end, data)

    def close(self) -> None:
        for end in (self.read_end, self.write_end):
            if end is not None:
                try:
                    os.close(end)
                except OSError:
                    pass
        self.read_end = self.write_end = None
