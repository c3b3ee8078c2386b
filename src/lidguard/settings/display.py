"""The human settings block (same lines and order as the original tool)."""

from __future__ import annotations

from ..l10n import N_, _
from ..platform.host import away_mode_supported
from .model import Settings, headless_defaults

__all__ = ["format_settings_block"]


# A number with its unit: (one, several); "1 minute", not "1 minutes".
_UNITS = {"minutes": (N_("1 minute"), N_("{value} minutes")), "hours": (N_("1 hour"), N_("{value} hours")),
          "entries": (N_("1 entry"), N_("{value} entries")), "percent": (N_("{value}%"), N_("{value}%"))}


def _off(value: object, unit: str = "") -> str:
    if value is None or value == "":
        return _("off")
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if unit:
        one, several = _UNITS[unit]
        return _(one if value == 1 else several).format(value=value)
    return f"{value}"


def _flag(value: bool) -> str:
    return _("on") if value else _("off")


def _dimming(settings: Settings) -> str:
    minutes = settings.dim_display_when_idle_minutes
    if minutes is None:
        return _("off")
    return _("after {minutes}, to {percent} %").format(minutes=_off(minutes, "minutes"),
                                                        percent=settings.dim_display_brightness_percent)


def format_settings_block(settings: Settings, *, changed_only: bool = False) -> list[str]:
    """Every setting (``changed_only``: only those that differ from the defaults, as ``status`` shows
    them; ``status --verbose`` and ``settings`` show all)."""
    lines = _all_lines(settings)
    if not changed_only:
        return lines
    defaults = set(_all_lines(headless_defaults())[1:])
    changed = [line for line in lines[1:] if line not in defaults and 
               not line.startswith(_("  Reason: {value}").split("{")[0])]
    if not changed:
        return [_("Settings: all defaults (`lidguard status --verbose` lists them)")]
    return [_("Settings changed from the defaults (`lidguard status --verbose` lists all):"), *changed]


def _all_lines(settings: Settings) -> list[str]:
    s = settings
    power = s.power_request
    lines = [_("Settings:"), _("  Prevent system sleep: {value}").format(value=_flag(power.prevent_system_sleep))]
    if away_mode_supported():
        lines.append(_("  Prevent away mode sleep: {value}").format(value=_flag(power.prevent_away_mode_sleep)))
    lines += [
        _("  Prevent display sleep: {value}").format(value=_flag(power.prevent_display_sleep)),
        _("  Change lid action: {value}").format(value=_flag(s.change_lid_action)),
        _("  Power policy: {policy} (battery floor {percent} %)").format(
            policy=s.power_policy.value, percent=s.battery_floor_percent),
        _("  Dim display when idle: {value}").format(value=_dimming(settings)),
        _("  Watch parent process: {value}").format(value=_flag(s.watch_parent_process)),
        _("  Session timeout: {value}").format(value=_off(s.session_timeout_minutes, "minutes")),
        _("  Session lease: {value}").format(value=_off(s.session_lease_hours, "hours")),
        _("  Server runtime cleanup delay: {value}").format(
            value=_off(s.server_runtime_cleanup_delay_minutes, "minutes")),
        _("  Emergency hibernation on high temperature: {value}").format(
            value=_flag(s.emergency_hibernation_on_high_temperature)),
        _("  Emergency hibernation temperature mode: {value}").format(
            value=s.emergency_hibernation_temperature_mode.value),
        _("  Emergency hibernation temperature Celsius: {value}").format(
            value=s.emergency_hibernation_temperature_celsius),
        _("  Suspend mode: {value}").format(value=s.suspend_mode.value),
        _("  Post-stop suspend delay seconds: {value}").format(value=s.post_stop_suspend_delay_seconds),
        _("  Post-stop suspend sound: {value}").format(value=_off(s.post_stop_suspend_sound)),
        _("  Post-stop suspend sound volume override percent: {value}").format(
            value=_off(s.post_stop_suspend_sound_volume_override_percent, "percent")),
        _("  Suspend ignores other blockers: {value}").format(value=_flag(s.suspend_ignores_other_blockers)),
        _("  Suspend history count: {value}").format(value=_off(s.suspend_history_entry_count, "entries")),
        _("  Pre-suspend webhook URL: {value}").format(value=_off(s.pre_suspend_webhook_url)),
        _("  Post-session-end webhook URL: {value}").format(value=_off(s.post_session_end_webhook_url)),
        _("  Webhook previews: {value}").format(value=_flag(s.webhook_previews)),
        _("  Log full text: {value}").format(value=_flag(s.log_full_text)),
        _("  UI culture: {value}").format(value=s.ui_culture.value),
        _("  Closed lid permission request decision: {value}").format(
            value=s.closed_lid_permission_request_decision.value),
        _("  Closed lid stop follow-up webhook URL: {value}").format(
            value=_off(s.closed_lid_stop_follow_up_webhook_url)),
        _("  Closed lid stop follow-up delay seconds: {value}").format(value=s.closed_lid_stop_follow_up_delay_seconds),
        _("  Repeat closed lid stop follow-up: {value}").format(value=_flag(s.repeat_closed_lid_stop_follow_up)),
        _("  Closed lid stop follow-up sound: {value}").format(value=_off(s.closed_lid_stop_follow_up_sound)),
        _("  Closed lid stop follow-up sound volume override percent: {value}").format(
            value=_off(s.closed_lid_stop_follow_up_sound_volume_override_percent, "percent")),
        _("  Reason: {value}").format(value=power.reason),
    ]
    return lines
