"""Sign-in for the pages (HttpOnly SameSite=Strict cookie, CSRF tokens on forms) and the JSON API's
Bearer AccessToken. Every secret comparison is constant-time on UTF-8 bytes.

The cookie is ``<expiry>.<nonce>.<hmac>``, signed with a key derived from the AccessToken (a new token
signs everybody out). The CSRF token of a session is another HMAC of its nonce; the login form uses a
double-submit nonce cookie of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

from lidguard.notify.config import NotifyConfig

__all__ = ["COOKIE_NAME", "LOGIN_COOKIE_NAME", "SESSION_SECONDS", "Auth", "safe_return_url", "token_matches"]

COOKIE_NAME = "LidGuard.Notifications"
LOGIN_COOKIE_NAME = "LidGuard.Notifications.Login"
SESSION_SECONDS = 7 * 24 * 3600
CSRF_HEADER = "x-csrf-token"


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
