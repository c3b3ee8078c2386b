"""``lidguard-notify init`` / ``serve``: the console script of the notification server.

Errors are one line on stderr and exit 1. ``--config`` may come from ``LIDGUARD_NOTIFY_CONFIG``,
``--host``/``--port`` from ``LIDGUARD_NOTIFY_HOST``/``LIDGUARD_NOTIFY_PORT``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lidguard.notify import NotifyExtraMissing, require_extra
from lidguard.notify.config import ConfigError, init_config, load_config

__all__ = ["main"]

SETTINGS_FLAGS = ("pre-suspend-webhook-url", "post-session-end-webhook-url", "closed-lid-stop-follow-up-webhook-url")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lidguard-notify", description="LidGuard webhooks -> Web Push, and follow-up replies.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    init = commands.add_parser("init", help="write a new config file with fresh secrets and VAPID keys")
    init.add_argument("--config", default=os.environ.get("LIDGUARD_NOTIFY_CONFIG"), help="config file to write")
    init.add_argument("--public-base-url", required=True, help="the URL browsers and lidguard reach this server at")
    init.add_argument("--subject", default="mailto:lidguard@localhost", help="VAPID subject (mailto: or https:)")
    init.add_argument("--database", default=None, help="SQLite file (default: beside the config file)")
    init.add_argument("--force", action="store_true", help="replace an existing config file and its secrets")
    init.add_argument("--json", action="store_true", help="print the webhook URL and access token as JSON")
    serve = commands.add_parser("serve", help="run the server")
    serve.add_argument("--config", default=os.environ.get("LIDGUARD_NOTIFY_CONFIG"), help="config file")
    serve.add_argument("--host", default=os.environ.get("LIDGUARD_NOTIFY_HOST", "127.0.0.1"))
    serve.add_argument("--port", default=os.environ.get("LIDGUARD_NOTIFY_PORT", "8787"))
    return parser


def _config_path(value: str | None) -> Path:
    if not value:
        raise UsageError("--config PATH is required (or set LIDGUARD_NOTIFY_CONFIG).")
    return Path(value).expanduser()


def _init(args: argparse.Namespace) -> int:
    path = _config_path(args.config)
    config = init_config(path, args.public_base_url, subject=args.subject, database_path=args.database,
                         force=args.force)
    url = config.webhook_url()
    if args.json:
        print(json.dumps({"configPath": str(path), "webhookUrl": url, "accessToken": config.access_token,
                          "publicBaseUrl": config.public_base_url, "vapidPublicKey": config.vapid_public_key}))
        return 0
    print(f"Wrote {path} (mode 0600). Keep it private: it holds the access token and the VAPID private key.")
    print(f"Access token (sign in to {config.public_base_url}/login): {config.access_token}")
    print(f"Webhook URL: {url}")
    print("Paste it into lidguard settings:")
    for flag in SETTINGS_FLAGS:
        print(f"  lidguard settings --{flag} {url}")
    print(f"Then run: lidguard-notify serve --config {path}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    require_extra()
    config = load_config(_config_path(args.config))
    try:
        port = int(args.port)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be a number from 0 to 65535, not {args.port!r}.")
    import uvicorn

    from lidguard.notify.app import create_app

    uvicorn.run(create_app(config), host=args.host, port=port, log_level="warning", proxy_headers=False,
                server_header=False)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return _init(args) if args.command == "init" else _serve(args)
    except (UsageError, ConfigError, NotifyExtraMissing, OSError) as error:
        print(f"lidguard-notify: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
