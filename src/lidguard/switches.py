"""Every ``LIDGUARD_*`` environment switch, read in one place (stdlib only: hook path and build).

On/off switches accept ``1``, ``true``, ``yes``, ``on`` (on) and ``0``, ``false``, ``no``, ``off`` or
an empty/unset value (off), in any case and with surrounding spaces; anything else raises
``SwitchError`` (a ``ValueError`` with a one-line message) instead of being guessed.

``setup.py`` loads this very file by path (``importlib.util.spec_from_file_location``) before the
package is built, so the build and the runtime modules (:mod:`lidguard._native`) can never disagree
about ``LIDGUARD_NO_EXTENSIONS=false``. Therefore this module imports nothing but ``os`` and uses no
relative imports.

| switch | meaning |
|---|---|
| ``LIDGUARD_NO_EXTENSIONS`` | build no compiled module / use the pure-Python twins at run time |
| ``LIDGUARD_REQUIRE_EXTENSIONS`` | a failed native build, or a missing or stale compiled module, is an error |
| ``LIDGUARD_PLATFORM`` | backend: ``auto``, ``fake``, ``linux``, ``macos``, ``windows`` (checked by ``platform``) |
| ``LIDGUARD_TEST_MODE`` | set by the test suite for every process it starts: never touch the live machine |
| ``LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS`` | in test mode, allow a fake ``systemctl`` first on PATH |
| ``LIDGUARD_LOGIND_BINDING`` | ``off`` keeps the cffi logind binding out (helper processes instead) |
| ``LIDGUARD_FAKE_STATE``, ``LIDGUARD_FAKE_ACTIONS`` | files that drive / record the fake platform (actions: \
a regular file only, never through a symlink) |
| ``LIDGUARD_SYSFS_ROOT`` | in test mode only: root of the /sys and /proc trees the Linux readers use |
| ``LIDGUARD_POLKIT_RULE_PATH`` | in test mode only: where ``linux-permission`` writes its polkit rule |

The fake platform protects nothing, so it is never silent: ``fake_platform_reason`` names the switch that
chose it and status, doctor and every hook log line say so.
| ``LIDGUARD_WATCHDOG`` | ``off`` keeps the runtime from launching its watchdog process (unset means on) |
| ``LIDGUARD_HEARTBEAT_SECONDS`` | in test mode only: the heartbeat period (default 30 s) |
| ``LIDGUARD_FAILED_START_EXIT_SECONDS`` | in test mode only: how soon a runtime whose every start failed exits (30 s) |
| ``LIDGUARD_WATCHDOG_STALE_SECONDS`` | in test mode only: the heartbeat age at which the watchdog acts (120 s) |
| ``LIDGUARD_NOTIFY_HEADER_TIMEOUT_SECONDS`` | in test mode only: lidguard-notify's time for request headers (10 s) |
| ``LIDGUARD_NOTIFY_BODY_TIMEOUT_SECONDS`` | in test mode only: lidguard-notify's time for a request body (30 s) |
| ``LIDGUARD_TRAY_BACKEND`` | ``lidguard tray``'s indicator: ``sni``, ``xembed`` or ``pystray`` (unset: chosen) |
| ``LIDGUARD_HOOK_CLIENT`` | ``off``: hook-install writes the Python hook even where the native hook client runs |
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = [
    "FALSE_WORDS",
    "RequiredExtensionError",
    "TRUE_WORDS",
    "SwitchError",
    "allow_systemctl_in_tests",
    "fake_actions_file",
    "failed_start_exit_seconds",
    "fake_platform_line",
    "fake_platform_reason",
    "heartbeat_seconds",
    "watchdog_enabled",
    "watchdog_stale_seconds",
    "fake_state_file",
    "is_on",
    "logind_binding_enabled",
    "no_extensions",
    "notify_body_timeout_seconds",
    "notify_header_timeout_seconds",
    "parse_switch",
    "platform_name",
    "polkit_rule_path",
    "raw_value",
    "require_extensions",
    "sysfs_root",
    "in_test_mode",
    "tray_backend",
]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


class SwitchError(ValueError):
    """A ``LIDGUARD_*`` variable holds a value that is neither on nor off."""


class RequiredExtensionError(ImportError):
    """``LIDGUARD_REQUIRE_EXTENSIONS`` is on and a compiled module is missing or stale (one-line message).

    Raised by :func:`lidguard._native.load_native_module`; defined here so the CLI can catch it
    without importing ``_native`` (OS code placement rule).
    """

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            f"LIDGUARD_REQUIRE_EXTENSIONS is on but the compiled module lidguard._native.{name} cannot be used: "
            f"{reason}. Rebuild it (python3 setup.py build_ext --inplace, or reinstall lidguard) or unset "
            "LIDGUARD_REQUIRE_EXTENSIONS.",
            name=f"lidguard._native.{name}",
        )
        self.module = name
        self.reason = reason


def parse_switch(name: str, value: str | None) -> bool:
    """``value`` of the variable ``name`` as on (True) or off (False); unset is off."""
    if value is None:
        return False
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise SwitchError(f"{name} must be 1, true, yes or on (on) or 0, false, no, off or empty (off); got {value!r}.")


def raw_value(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The variable's value with surrounding spaces removed ("" when unset)."""
    return (os.environ if environ is None else environ).get(name, "").strip()


def is_on(name: str, environ: Mapping[str, str] | None = None) -> bool:
    return parse_switch(name, (os.environ if environ is None else environ).get(name))


def no_extensions(environ: Mapping[str, str] | None = None) -> bool:
    return is_on("LIDGUARD_NO_EXTENSIONS", environ)


def require_extensions(environ: Mapping[str, str] | None = None) -> bool:
    return is_on("LIDGUARD_REQUIRE_EXTENSIONS", environ)


def in_test_mode(environ: Mapping[str, str] | None = None) -> bool:
    """A safety switch: any value that is not clearly off counts as on (never an error)."""
    try:
        return is_on("LIDGUARD_TEST_MODE", environ)
    except SwitchError:
        return True


def allow_systemctl_in_tests(environ: Mapping[str, str] | None = None) -> bool:
    return is_on("LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS", environ)


def logind_binding_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``LIDGUARD_LOGIND_BINDING``: on unless switched off (unset means on)."""
    value = raw_value("LIDGUARD_LOGIND_BINDING", environ)
    return True if not value else parse_switch("LIDGUARD_LOGIND_BINDING", value)


def platform_name(environ: Mapping[str, str] | None = None) -> str:
    """``LIDGUARD_PLATFORM`` lower-cased ("" when unset); ``lidguard.platform`` validates the name."""
    return raw_value("LIDGUARD_PLATFORM", environ).lower()


def demo_mode(environ: Mapping[str, str] | None = None) -> bool:
    """The README's demo: the fake platform outside the tests (its own ``LidGuard-demo`` data folder; it never
    touches what real use reads, agent configs included)."""
    return platform_name(environ).strip() == "fake" and not in_test_mode(environ)


def _path_or_none(name: str, environ: Mapping[str, str] | None) -> str | None:
    return raw_value(name, environ) or None


def fake_state_file(environ: Mapping[str, str] | None = None) -> str | None:
    return _path_or_none("LIDGUARD_FAKE_STATE", environ)


def fake_actions_file(environ: Mapping[str, str] | None = None) -> str | None:
    return _path_or_none("LIDGUARD_FAKE_ACTIONS", environ)


def sysfs_root(environ: Mapping[str, str] | None = None) -> str | None:
    """Test mode only: outside it the Linux readers always read the real /sys and /proc."""
    return _path_or_none("LIDGUARD_SYSFS_ROOT", environ) if in_test_mode(environ) else None


def polkit_rule_path(environ: Mapping[str, str] | None = None) -> str | None:
    """Test mode only: outside it the polkit rule always goes to polkit's own rules.d."""
    return _path_or_none("LIDGUARD_POLKIT_RULE_PATH", environ) if in_test_mode(environ) else None


def fake_platform_reason(environ: Mapping[str, str] | None = None) -> str | None:
    """The switch that selects the fake platform (``LIDGUARD_PLATFORM=fake``, or test mode with no
    platform named), None when these switches do not select it."""
    name = platform_name(environ)
    if name == "fake":
        return "LIDGUARD_PLATFORM=fake"
    if not name and in_test_mode(environ):
        return "LIDGUARD_TEST_MODE=1"
    return None


def fake_platform_line(reason: str | None) -> str:
    """The one line status and doctor print while the fake platform is in use."""
    return f"platform: fake ({reason or 'chosen by the caller'}) - protects nothing"


HEARTBEAT_SECONDS = 30.0
FAILED_START_EXIT_SECONDS = 30.0  # a runtime none of whose starts succeeded exits this soon (issue 33.6)
WATCHDOG_STALE_SECONDS = 120.0
NOTIFY_HEADER_TIMEOUT_SECONDS = 10.0
NOTIFY_BODY_TIMEOUT_SECONDS = 30.0


def watchdog_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``LIDGUARD_WATCHDOG``: on unless switched off (unset means on)."""
    value = raw_value("LIDGUARD_WATCHDOG", environ)
    return True if not value else parse_switch("LIDGUARD_WATCHDOG", value)


def _test_seconds(name: str, default: float, environ: Mapping[str, str] | None) -> float:
    """A period shortened for tests: honoured only in test mode, a finite number in [0.05, default]."""
    value = raw_value(name, environ)
    if not value or not in_test_mode(environ):
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise SwitchError(f"{name} must be a number of seconds; got {value!r}.") from None
    if not 0.05 <= seconds <= default:  # NaN fails both comparisons
        raise SwitchError(f"{name} must be between 0.05 and {default:g} seconds; got {value!r}.")
    return seconds


def heartbeat_seconds(environ: Mapping[str, str] | None = None) -> float:
    return _test_seconds("LIDGUARD_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS, environ)


def watchdog_stale_seconds(environ: Mapping[str, str] | None = None) -> float:
    return _test_seconds("LIDGUARD_WATCHDOG_STALE_SECONDS", WATCHDOG_STALE_SECONDS, environ)


def failed_start_exit_seconds(environ: Mapping[str, str] | None = None) -> float:
    return _test_seconds("LIDGUARD_FAILED_START_EXIT_SECONDS", FAILED_START_EXIT_SECONDS, environ)


def notify_header_timeout_seconds(environ: Mapping[str, str] | None = None) -> float:
    return _test_seconds("LIDGUARD_NOTIFY_HEADER_TIMEOUT_SECONDS", NOTIFY_HEADER_TIMEOUT_SECONDS, environ)


def notify_body_timeout_seconds(environ: Mapping[str, str] | None = None) -> float:
    return _test_seconds("LIDGUARD_NOTIFY_BODY_TIMEOUT_SECONDS", NOTIFY_BODY_TIMEOUT_SECONDS, environ)


def tray_backend(environ: Mapping[str, str] | None = None) -> str:
    """``LIDGUARD_TRAY_BACKEND`` lower-cased ("" when unset); ``SwitchError`` for an unknown one."""
    value = raw_value("LIDGUARD_TRAY_BACKEND", environ).strip().lower()
    if value not in ("", "sni", "xembed", "pystray"):
        raise SwitchError(f"LIDGUARD_TRAY_BACKEND must be sni, xembed or pystray, not {value!r}.")
    return value


def hook_client_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``LIDGUARD_HOOK_CLIENT`` (unset means on): may hook-install write the native hook client (issue 36)."""
    value = raw_value("LIDGUARD_HOOK_CLIENT", environ)
    return not value or parse_switch("LIDGUARD_HOOK_CLIENT", value)
