"""What each menu entry does, through the commands the CLI uses.

Pause/Resume are the ``pause``/``resume`` IPC commands (``pause`` starts the runtime when none runs,
as ``lidguard pause`` does); the toggles are ``settings.change.change_settings`` (the same steps as
``lidguard settings --change-lid-action ...``); "Sleep now" asks the platform's suspender for the
configured mode (enabled by the menu only while nothing is protected); "Open status" opens the
notify dashboard when ``lidguard-notify`` is configured (``notify.json`` with its ``PublicBaseUrl``),
else writes a small status page (0600, in the data folder) and opens it in the browser. Every action
returns one line for the user (shown as a notification where the toolkit can) and never raises.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any

from ..ipc.client import send_request
from ..platform.paths import LidGuardPaths

__all__ = ["TrayActions"]

PAUSE_SECONDS = {"pause-30m": 30 * 60, "pause-2h": 2 * 60 * 60}
STATUS_PAGE_NAME = "tray-status.html"


class TrayActions:
    def __init__(self, paths: LidGuardPaths) -> None:
        self.paths = paths

    def request(self, command: str, *, auto_start: bool = False, **fields: Any) -> dict[str, Any]:
        body = {"Command": command, **{key: value for key, value in fields.items() if value is not None}}
        return send_request(self.paths.socket_file, body, auto_start=auto_start)

    def run(self, key: str, status: dict[str, Any] | None = None) -> str:
        try:
            if key in PAUSE_SECONDS:
                return self._reply_line(self.request("pause", auto_start=True, PauseSeconds=PAUSE_SECONDS[key]))
            if key == "resume":
                reply = self.request("resume")
                if reply.get("RuntimeUnavailable"):
                    return "LidGuard runtime is not running: nothing is paused."
                return self._reply_line(reply)
            if key == "change-lid-action":
                current = self._setting(status, "ChangeLidAction")
                return self._change(("ChangeLidAction",), not current, "Change lid action")
            if key == "suspend-mode":
                mode = "Sleep" if self._setting(status, "SuspendMode") == "Hibernate" else "Hibernate"
                return self._change(("SuspendMode",), mode, "Suspend mode")
            if key == "sleep-now":
                return self._sleep_now(status)
            if key == "open-status":
                return self._open_status(status)
        except Exception as error:  # an action must never end the tray
            return f"{key} failed: {error}"
        return f"Unknown action {key}."

    def _setting(self, status: dict[str, Any] | None, key: str) -> Any:
        """The runtime's value (its reply), else the stored one (no runtime runs)."""
        settings = status.get("Settings") if isinstance(status, dict) else None
        if isinstance(settings, dict) and key in settings:
            return settings[key]
        from ..settings import load_settings_report

        return load_settings_report(self.paths.settings_file).settings.to_file_json().get(key)

    @staticmethod
    def _reply_line(reply: dict[str, Any]) -> str:
        message = str(reply.get("Message") or "")
        if not reply.get("Succeeded"):
            return message or "The runtime reported a failure."
        return message or "Done."

    def _change(self, json_path: tuple[str, ...], value: Any, name: str) -> str:
        from ..settings.change import SettingsChangeError, change_settings

        try:
            result = change_settings(self.paths.settings_file, self.paths.socket_file, {json_path: value})
        except SettingsChangeError as error:
            return str(error)
        shown = ("on" if value else "off") if isinstance(value, bool) else str(value)
        tail = "" if result.runtime_updated else " (used on the next runtime start)"
        return f"{name}: {shown}{tail}."

    def _sleep_now(self, status: dict[str, Any] | None) -> str:
        from ..platform import load_platform
        from ..platform.api import SuspendMode, Unsupported

        mode = SuspendMode.HIBERNATE if self._setting(status, "SuspendMode") == "Hibernate" else SuspendMode.SLEEP
        try:
            result = load_platform().suspend.suspend(mode)
        except Unsupported as error:
            return f"Cannot {mode.value.lower()} here: {error}"
        return str(getattr(result, "message", "") or f"{mode.value} requested.")

    def _open_status(self, status: dict[str, Any] | None) -> str:
        import webbrowser

        url = notify_dashboard_url() or self.write_status_page(status).as_uri()
        return "Status opened." if webbrowser.open(url) else f"Could not open a browser for {url}."

    def write_status_page(self, status: dict[str, Any] | None) -> Any:
        from ..fileio import write_atomic
        from .model import menu_entries, tray_view

        view = tray_view(status, now=datetime.now(timezone.utc))
        rows = "".join(f"<li>{html.escape(entry.label)}</li>" for entry in menu_entries(view)
                       if entry.key == "session")
        page = (f"<!doctype html><meta charset=utf-8><title>LidGuard status</title>"
                f"<h1>LidGuard</h1><p>{html.escape(view.title)}</p><ul>{rows}</ul>")
        path = self.paths.data_dir / STATUS_PAGE_NAME
        write_atomic(path, page)
        return path




def notify_dashboard_url() -> str | None:
    """The lidguard-notify dashboard when its config file is there and valid, else None."""
    from ..notify.config import ConfigError, default_config_path, load_config

    path = default_config_path()
    if not path.is_file():
        return None
    try:
        return load_config(path).public_base_url.rstrip("/") + "/"
    except (ConfigError, OSError, ValueError):
        return None
