"""Sign-in for the pages (HttpOnly SameSite=Strict cookie, CSRF tokens on forms) and the JSON API's
Bearer AccessToken. Every secret comparison is constant-time on UTF-8 bytes.

The cookie is ``<expiry>.<nonce>.<hmac>``, signed with a key derived from the AccessToken (a new token
signs everybody out). The CSRF token of a session is another HMAC of its nonce; the login form uses a
double-submit nonce cookie of its own.

``LoginThrottle``: per client address (IPv6 per /64), the first ``FREE_FAILURES`` wrong access tokens
(sign-in form or Bearer) cost nothing; then each further attempt waits 1, 2, 4, ... s after the last
failure, at most ``MAX_DELAY_SECONDS``, answered 429 with Retry-After and the token left unchecked.
A success forgets the address, so does ``FORGET_SECONDS`` without a failure; at most
``MAX_ADDRESSES`` are remembered (the longest quiet goes first).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from lidguard.notify.config import NotifyConfig

__all__ = ["COOKIE_NAME", "FREE_FAILURES", "LOGIN_COOKIE_NAME", "MAX_DELAY_SECONDS", "SESSION_SECONDS", "Auth",
           "LoginThrottle", "safe_return_url", "token_matches"]

COOKIE_NAME = "LidGuard.Notifications"
LOGIN_COOKIE_NAME = "LidGuard.Notifications.Login"
SESSION_SECONDS = 7 * 24 * 3600
CSRF_HEADER = "x-csrf-token"
FREE_FAILURES = 5
MAX_DELAY_SECONDS = 300
FORGET_SECONDS = 3600
MAX_ADDRESSES = 4096


def token_matches(given: str | None, expected: str) -> bool:
    if given is None:
        return False
    try:
        given_bytes = given.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return hmac.compare_digest(given_bytes, expected.encode("utf-8"))


def safe_return_url(url: str | None) -> str:
    """A local path (``/...``, never ``//`` or ``/\\``), else ``/``."""
    if not url or not url.startswith("/") or url.startswith("//") or url.startswith("/\\") or "\\" in url:
        return "/"
    return url if all(32 < ord(char) < 127 for char in url) else "/"


class Auth:
    def __init__(self, config: NotifyConfig) -> None:
        self.config = config
        self._key = hmac.new(config.access_token.encode(), b"lidguard-notify-session", hashlib.sha256).digest()
        self.secure = config.public_base_url.startswith("https://")

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    # Sessions --------------------------------------------------------------------------------------
    def session(self, cookies: dict[str, str]) -> str | None:
        """The nonce of a valid, unexpired session cookie."""
        parts = cookies.get(COOKIE_NAME, "").split(".")
        if len(parts) != 3 or not parts[0].isdigit():
            return None
        expires, nonce, signature = parts
        if not token_matches(signature, self._sign(f"{expires}.{nonce}")) or int(expires) < time.time():
            return None
        return nonce

    def set_session(self, response: Any, nonce: str | None = None) -> None:
        """A new (or, for sliding expiry, renewed) session cookie on ``response``."""
        nonce = nonce or secrets.token_urlsafe(18)
        expires = str(int(time.time()) + SESSION_SECONDS)
        response.set_cookie(COOKIE_NAME, f"{expires}.{nonce}.{self._sign(f'{expires}.{nonce}')}",
                            max_age=SESSION_SECONDS, path="/", httponly=True, samesite="strict", secure=self.secure)

    def clear_session(self, response: Any) -> None:
        response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=self.secure)

    def csrf_token(self, nonce: str) -> str:
        return self._sign(f"csrf.{nonce}")

    def csrf_ok(self, nonce: str, token: str | None) -> bool:
        return token_matches(token, self.csrf_token(nonce))

    # Login form ------------------------------------------------------------------------------------
    def login_nonce(self, cookies: dict[str, str]) -> str:
        nonce = cookies.get(LOGIN_COOKIE_NAME, "")
        return nonce if 16 <= len(nonce) <= 64 and nonce.isascii() else secrets.token_urlsafe(18)

    def login_token(self, nonce: str) -> str:
        return self._sign(f"login.{nonce}")

    def set_login_cookie(self, response: Any, nonce: str) -> None:
        response.set_cookie(LOGIN_COOKIE_NAME, nonce, max_age=3600, path="/login", httponly=True,
                            samesite="strict", secure=self.secure)

    def login_form_ok(self, cookies: dict[str, str], token: str | None) -> bool:
        nonce = cookies.get(LOGIN_COOKIE_NAME)
        return bool(nonce) and token_matches(token, self._sign(f"login.{nonce}"))

    def access_token_ok(self, given: str | None) -> bool:
        return token_matches(given, self.config.access_token)

    # JSON API --------------------------------------------------------------------------------------
    def api_allowed(self, method: str, headers: Any, cookies: dict[str, str]) -> bool:
        """Bearer AccessToken, or a session cookie (plus the CSRF header for anything but GET/HEAD)."""
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            return self.access_token_ok(authorization[7:].strip())
        nonce = self.session(cookies)
        if nonce is None:
            return False
        return method in ("GET", "HEAD") or self.csrf_ok(nonce, headers.get(CSRF_HEADER))


def address_key(address: str | None) -> str:
    """The throttled unit: an IPv4 address, an IPv6 /64, or the text as given (never an error)."""
    try:
        parsed = ipaddress.ip_address(address or "")
    except ValueError:
        return (address or "unknown")[:64]
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed.ipv4_mapped or parsed) if isinstance(parsed, ipaddress.IPv6Address) else str(parsed)


class LoginThrottle:
    """Failed access-token attempts per address (see the module text); ``clock`` is monotonic seconds."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_addresses: int = MAX_ADDRESSES) -> None:
        self.clock = clock
        self.max_addresses = max_addresses
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()  # oldest last failure first

    def __len__(self) -> int:
        return len(self._failures)

    def _forget_quiet(self, now: float) -> None:
        while self._failures:
            _, (_, last) = next(iter(self._failures.items()))
            if now - last < FORGET_SECONDS:
                return
            self._failures.popitem(last=False)

    def retry_after(self, address: str | None) -> int:
        """Whole seconds until ``address`` may try a token again (0: now)."""
        now = self.clock()
        self._forget_quiet(now)
        count, last = self._failures.get(address_key(address), (0, now))
        if count < FREE_FAILURES:
            return 0
        delay = min(2.0 ** min(count - FREE_FAILURES, 30), MAX_DELAY_SECONDS)
        return max(0, math.ceil(last + delay - now))

    def failed(self, address: str | None) -> None:
        key, now = address_key(address), self.clock()
        count, _ = self._failures.pop(key, (0, now))
        self._failures[key] = (count + 1, now)
        while len(self._failures) > self.max_addresses:
            self._failures.popitem(last=False)

    def succeeded(self, address: str | None) -> None:
        self._failures.pop(address_key(address), None)
