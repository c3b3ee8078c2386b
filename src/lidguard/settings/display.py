"""The human settings block (same lines and order as the original tool)."""

from __future__ import annotations

from ..platform.host import away_mode_supported
from .model import Settings, headless_defaults

__all__ = ["format_settings_block"]


def _off(value: object, suffix: str = "") -> str:
    if value is None or value == "":
        return "off"
    if isinstance(value, bool):
        return "on" if value else "off"
    if value == 1 and suffix.endswith("s") and suffix.startswith(" "):  # "1 minute", not "1 minutes"
        suffix = suffix[:-1]
    return f"{value}{suffix}"


def _flag(value: bool) -> str:
    return "on" if value else "off"


def _dimming(settings: Settings) -> str:
    minutes = settings.dim_display_when_idle_minutes
    if minutes is None:
        return "off"
    return f"after {_off(minutes, ' minutes')}, to {settings.dim_display_brightness_percent} %"


def format_settings_block(settings: Settings, *, changed_only: bool = False) -> list[str]:
    """Every setting (``changed_only``: only those that differ from the defaults, as ``status`` shows
    them; ``status --verbose`` and ``settings`` show all)."""
    lines = _all_lines(settings)
    if not changed_only:
        return lines
    defaults = set(_all_lines(headless_defaults())[1:])
    changed = [line for line in lines[1:] if line not in defaults and not line.startswith("  Reason: ")]
    if not changed:
        return ["Settings: all defaults (`lidguard status --verbose` lists them)"]
    return ["Settings changed from the defaults (`lidguard status --verbose` lists all):", *changed]


def _all_lines(settings: Settings) -> list[str]:
    power = settings.power_request
    lines = ["Settings:", f"  Prevent system sleep: {_flag(power.prevent_system_sleep)}"]
    if away_mode_supported():
        lines.append(f"  Prevent away mode sleep: {_flag(power.prevent_away_mode_sleep)}")
    lines += [
        f"  Prevent display sleep: {_flag(power.prevent_display_sleep)}",
        f"  Change lid action: {_flag(settings.change_lid_action)}",
        f"  Power policy: {settings.power_policy.value} (battery floor {settings.battery_floor_percent} %)",
        f"  Dim display when idle: {_dimming(settings)}",
        f"  Watch parent process: {_flag(settings.watch_parent_process)}",
        f"  Session timeout: {_off(settings.session_timeout_minutes, ' minutes')}",
        f"  Session lease: {_off(settings.session_lease_hours, ' hours')}",
        f"  Server runtime cleanup delay: {_off(settings.server_runtime_cleanup_delay_minutes, ' minutes')}",
        f"  Emergency hibernation on high temperature: {_flag(settings.emergency_hibernation_on_high_temperature)}",
        f"  Emergency hibernation temperature mode: {settings.emergency_hibernation_temperature_mode.value}",
        f"  Emergency hibernation temperature Celsius: {settings.emergency_hibernation_temperature_celsius}",
        f"  Suspend mode: {settings.suspend_mode.value}",
        f"  Post-stop suspend delay seconds: {settings.post_stop_suspend_delay_seconds}",
        f"  Post-stop suspend sound: {_off(settings.post_stop_suspend_sound)}",
        "  Post-stop suspend sound volume override percent: "
        f"{_off(settings.post_stop_suspend_sound_volume_override_percent, '%')}",
        f"  Suspend ignores other blockers: {_flag(settings.suspend_ignores_other_blockers)}",
        f"  Suspend history count: {_off(settings.suspend_history_entry_count, ' entries')}",
        f"  Pre-suspend webhook URL: {_off(settings.pre_suspend_webhook_url)}",
        f"  Post-session-end webhook URL: {_off(settings.post_session_end_webhook_url)}",
        f"  Webhook previews: {_flag(settings.webhook_previews)}",
        f"  Log full text: {_flag(settings.log_full_text)}",
        f"  Closed lid permission request decision: {settings.closed_lid_permission_request_decision.value}",
        f"  Closed lid stop follow-up webhook URL: {_off(settings.closed_lid_stop_follow_up_webhook_url)}",
        f"  Closed lid stop follow-up delay seconds: {settings.closed_lid_stop_follow_up_delay_seconds}",
        f"  Repeat closed lid stop follow-up: {_flag(settings.repeat_closed_lid_stop_follow_up)}",
        f"  Closed lid stop follow-up sound: {_off(settings.closed_lid_stop_follow_up_sound)}",
        "  Closed lid stop follow-up sound volume override percent: "
        f"{_off(settings.closed_lid_stop_follow_up_sound_volume_override_percent, '%')}",
        f"  Reason: {power.reason}",
    ]
    return lines
