"""The one escape of text that goes into a log line or onto a terminal (stdlib only; the hook path uses it).

Every character that could end a line for some reader or act on a terminal is written as an escape:
C0 controls (tab, CR and LF included), DEL, C1 controls (U+0085 NEL among them), the line and paragraph
separators U+2028/U+2029, bidirectional marks, embeddings, overrides and isolates, and lone surrogates.
``\\n``, ``\\r`` and ``\\t`` keep their short names; the rest is ``\\xHH`` or ``\\uHHHH``. Other
non-printable text (ZWJ in an emoji, ...) stays, so a record split only at ``\\n`` is always one record
and ``cat`` of a log never runs an escape sequence from a payload.
"""

from __future__ import annotations

__all__ = ["escape_json_text", "escape_text"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_RANGES = ((0x200E, 0x200F), (0x2028, 0x202E), (0x2066, 0x2069), (0xD800, 0xDFFF))


def _is_escaped(code: int) -> bool:
    return code <= 0x1F or 0x7F <= code <= 0x9F or any(low <= code <= high for low, high in _ESCAPED_RANGES)


def _escaped(char: str) -> str:
    code = ord(char)
    if not _is_escaped(code):
        return char
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def escape_text(text: str) -> str:
    """``text`` with every control and separator character escaped (printable text as is, at once)."""
    if text.isprintable():  # every escaped character is non-printable: the common case costs one scan
        return text
    return "".join(char if char.isprintable() else _escaped(char) for char in text)


def escape_json_text(encoded: str) -> str:
    """JSON text encoded with ``ensure_ascii=False`` with the same characters written as ``\\uXXXX``
    escapes (the encoder escapes C0 only: C1, U+2028, bidi controls stayed raw). Still the same JSON value;
    outside strings the encoder writes ASCII only, so every such character is inside a string."""
    if encoded.isprintable():
        return encoded
    return "".join(f"\\u{ord(char):04x}" if not char.isprintable() and _is_escaped(ord(char)) else char
                   for char in encoded)
