"""The notification server's config file (JSON, 0600) and its ``LIDGUARD_NOTIFY_*`` overrides.

Keys (PascalCase like settings.json): ``AccessToken``, ``WebhookSecret``, ``VapidPublicKey`` (65-byte
uncompressed P-256 point, base64url), ``VapidPrivateKey`` (32-byte scalar, base64url), ``VapidSubject``
(``mailto:`` or ``https:``), ``PublicBaseUrl`` (https, or http on a loopback host), ``DatabasePath``
(default: ``notifications.sqlite`` beside the config file). Every key can be overridden by
``LIDGUARD_NOTIFY_<KEY_IN_UPPER_SNAKE>`` (``LIDGUARD_NOTIFY_ACCESS_TOKEN``, ...).

The file's default place is ``notify.json`` in the user config folder (``platform.paths.user_config_dir``:
``~/.config/LidGuard`` on Linux), the same for ``init`` and ``serve``. It is read only when it is a
regular file of at most ``MAX_CONFIG_BYTES`` (a FIFO or a directory there is an error, never a hang).
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lidguard.fileio import write_atomic
from lidguard.platform.paths import user_config_dir

__all__ = ["ConfigError", "NotifyConfig", "default_config_path", "generate_vapid_keys", "init_config", "load_config",
           "webhook_url"]

KEYS = ("AccessToken", "WebhookSecret", "VapidPublicKey", "VapidPrivateKey", "VapidSubject", "PublicBaseUrl",
        "DatabasePath")
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
MIN_SECRET_LENGTH = 16
MAX_CONFIG_BYTES = 64 * 1024
CONFIG_FILE_NAME = "notify.json"


class ConfigError(ValueError):
    """The config file or an override is missing or invalid (one-line message)."""


def default_config_path() -> Path:
    return user_config_dir() / CONFIG_FILE_NAME


def env_name(key: str) -> str:
    return "LIDGUARD_NOTIFY_" + re.sub(r"(?<!^)(?=[A-Z])", "_", key).upper()


@dataclass(frozen=True)
class NotifyConfig:
    access_token: str
    webhook_secret: str
    vapid_public_key: str
    vapid_private_key: str
    vapid_subject: str
    public_base_url: str
    database_path: Path

    def webhook_url(self) -> str:
        return webhook_url(self.public_base_url, self.webhook_secret)


def webhook_url(public_base_url: str, secret: str) -> str:
    return f"{public_base_url}/api/webhooks/lidguard/{secret}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def generate_vapid_keys() -> tuple[str, str]:
    """A fresh P-256 key pair as (public uncompressed point, private scalar), both base64url."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962,
                                           serialization.PublicFormat.UncompressedPoint)
    private = key.private_numbers().private_value.to_bytes(32, "big")
    return _b64url(public), _b64url(private)


def normalize_base_url(url: str) -> str:
    """``url`` without a trailing ``/``; https, or http on a loopback host; no query or fragment."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"PublicBaseUrl must be an absolute http(s) URL: {url!r}.")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        raise ConfigError("PublicBaseUrl must use https (http is allowed only for localhost, 127.0.0.1 and ::1); "
                          "browsers allow Web Push only in a secure context.")
    if parts.query or parts.fragment:
        raise ConfigError("PublicBaseUrl must not have a query or a fragment.")
    return url


def _validate(values: dict[str, str], config_path: Path) -> NotifyConfig:
    for key, value in values.items():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone-surrogate escape in the file, undecodable bytes in the env
            raise ConfigError(f"{key} is not valid Unicode text.") from error
    for key in KEYS[:-1]:
        if not values.get(key, "").strip():
            raise ConfigError(f"The notification server setting {key} is missing (config file {config_path} "
                              f"or {env_name(key)}).")
    token, secret = values["AccessToken"], values["WebhookSecret"]
    for key, value in (("AccessToken", token), ("WebhookSecret", secret)):
        if len(value) < MIN_SECRET_LENGTH or not re.fullmatch(r"[A-Za-z0-9_\-]+", value):
            raise ConfigError(f"{key} must be at least {MIN_SECRET_LENGTH} URL-safe characters (A-Z a-z 0-9 _ -).")
    if secrets.compare_digest(token.encode(), secret.encode()):
        raise ConfigError("AccessToken and WebhookSecret must be different.")
    try:
        public, private = _b64url_decode(values["VapidPublicKey"]), _b64url_decode(values["VapidPrivateKey"])
    except ValueError as error:
        raise ConfigError("VapidPublicKey and VapidPrivateKey must be base64url.") from error
    if len(public) != 65 or public[0] != 4 or len(private) != 32:
        raise ConfigError("VapidPublicKey must be a 65-byte uncompressed P-256 point and VapidPrivateKey "
                          "a 32-byte key, both base64url (run lidguard-notify init for fresh keys).")
    subject = values["VapidSubject"].strip()
    if not (subject.startswith("mailto:") or subject.startswith("https://")):
        raise ConfigError("VapidSubject must start with mailto: or https://.")
    database = values.get("DatabasePath", "").strip()
    database_path = Path(os.path.expandvars(os.path.expanduser(database))) if database else \
        config_path.parent / "notifications.sqlite"
    return NotifyConfig(access_token=token, webhook_secret=secret, vapid_public_key=values["VapidPublicKey"],
                        vapid_private_key=values["VapidPrivateKey"], vapid_subject=subject,
                        public_base_url=normalize_base_url(values["PublicBaseUrl"]), database_path=database_path)


def read_config_text(path: Path) -> str | None:
    """The file's text; None when it does not exist. Never blocks on a FIFO, never reads a huge file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError as error:  # Windows refuses to open a folder
        raise ConfigError(f"The notification server config file {path} is not a regular file.") from error
    except OSError as error:
        raise ConfigError(f"Cannot read the notification server config file {path}: "
                          f"{error.strerror or error}.") from error
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise ConfigError(f"The notification server config file {path} is not a regular file.")
    with os.fdopen(descriptor, "rb") as file:
        try:
            data = file.read(MAX_CONFIG_BYTES + 1)
        except OSError as error:
            raise ConfigError(f"Cannot read the notification server config file {path}: "
                              f"{error.strerror or error}.") from error
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"The notification server config file {path} is larger than {MAX_CONFIG_BYTES} bytes.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"The notification server config file {path} is not UTF-8 text.") from error


def load_config(path: Path, environ: dict[str, str] | None = None) -> NotifyConfig:
    """Reads ``path``, then the overrides. A missing file is fine only when the environment gives every
    required key; otherwise the error says the file was not found."""
    environ = dict(os.environ) if environ is None else environ
    values: dict[str, str] = {}
    text = read_config_text(path)
    try:
        raw: Any = {} if text is None else json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ConfigError(f"The notification server config file {path} is not valid JSON: {error}.") from error
    if not isinstance(raw, dict):
        raise ConfigError(f"The notification server config file {path} must hold a JSON object.")
    for key in KEYS:
        value = raw.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise ConfigError(f"{key} in {path} must be a string.")
            values[key] = value
        override = environ.get(env_name(key))
        if override:
            values[key] = override
    if text is None and any(not values.get(key, "").strip() for key in KEYS[:-1]):
        raise ConfigError(f"config file not found: {path} (create it with lidguard-notify init --public-base-url URL)")
    return _validate(values, path)


def init_config(path: Path, public_base_url: str, *, subject: str = "mailto:lidguard@localhost",
                database_path: str | None = None, force: bool = False) -> NotifyConfig:
    """Writes a fresh config (0600): random token and a different random secret, new VAPID keys."""
    if path.exists() and not force:
        raise ConfigError(f"The config file {path} already exists (use --force to replace it and its secrets).")
    token = secrets.token_urlsafe(32)
    secret = secrets.token_urlsafe(32)
    while secret == token:  # pragma: no cover - 256 random bits
        secret = secrets.token_urlsafe(32)
    public, private = generate_vapid_keys()
    values = {"AccessToken": token, "WebhookSecret": secret, "VapidPublicKey": public, "VapidPrivateKey": private,
              "VapidSubject": subject, "PublicBaseUrl": normalize_base_url(public_base_url),
              "DatabasePath": database_path or str(path.parent.resolve() / "notifications.sqlite")}
    config = _validate(values, path)
    write_atomic(path, json.dumps(values, indent=2) + "\n", mode=0o600)
    return config
