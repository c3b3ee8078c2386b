"""Reading and checking request bodies of the notification server: size-bounded bodies, strict JSON,
forms, and the fields the routes take (reply text, seconds, follow-up ids, push subscriptions)."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import ClientDisconnect, Request

from lidguard.notify.config import LOOPBACK_HOSTS
from lidguard.notify.events import MAX_BODY_BYTES, has_lone_surrogate
from lidguard.notify.store import EXTEND_CAP_SECONDS

__all__ = ["MAX_EXTEND_SECONDS", "MAX_REPLY_CHARS", "BadRequest", "check_reply", "check_seconds",
           "check_subscription", "follow_up_key", "read_body", "read_form", "read_json"]

MAX_REPLY_CHARS = 4000
MAX_EXTEND_SECONDS = EXTEND_CAP_SECONDS
SECONDS_TEXT = re.compile(r"[0-9]{1,6}")  # ASCII digits only: str.isdigit() also takes "²" and "٣"
BASE64URL = re.compile(r"[A-Za-z0-9_\-]+=*")


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not re.fullmatch(r"[0-9]{1,18}", declared) or int(declared) > limit):
        raise BadRequest(413, "The request body is too large.")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(413, "The request body is too large.")
            chunks.append(chunk)
    except ClientDisconnect as error:  # the client went away, or its body took too long (notify.server)
        raise BadRequest(408, "The request body did not arrive in time.") from error
    return b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


async def read_json(request: Request) -> Any:
    """The body as JSON: strict (no NaN/Infinity, numbers Python can read), no lone surrogate anywhere."""
    try:
        value = json.loads((await read_body(request)).decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, UnicodeDecodeError, 4300+ digits
        raise BadRequest(400, "The request body must be JSON.") from error
    if has_lone_surrogate(value):
        raise BadRequest(400, "The request body contains a lone surrogate escape (\\ud800-\\udfff without its "
                              "pair), which is not valid Unicode.")
    return value


async def read_form(request: Request) -> dict[str, str]:
    try:
        fields = parse_qs((await read_body(request)).decode("utf-8"), keep_blank_values=True, max_num_fields=20)
    except (UnicodeDecodeError, ValueError) as error:
        raise BadRequest(400, "The form could not be read.") from error
    return {key: values[0] for key, values in fields.items()}


def check_reply(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(400, "text is required.")
    if len(value) > MAX_REPLY_CHARS:
        raise BadRequest(400, f"text is longer than {MAX_REPLY_CHARS} characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise BadRequest(400, "text contains a lone surrogate.") from error
    return value.strip()


def check_seconds(value: Any) -> int:
    if isinstance(value, str) and SECONDS_TEXT.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_EXTEND_SECONDS:
        raise BadRequest(400, f"seconds must be a whole number from 1 to {MAX_EXTEND_SECONDS}.")
    return value


def follow_up_key(value: str) -> str:
    """The canonical follow-up id (a UUID, as stored); anything else is not found."""
    try:
        return str(uuid.UUID(value)) if len(value) <= 64 else ""
    except ValueError:
        return ""


def check_subscription(body: dict[str, Any]) -> tuple[str, str, str]:
    """(endpoint, p256dh, auth) of a push subscription; the endpoint alone may be enough for DELETE."""
    endpoint = body.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > 2048:
        raise BadRequest(400, "endpoint is required.")
    if not endpoint.isascii() or not endpoint.isprintable() or " " in endpoint:
        raise BadRequest(400, "endpoint must be a URL of printable ASCII characters without spaces.")
    try:
        parts = urlsplit(endpoint)
        hostname, _ = parts.hostname, parts.port
    except ValueError as error:
        raise BadRequest(400, "endpoint is not a URL.") from error
    if not (parts.scheme == "https" or (parts.scheme == "http" and hostname in LOOPBACK_HOSTS)) or not hostname:
        raise BadRequest(400, "endpoint must be an https URL (or http on localhost).")
    keys = body.get("keys")
    keys = keys if isinstance(keys, dict) else {}
    values = []
    for name in ("p256dh", "auth"):
        value = keys.get(name)
        if not isinstance(value, str) or not value or len(value) > 200:
            raise BadRequest(400, f"keys.{name} is required.")
        if not BASE64URL.fullmatch(value):
            raise BadRequest(400, f"keys.{name} must be base64url.")
        values.append(value)
    return endpoint, values[0], values[1]
