"""``lidguard-notify init`` / ``serve``: the console script of the notification server.

Errors are one line on stderr and exit 1. ``--config`` defaults to ``notify.json`` in the user config
folder (``init`` and ``serve`` agree) and may come from ``LIDGUARD_NOTIFY_CONFIG``; ``--host``/``--port``
from ``LIDGUARD_NOTIFY_HOST``/``LIDGUARD_NOTIFY_PORT``. ``serve`` binds the socket itself (so a port in
use is one line, and ``--port 0`` works), then prints where it listens and the dashboard URL.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from lidguard.notify import NotifyExtraMissing, require_extra
from lidguard.notify.config import ConfigError, NotifyConfig, default_config_path, init_config, load_config
from lidguard.shared.extras import missing_message
from lidguard.switches import SwitchError

__all__ = ["main"]

SETTINGS_FLAGS = ("pre-suspend-webhook-url", "post-session-end-webhook-url", "closed-lid-stop-follow-up-webhook-url")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = "8787"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=100, max_help_position=32)


def _version() -> str:
    from lidguard import __version__

    return f"lidguard-notify {__version__}"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lidguard-notify", description="LidGuard webhooks -> Web Push, and follow-up replies.",
                     formatter_class=_formatter)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    config_default = os.environ.get("LIDGUARD_NOTIFY_CONFIG") or str(default_config_path())
    init = commands.add_parser("init", help="write a new config file with fresh secrets and VAPID keys",
                               formatter_class=_formatter)
    init.add_argument("--config", default=config_default, help="config file to write (default: %(default)s)")
    init.add_argument("--public-base-url", required=True, help="the URL browsers and lidguard reach this server at")
    init.add_argument("--subject", default="mailto:lidguard@localhost",
                      help="VAPID subject, mailto: or https: (default: %(default)s)")
    init.add_argument("--database", default=None, help="SQLite file (default: beside the config file)")
    init.add_argument("--force", action="store_true", help="replace an existing config file and its secrets")
    init.add_argument("--json", action="store_true", help="print the webhook URL and access token as JSON")
    serve = commands.add_parser("serve", help="run the server", formatter_class=_formatter)
    serve.add_argument("--config", default=config_default, help="config file (default: %(default)s)")
    serve.add_argument("--host", default=os.environ.get("LIDGUARD_NOTIFY_HOST", DEFAULT_HOST),
                       help="address to listen on (default: %(default)s; env LIDGUARD_NOTIFY_HOST)")
    serve.add_argument("--port", default=os.environ.get("LIDGUARD_NOTIFY_PORT", DEFAULT_PORT),
                       help="port to listen on, 0 for any free one (default: %(default)s; env LIDGUARD_NOTIFY_PORT)")
    return parser


def _config_path(value: str) -> Path:
    if not value.strip():
        raise UsageError("--config must not be empty.")
    return Path(value).expanduser()


def _init(args: argparse.Namespace) -> int:
    require_extra()  # the VAPID keys need cryptography; a server that cannot run needs no config either
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
    default = path == _config_path(str(default_config_path()))
    print("Then run: lidguard-notify serve" + ("" if default else f" --config {path}"))
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket (IPv6 for an address with a colon), or one line saying why not."""
    where = f"{host}:{port}"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listener = socket.socket(family, socket.SOCK_STREAM)
    except OSError as error:
        raise UsageError(f"cannot listen on {where}: {error.strerror or error}.") from error
    try:
        # A restart may bind at once (SO_REUSEADDR); where that option would let a second server take the
        # same port (Windows has SO_EXCLUSIVEADDRUSE instead), take the port exclusively.
        exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)
        listener.setsockopt(socket.SOL_SOCKET, exclusive if exclusive is not None else socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except socket.gaierror as error:
        listener.close()
        raise UsageError(f"cannot listen on {where}: unknown host ({error.strerror or error}).") from error
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            raise UsageError(f"cannot listen on {where}: the port is already in use (another lidguard-notify?); "
                             "choose another with --port.") from error
        if error.errno in (errno.EACCES, errno.EPERM):
            raise UsageError(f"cannot listen on {where}: permission denied (ports below 1024 need privileges); "
                             "choose another with --port.") from error
        raise UsageError(f"cannot listen on {where}: {error.strerror or error}.") from error
    return listener


def _listen_url(listener: socket.socket) -> str:
    address = listener.getsockname()
    host = f"[{address[0]}]" if listener.family == socket.AF_INET6 else address[0]
    return f"http://{host}:{address[1]}"


def _announce(listener: socket.socket, config: NotifyConfig, path: Path) -> None:
    print(f"Listening on {_listen_url(listener)}")
    print(f"Dashboard: {config.public_base_url}/ (sign in with the access token in {path})")
    print("Stop with Ctrl+C.", flush=True)


def _check_database(config: NotifyConfig) -> None:
    """Opens (and migrates) the database once before serving: a bad DatabasePath is one line, not a traceback."""
    import sqlite3

    from lidguard.notify.store import Store

    try:
        Store(config.database_path).close()
    except (sqlite3.Error, OSError) as error:
        raise UsageError(f"cannot open the database {config.database_path}: {error}.") from error


def _serve(args: argparse.Namespace) -> int:
    require_extra()
    path = _config_path(args.config)
    config = load_config(path)
    try:
        port = int(args.port)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be a number from 0 to 65535, not {args.port!r}.")
    _check_database(config)
    import uvicorn

    from lidguard import switches
    from lidguard.notify.app import create_app
    from lidguard.notify.server import accept_backlog, connection_cap, guarded_protocol
    from lidguard.platform.descriptors import open_file_limit

    listener = _listen(args.host, port)
    _log_webhooks()

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:  # the app's startup (database, dispatcher) went well: say where it is
                _announce(listener, config, path)

    limit = open_file_limit()
    protocol = guarded_protocol(header_timeout=switches.notify_header_timeout_seconds(),
                                body_timeout=switches.notify_body_timeout_seconds(), cap=connection_cap(limit))
    server = Server(uvicorn.Config(create_app(config), log_level="warning", proxy_headers=False,
                                   server_header=False, http=protocol, backlog=accept_backlog(limit)))
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()
    return 0 if server.started else 1


def _log_webhooks() -> None:
    """``serve`` prints one line per webhook on stderr (app.py's ``lidguard.notify.webhooks`` logger)."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("lidguard-notify: %(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    logger = logging.getLogger("lidguard.notify.webhooks")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return _init(args) if args.command == "init" else _serve(args)
    except (UsageError, ConfigError, NotifyExtraMissing, SwitchError, OSError) as error:
        print(f"lidguard-notify: {error}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:  # a package the check above does not know (a dependency's own)
        print(f"lidguard-notify: {missing_message('notify', 'lidguard-notify', [error.name or str(error)])}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
