"""One settings change from a client that is not the CLI (the tray): the same steps as
``lidguard settings --OPTION VALUE``: under the settings file's config lock, load (an unusable file
is an error and is left alone), apply, save atomically 0600, then send the whole settings to the
running runtime with the ``settings`` IPC command (a runtime that is not running reads the file on
its next start)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ipc.client import send_request
from .store import apply_changes, load_settings_report, save_settings

__all__ = ["SettingsChangeError", "SettingsChanged", "change_settings"]


class SettingsChangeError(Exception):
    """One readable sentence: why the change was not made (or not taken by the runtime)."""


@dataclass(frozen=True)
class SettingsChanged:
    runtime_updated: bool  # False: no runtime ran; the saved file is used on its next start


def change_settings(settings_file: Path, socket_file: Path, changes: dict[tuple[str, ...], Any]) -> SettingsChanged:
    from ..platform.locking import ConfigLockError, config_lock

    try:
        with config_lock(settings_file):
            report = load_settings_report(settings_file)
            if report.error is not None:
                raise SettingsChangeError(report.error)
            try:
                settings = apply_changes(report.settings, changes)
            except ValueError as error:
                raise SettingsChangeError(f"The new value is not valid: {error}") from error
            try:
                save_settings(settings_file, settings)
            except OSError as error:
                raise SettingsChangeError(
                    f"Cannot save the settings file {settings_file}: {error.strerror or error}.") from error
            reply = send_request(socket_file, {"Command": "settings", "HasSettings": True,
                                               "Settings": settings.to_file_json()})
    except ConfigLockError as error:
        raise SettingsChangeError(str(error)) from error
    if reply.get("Succeeded"):
        return SettingsChanged(runtime_updated=True)
    if reply.get("RuntimeUnavailable"):
        return SettingsChanged(runtime_updated=False)
    raise SettingsChangeError(str(reply.get("Message") or "The runtime refused the settings."))
