"""The only importer of ``lidguard._native._logind``: sd-bus calls to systemd-logind, and nothing more.

Dumb on purpose (no policy, no retries, no logging): each method sends one
``org.freedesktop.login1.Manager`` (or ``Session``) call (see org.freedesktop.login1(5)) and returns plain values.
Failures become typed exceptions::

    Exception
    ├── LogindError(name, message)        a D-Bus error reply, or a local sd-bus failure
    │   └── LogindUnavailable             logind cannot be reached at all: binding inactive,
    │                                     no system bus, or nobody owns org.freedesktop.login1
    └── RuntimeError
        └── RealSystemBusRefused          a test tried to reach the machine's real system bus

The library is ``libsystemd.so.0``, else ``libelogind.so.0`` (same sd-bus API). The binding is
inactive when ``LIDGUARD_NO_EXTENSIONS=1``, ``LIDGUARD_LOGIND_BINDING=off``, the generated module is
missing or stale, or neither library loads; callers then use the ``systemd-inhibit``/``systemctl``
fallbacks. :func:`binding_status` says which, for ``lidguard doctor``.
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar

from ..._native import extensions_disabled, extensions_required

__all__ = [
    "EXPECTED_ABI_VERSION",
    "LIBRARY_NAMES",
    "LOGIND_DESTINATION",
    "LOGIND_MANAGER_INTERFACE",
    "LOGIND_PATH",
    "LOGIND_SESSION_INTERFACE",
    "InhibitorEntry",
    "LogindConnection",
    "LogindError",
    "LogindUnavailable",
    "NO_LOGIND",
    "RealSystemBusRefused",
    "binding_status",
    "refuse_real_system_bus_under_pytest",
    "running_under_tests",
]

LOGIND_DESTINATION = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER_INTERFACE = "org.freedesktop.login1.Manager"
LOGIND_SESSION_INTERFACE = "org.freedesktop.login1.Session"
LIBRARY_NAMES = ("libsystemd.so.0", "libelogind.so.0")
# Must equal LIDGUARD_LOGIND_ABI_VERSION in native/logind_cdef.h.
EXPECTED_ABI_VERSION = 1
DEFAULT_CALL_TIMEOUT_USEC = 10_000_000
# Errors meaning "logind cannot be reached" rather than "logind said no": nobody owns the name, or
# the connection itself failed (sd-bus may connect lazily, so this can surface at the first call).
_UNREACHABLE_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "System.Error.ENOENT",
        "System.Error.ECONNREFUSED",
        "System.Error.ECONNRESET",
        "System.Error.ENOTCONN",
    }
)

# (what, who, why, mode, uid, pid) as ListInhibitors returns them, signature a(ssssuu).
InhibitorEntry = tuple[str, str, str, str, int, int]
_Result = TypeVar("_Result")


# What a user reads when there is no logind to talk to (no system bus socket, or nobody owns the name),
# instead of sd-bus's "System.Error.ENOENT: cannot connect to the system bus: ..." (issue 33.14).
NO_LOGIND = "no systemd-logind here (a container, or an init without logind?)"
_ABSENT_ERRORS = frozenset({"System.Error.ENOENT", "System.Error.ECONNREFUSED",
                            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"})
_ABSENT_TEXTS = ("Failed to connect to bus: No such file or directory", "Failed to connect to bus: Connection refused",
                 "was not provided by any .service files", "The name org.freedesktop.login1 was not provided")


def unreachable_text(error: BaseException) -> str:
    """``NO_LOGIND`` when ``error`` says there is no logind at all (the binding's error names, busctl's
    words), else the error as it is."""
    text = str(error) or type(error).__name__
    if getattr(error, "name", None) in _ABSENT_ERRORS or any(part in text for part in _ABSENT_TEXTS):
        return NO_LOGIND
    return text


class LogindError(Exception):
    """A D-Bus error (``name`` like ``org.freedesktop.DBus.Error.AccessDenied``) or an sd-bus failure
    (``name`` like ``System.Error.ECONNREFUSED``, the spelling sd_bus_error_set_errno(3) uses)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


class LogindUnavailable(LogindError):
    """logind cannot be reached: the binding is inactive, the system bus is missing, or no logind."""


class RealSystemBusRefused(RuntimeError):
    """Raised under pytest when code would reach the machine's real system bus or power state."""


def running_under_tests() -> bool:
    """True inside pytest and in every process a test starts (the suite exports LIDGUARD_TEST_MODE=1)."""
    from ... import switches

    return bool(os.environ.get("PYTEST_CURRENT_TEST")) or switches.in_test_mode()


def refuse_real_system_bus_under_pytest(action: str) -> None:
    """Tests can never change live power policy: under test the private bus must be configured."""
    if running_under_tests() and not os.environ.get("DBUS_SYSTEM_BUS_ADDRESS"):
        raise RealSystemBusRefused(
            f"refusing to {action} on the real system bus under pytest; "
            "set DBUS_SYSTEM_BUS_ADDRESS to a private bus (tests/linux/conftest.py: system_bus)"
        )


@dataclass(frozen=True, slots=True)
class _LoadedBinding:
    ffi: Any
    lib: Any
    library_name: str


@functools.cache
def _load_binding() -> tuple[_LoadedBinding | None, str]:
    """Imports the generated module, checks its ABI constant, dlopens the library (once per process)."""
    try:
        module = importlib.import_module("lidguard._native._logind")
    except ImportError as error:
        return None, f"cffi module lidguard._native._logind not built ({error})"
    ffi = module.ffi
    try:
        found_abi = ffi.integer_const("LIDGUARD_LOGIND_ABI_VERSION")
    except (AttributeError, ffi.error):
        found_abi = None
    if found_abi != EXPECTED_ABI_VERSION:
        return None, f"stale cffi module (ABI {found_abi}, expected {EXPECTED_ABI_VERSION}); rebuild lidguard"
    failures = []
    for library_name in LIBRARY_NAMES:
        try:
            lib = ffi.dlopen(library_name)
        except OSError as error:
            failures.append(f"{library_name}: {error}")
            continue
        return _LoadedBinding(ffi, lib, library_name), f"{library_name} via cffi"
    return None, "no sd-bus library could be loaded (" + "; ".join(failures) + ")"


def _module_failure_is_fatal(reason: str) -> bool:
    # LIDGUARD_REQUIRE_EXTENSIONS=1 (release wheels) makes a missing/stale *module* an error, like
    # lidguard._native.load_native_module; a missing *library* is a property of the machine.
    return extensions_required() and ("not built" in reason or "stale" in reason)


def binding_status() -> tuple[bool, str]:
    """(active, reason) - e.g. ``(True, "libsystemd.so.0 via cffi")`` - for ``lidguard doctor``."""
    if extensions_disabled():
        return False, "disabled by LIDGUARD_NO_EXTENSIONS=1"
    from ... import switches

    if not switches.logind_binding_enabled():
        return False, "disabled by LIDGUARD_LOGIND_BINDING=off"
    loaded, reason = _load_binding()
    if loaded is None and _module_failure_is_fatal(reason):
        raise ImportError(f"lidguard native module _logind is required but {reason}")
    return loaded is not None, reason


def _active_binding() -> _LoadedBinding:
    active, reason = binding_status()
    loaded, _ = _load_binding()
    if not active or loaded is None:
        raise LogindUnavailable("lidguard.Error.BindingInactive", f"the logind binding is inactive: {reason}")
    return loaded


def _errno_name(return_code: int) -> str:
    return "System.Error." + errno.errorcode.get(-return_code, str(-return_code))


class LogindConnection:
    """One system-bus connection (sd_bus_open_system(3) honours ``DBUS_SYSTEM_BUS_ADDRESS``).

    Calls are serialised by a lock (an sd_bus object is not thread-safe) and the connection must stay
    in the process that opened it (sd-bus answers ECHILD after fork). Use as a context manager.
    """

    def __init__(self) -> None:
        refuse_real_system_bus_under_pytest("talk to systemd-logind")
        binding = _active_binding()
        self._ffi = binding.ffi
        self._lib = binding.lib
        self.library_name = binding.library_name
        self._lock = threading.Lock()
        bus_pointer = self._ffi.new("sd_bus **")
        return_code = self._lib.sd_bus_open_system(bus_pointer)
        if return_code < 0:
            raise LogindUnavailable(
                _errno_name(return_code), f"cannot connect to the system bus: {os.strerror(-return_code)}"
            )
        self._bus: Any = bus_pointer[0]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Flushes and closes the connection; idempotent. Inhibitor fds already returned stay valid."""
        with self._lock:
            if self._bus is not None:
                self._lib.sd_bus_flush_close_unref(self._bus)
                self._bus = None

    # -- org.freedesktop.login1.Manager methods, see org.freedesktop.login1(5) ----------------------

    def inhibit(self, what: str, who: str, why: str, mode: str) -> int:
        """Inhibit(ssss) -> h. Returns a close-on-exec duplicate of the fd that the caller owns."""
        return self._call_manager("Inhibit", [b"s", b"s", b"s", b"s"], [what, who, why, mode], self._read_fd)

    def can_suspend(self) -> str:
        return self._call_manager("CanSuspend", [], [], self._read_string)

    def can_hibernate(self) -> str:
        return self._call_manager("CanHibernate", [], [], self._read_string)

    def suspend(self, *, interactive: bool = False) -> None:
        self._call_manager("Suspend", [b"b"], [interactive], self._read_nothing)

    def hibernate(self, *, interactive: bool = False) -> None:
        self._call_manager("Hibernate", [b"b"], [interactive], self._read_nothing)

    def list_inhibitors(self) -> list[InhibitorEntry]:
        """ListInhibitors() -> a(ssssuu): (what, who, why, mode, uid, pid) per inhibitor."""
        return self._call_manager("ListInhibitors", [], [], self._read_inhibitor_array)

    def read_string_property(self, name: str) -> str:
        """A string Manager property such as ``BlockInhibited`` (org.freedesktop.DBus.Properties.Get)."""
        return self._call(LOGIND_PATH, "org.freedesktop.DBus.Properties", "Get", [b"s", b"s"],
                          [LOGIND_MANAGER_INTERFACE, name], self._read_variant_string)

    def read_bool_property(self, name: str) -> bool:
        """A boolean Manager property such as ``LidClosed`` or ``Docked`` (sd_bus_get_property_trivial(3))."""
        return bool(self.read_property(LOGIND_PATH, LOGIND_MANAGER_INTERFACE, name, "b"))

    def read_property(self, path: str, interface: str, name: str, type_char: str) -> int:
        """One ``b`` (as 0/1) or ``t`` (uint64) property of any logind object (sd_bus_get_property_trivial(3))."""
        c_type = {"b": "int *", "t": "uint64_t *"}[type_char]
        error = self._ffi.new("sd_bus_error *")
        value = self._ffi.new(c_type)
        with self._lock:
            bus = self._require_open()
            try:
                return_code = self._lib.sd_bus_get_property_trivial(
                    bus,
                    LOGIND_DESTINATION.encode(),
                    path.encode(),
                    interface.encode(),
                    name.encode(),
                    error,
                    type_char.encode(),
                    value,
                )
                if return_code < 0:
                    raise self._error_from_reply(error, return_code, f"Get {name}")
                return int(value[0])
            finally:
                self._lib.sd_bus_error_free(error)

    # -- org.freedesktop.login1.Session, see org.freedesktop.login1(5) ------------------------------

    def get_session(self, session_id: str) -> str:
        """Manager.GetSession(s) -> o: ``auto`` is the caller's session, else the user's display session."""
        return self._call(LOGIND_PATH, LOGIND_MANAGER_INTERFACE, "GetSession", [b"s"], [session_id],
                          self._read_object_path)

    def set_brightness(self, session_path: str, subsystem: str, name: str, brightness: int) -> None:
        """Session.SetBrightness(ssu): logind writes the device's sysfs ``brightness`` for the session's
        owner (no root; the session must belong to the caller's user)."""
        self._call(session_path, LOGIND_SESSION_INTERFACE, "SetBrightness", [b"s", b"s", b"u"],
                   [subsystem, name, brightness], self._read_nothing)

    # -- message plumbing ---------------------------------------------------------------------------

    def _require_open(self) -> Any:
        if self._bus is None:
            raise LogindError("lidguard.Error.Closed", "the logind connection is closed")
        return self._bus

    def _check(self, return_code: int, what: str) -> int:
        if return_code < 0:
            raise LogindError(_errno_name(return_code), f"{what} failed: {os.strerror(-return_code)}")
        return return_code

    def _error_from_reply(self, error: Any, return_code: int, member: str) -> LogindError:
        """sd_bus_call(3) fills ``error`` for remote errors and for most local ones."""
        ffi = self._ffi
        name = ffi.string(error.name).decode("utf-8", "replace") if error.name != ffi.NULL else ""
        message = ffi.string(error.message).decode("utf-8", "replace") if error.message != ffi.NULL else ""
        name = name or _errno_name(return_code)
        message = message or f"{member} failed: {os.strerror(-return_code)}"
        error_type = LogindUnavailable if name in _UNREACHABLE_ERRORS else LogindError
        return error_type(name, message)

    def _call_manager(
        self,
        member: str,
        types: list[bytes],
        values: list[Any],
        read_reply: Callable[[Any], _Result],
    ) -> _Result:
        return self._call(LOGIND_PATH, LOGIND_MANAGER_INTERFACE, member, types, values, read_reply)

    def _call(
        self,
        path: str,
        interface: str,
        member: str,
        types: list[bytes],
        values: list[Any],
        read_reply: Callable[[Any], _Result],
    ) -> _Result:
        ffi, lib = self._ffi, self._lib
        message_pointer = ffi.new("sd_bus_message **")
        reply_pointer = ffi.new("sd_bus_message **")
        error = ffi.new("sd_bus_error *")
        with self._lock:
            bus = self._require_open()
            self._check(
                lib.sd_bus_message_new_method_call(
                    bus,
                    message_pointer,
                    LOGIND_DESTINATION.encode(),
                    path.encode(),
                    interface.encode(),
                    member.encode(),
                ),
                "sd_bus_message_new_method_call",
            )
            message = message_pointer[0]
            try:
                for type_char, value in zip(types, values, strict=True):
                    self._append(message, type_char, value)
                return_code = lib.sd_bus_call(bus, message, DEFAULT_CALL_TIMEOUT_USEC, error, reply_pointer)
                if return_code < 0:
                    raise self._error_from_reply(error, return_code, member)
                reply = reply_pointer[0]
                try:
                    return read_reply(reply)
                finally:
                    lib.sd_bus_message_unref(reply)
            finally:
                lib.sd_bus_error_free(error)
                lib.sd_bus_message_unref(message)

    def _append(self, message: Any, type_char: bytes, value: Any) -> None:
        """sd_bus_message_append_basic(3): for 's' the pointer is the string, otherwise a pointer to it."""
        if type_char == b"s":
            pointer = self._ffi.new("char[]", str(value).encode("utf-8"))
        elif type_char == b"b":
            pointer = self._ffi.new("int *", 1 if value else 0)
        elif type_char == b"u":
            if type(value) is not int or not 0 <= value <= 0xFFFFFFFF:
                raise ValueError(f"not a D-Bus uint32: {value!r}")
            pointer = self._ffi.new("uint32_t *", value)
        else:
            raise ValueError(f"unsupported D-Bus argument type {type_char!r}")
        self._check(self._lib.sd_bus_message_append_basic(message, type_char, pointer), "append argument")

    def _read_nothing(self, reply: Any) -> None:
        return None

    def _read_string(self, reply: Any) -> str:
        pointer = self._ffi.new("const char **")
        self._check(self._lib.sd_bus_message_read_basic(reply, b"s", pointer), "read string")
        return self._ffi.string(pointer[0]).decode("utf-8", "replace")

    def _read_variant_string(self, reply: Any) -> str:
        self._check(self._lib.sd_bus_message_enter_container(reply, b"v", b"s"), "enter variant")
        value = self._read_string(reply)
        self._check(self._lib.sd_bus_message_exit_container(reply), "exit variant")
        return value

    def _read_object_path(self, reply: Any) -> str:
        pointer = self._ffi.new("const char **")
        self._check(self._lib.sd_bus_message_read_basic(reply, b"o", pointer), "read object path")
        return self._ffi.string(pointer[0]).decode("utf-8", "replace")

    def _read_uint32(self, reply: Any) -> int:
        pointer = self._ffi.new("uint32_t *")
        self._check(self._lib.sd_bus_message_read_basic(reply, b"u", pointer), "read uint32")
        return int(pointer[0])

    def _read_fd(self, reply: Any) -> int:
        """sd_bus_message_read_basic(3): the fd belongs to the message and closes with it, so it is
        duplicated with F_DUPFD_CLOEXEC first - close-on-exec from the start, so a child spawned
        later cannot inherit it and keep the inhibitor alive (fcntl(2))."""
        import fcntl  # Unix-only: imported here so every module of the package imports on every OS

        pointer = self._ffi.new("int *")
        self._check(self._lib.sd_bus_message_read_basic(reply, b"h", pointer), "read unix fd")
        return fcntl.fcntl(pointer[0], fcntl.F_DUPFD_CLOEXEC, 3)

    def _read_inhibitor_array(self, reply: Any) -> list[InhibitorEntry]:
        lib = self._lib
        entries: list[InhibitorEntry] = []
        self._check(lib.sd_bus_message_enter_container(reply, b"a", b"(ssssuu)"), "enter array")
        # sd_bus_message_enter_container(3) returns 0 once the array is exhausted.
        while self._check(lib.sd_bus_message_enter_container(reply, b"r", b"ssssuu"), "enter struct") > 0:
            what, who, why, mode = (self._read_string(reply) for _ in range(4))
            uid, pid = self._read_uint32(reply), self._read_uint32(reply)
            self._check(lib.sd_bus_message_exit_container(reply), "exit struct")
            entries.append((what, who, why, mode, uid, pid))
        self._check(lib.sd_bus_message_exit_container(reply), "exit array")
        return entries
