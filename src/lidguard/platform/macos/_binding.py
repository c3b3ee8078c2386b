"""The only importer of ``lidguard._native._macos``: CoreFoundation/IOKit (IOHID), libproc and notify(3).

Dumb on purpose (no policy, no logging): one method per whole job, returning plain values -
``read_hid_temperatures`` takes one batched snapshot of every IOHID temperature service, and
``read_process``/``read_ancestry`` read one process / the whole chain, ``register_notifications``
puts several notify(3) names on one file descriptor. The thermal, process and power-event modules
decide what to keep.

Loaded only on macOS (``sys.platform == "darwin"``), from the out-of-line ABI module generated from
``native/macos_cdef.h`` (``native/macos_build.py``). Inactive, with the reason, when
``LIDGUARD_NO_EXTENSIONS=1``, ``LIDGUARD_MACOS_BINDING=off``, off macOS, when the module is missing or
stale, or a framework fails to load; callers then use the ``powermetrics``/``ps`` paths. Tests build
:class:`MacBinding` over a real ``cffi.FFI`` parsed from the cdef and fake libraries.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any

from ..._native import extensions_disabled
from ..process_info import ProcessInfo

__all__ = [
    "COREFOUNDATION_PATH",
    "EXPECTED_ABI_VERSION",
    "IOKIT_PATH",
    "MacDisplayBinding",
    "active_display_binding",
    "SYSTEM_LIBRARY_PATH",
    "BindingInactive",
    "MacBinding",
    "active_binding",
    "binding_status",
]

EXPECTED_ABI_VERSION = 3  # LIDGUARD_MACOS_ABI_VERSION in native/macos_cdef.h
COREFOUNDATION_PATH = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
IOKIT_PATH = "/System/Library/Frameworks/IOKit.framework/IOKit"
SYSTEM_LIBRARY_PATH = "/usr/lib/libSystem.B.dylib"
COREGRAPHICS_PATH = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
DISPLAYSERVICES_PATH = "/System/Library/PrivateFrameworks/DisplayServices.framework/DisplayServices"
MAX_ONLINE_DISPLAYS = 32
CF_STRING_ENCODING_UTF8 = 0x08000100
CF_NUMBER_SINT32_TYPE = 3
# IOHIDFamily: vendor usage page 0xff00 usage 5 = temperature sensors; event type 15 = temperature.
HID_USAGE_PAGE_VENDOR = 0xFF00
HID_USAGE_TEMPERATURE_SENSOR = 5
HID_EVENT_TYPE_TEMPERATURE = 15
HID_TEMPERATURE_FIELD = HID_EVENT_TYPE_TEMPERATURE << 16
PROC_PIDTBSDINFO = 3
PROC_PIDTASKINFO = 4
MAX_DESCENDANTS = 4096  # a bound on the running-tool walk (a fork bomb is not the agent's tool)
PROC_PIDPATHINFO_MAXSIZE = 4096
SZOMB = 5  # sys/proc.h: pbi_status of a zombie
CTL_KERN, KERN_PROCARGS2 = 1, 49
NOTIFY_STATUS_OK = 0
NOTIFY_REUSE = 1
_OFF_VALUES = ("off", "0", "no", "false", "disabled")


class BindingInactive(RuntimeError):
    """The binding is not active here (the message says why)."""


class MacBinding:
    """The calls, over an ``ffi`` and the three opened libraries (fakes in tests)."""

    def __init__(self, ffi: Any, corefoundation: Any, iokit: Any, system: Any) -> None:
        self.ffi = ffi
        self.cf = corefoundation
        self.iokit = iokit
        self.system = system

    # -- IOHID temperatures -----------------------------------------------------------------------
    def cf_data(self, name: str) -> Any:
        """The address of an exported CoreFoundation data symbol (the dictionary callback tables)."""
        return self.ffi.addressof(self.cf, name)

    def _cf_string(self, text: str) -> Any:
        return self.cf.CFStringCreateWithCString(self.ffi.NULL, text.encode(), CF_STRING_ENCODING_UTF8)

    def _cf_number(self, value: int) -> Any:
        return self.cf.CFNumberCreate(self.ffi.NULL, CF_NUMBER_SINT32_TYPE, self.ffi.new("int32_t *", value))

    def _to_text(self, cf_string: Any) -> str:
        buffer = self.ffi.new("char[]", 256)
        if not self.cf.CFStringGetCString(cf_string, buffer, 256, CF_STRING_ENCODING_UTF8):
            return ""
        return bytes(self.ffi.string(buffer)).decode("utf-8", "replace")

    def _matching_dictionary(self) -> tuple[Any, list[Any]]:
        ffi, cf = self.ffi, self.cf
        owned = [self._cf_string("PrimaryUsagePage"), self._cf_string("PrimaryUsage"),
                 self._cf_number(HID_USAGE_PAGE_VENDOR), self._cf_number(HID_USAGE_TEMPERATURE_SENSOR)]
        keys = ffi.new("const void *[]", owned[:2])
        values = ffi.new("const void *[]", owned[2:])
        dictionary = cf.CFDictionaryCreate(ffi.NULL, keys, values, 2,
                                           self.cf_data("kCFTypeDictionaryKeyCallBacks"),
                                           self.cf_data("kCFTypeDictionaryValueCallBacks"))
        return dictionary, owned

    def read_hid_temperatures(self) -> list[tuple[str, float]]:
        """(product name, Celsius) of every IOHID temperature service, in one snapshot."""
        ffi, cf, iokit = self.ffi, self.cf, self.iokit
        client = iokit.IOHIDEventSystemClientCreate(ffi.NULL)
        if client == ffi.NULL:
            raise OSError("IOHIDEventSystemClientCreate returned NULL")
        dictionary, owned = self._matching_dictionary()
        product_key = self._cf_string("Product")
        readings: list[tuple[str, float]] = []
        services = ffi.NULL
        try:
            iokit.IOHIDEventSystemClientSetMatching(client, dictionary)
            services = iokit.IOHIDEventSystemClientCopyServices(client)
            count = cf.CFArrayGetCount(services) if services != ffi.NULL else 0
            for index in range(count):
                service = ffi.cast("IOHIDServiceClientRef", cf.CFArrayGetValueAtIndex(services, index))
                name_ref = iokit.IOHIDServiceClientCopyProperty(service, product_key)
                name = ""
                if name_ref != ffi.NULL:
                    name = self._to_text(ffi.cast("CFStringRef", name_ref))
                    cf.CFRelease(name_ref)
                event = iokit.IOHIDServiceClientCopyEvent(service, HID_EVENT_TYPE_TEMPERATURE, 0, 0)
                if event == ffi.NULL:
                    continue
                readings.append((name, float(iokit.IOHIDEventGetFloatValue(event, HID_TEMPERATURE_FIELD))))
                cf.CFRelease(event)
        finally:
            if services != ffi.NULL:
                cf.CFRelease(services)
            for reference in (product_key, dictionary, *owned, client):
                if reference != ffi.NULL:
                    cf.CFRelease(reference)
        return readings

    # -- libproc ancestry -------------------------------------------------------------------------
    def _bsd_info(self, pid: int) -> Any | None:
        info = self.ffi.new("struct proc_bsdinfo *")
        size = self.ffi.sizeof("struct proc_bsdinfo")
        written = self.system.proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, info, size)
        return info if written == size else None

    def _path(self, pid: int) -> str:
        buffer = self.ffi.new("char[]", PROC_PIDPATHINFO_MAXSIZE)
        length = self.system.proc_pidpath(pid, buffer, PROC_PIDPATHINFO_MAXSIZE)
        return os.fsdecode(bytes(self.ffi.buffer(buffer, length))) if length > 0 else ""

    def _arguments(self, pid: int) -> tuple[str, ...]:
        """argv from KERN_PROCARGS2: int argc, exec path, NUL padding, then argc NUL-ended strings."""
        ffi = self.ffi
        name = ffi.new("int[3]", [CTL_KERN, KERN_PROCARGS2, pid])
        size = ffi.new("size_t *", 0)
        if self.system.sysctl(name, 3, ffi.NULL, size, ffi.NULL, 0) != 0 or size[0] < 4:
            return ()
        buffer = ffi.new("char[]", size[0])
        if self.system.sysctl(name, 3, buffer, size, ffi.NULL, 0) != 0:
            return ()
        raw = bytes(ffi.buffer(buffer, size[0]))
        argc = int.from_bytes(raw[:4], sys.byteorder)
        rest = raw[4:]
        _, _, rest = rest.partition(b"\0")  # the exec path
        rest = rest.lstrip(b"\0")
        words = rest.split(b"\0")[:argc]
        return tuple(os.fsdecode(word) for word in words)

    def read_process(self, pid: int) -> ProcessInfo | None:
        info = self._bsd_info(pid)
        if info is None:
            return None
        name = bytes(self.ffi.string(info.pbi_name) or self.ffi.string(info.pbi_comm)).decode("utf-8", "replace")
        return ProcessInfo(pid, int(info.pbi_ppid), name, self._path(pid), self._arguments(pid))

    def read_ancestry(self, pid: int, max_depth: int) -> list[ProcessInfo]:
        chain: list[ProcessInfo] = []
        seen: set[int] = set()
        current = pid
        while current > 0 and current not in seen and len(chain) < max_depth:
            seen.add(current)
            process = self.read_process(current)
            if process is None:
                break
            chain.append(process)
            current = process.ppid
        return chain

    def is_zombie(self, pid: int) -> bool:
        info = self._bsd_info(pid)
        return info is not None and int(info.pbi_status) == SZOMB

    # -- libproc CPU time of a process's descendants (running tools) ------------------------------
    def _child_pids(self, pid: int) -> list[int]:
        capacity = 256
        while True:
            buffer = self.ffi.new("int[]", capacity)
            count = self.system.proc_listchildpids(pid, buffer, capacity * self.ffi.sizeof("int"))
            if count < 0:
                return []
            if count < capacity or capacity >= MAX_DESCENDANTS:
                return [int(buffer[index]) for index in range(min(count, capacity)) if int(buffer[index]) > 0]
            capacity *= 2  # full: there may be more

    def _nanoseconds_per_unit(self) -> float:
        info = self.ffi.new("mach_timebase_info_data_t *")
        if self.system.mach_timebase_info(info) != 0 or info.numer == 0 or info.denom == 0:
            return 1.0  # Intel Macs: the units are nanoseconds
        return int(info.numer) / int(info.denom)

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        """User + system CPU seconds of every descendant of ``pid`` (not ``pid`` itself), through
        ``proc_listchildpids`` and ``proc_pidinfo(PROC_PIDTASKINFO)``; None when ``pid`` is gone. A
        process that exits during the walk adds nothing."""
        if self._bsd_info(pid) is None:
            return None
        task = self.ffi.new("struct proc_taskinfo *")
        size = self.ffi.sizeof("struct proc_taskinfo")
        units = 0
        seen = {pid}
        pending = self._child_pids(pid)
        while pending and len(seen) <= MAX_DESCENDANTS:
            child = pending.pop()
            if child in seen:
                continue
            seen.add(child)
            if self.system.proc_pidinfo(child, PROC_PIDTASKINFO, 0, task, size) == size:
                units += int(task.pti_total_user) + int(task.pti_total_system)
            pending.extend(self._child_pids(child))
        return units * self._nanoseconds_per_unit() / 1e9

    # -- notify(3): Darwin notifications delivered as tokens written to one file descriptor ---------
    def register_notifications(self, names: tuple[str, ...]) -> tuple[int, list[int]]:
        """(descriptor, tokens): every name registered on one descriptor (the first creates it,
        NOTIFY_REUSE adds the others). ``OSError`` when a registration fails; the ones made are cancelled."""
        ffi, system = self.ffi, self.system
        descriptor = ffi.new("int *", -1)
        token = ffi.new("int *", -1)
        tokens: list[int] = []
        try:
            for name in names:
                status = system.notify_register_file_descriptor(name.encode(), descriptor,
                                                                NOTIFY_REUSE if tokens else 0, token)
                if status != NOTIFY_STATUS_OK:
                    raise OSError(f"notify_register_file_descriptor({name}) failed with notify status {status}")
                tokens.append(int(token[0]))
        except BaseException:
            self.cancel_notifications(tokens)
            raise
        return int(descriptor[0]), tokens

    def cancel_notifications(self, tokens: list[int]) -> None:
        """``notify_cancel`` each token (the last one closes the descriptor); never raises."""
        for value in tokens:
            self.system.notify_cancel(value)


class MacDisplayBinding:
    """The built-in panel's brightness (CoreGraphics + the private DisplayServices; fakes in tests).
    Loaded apart from :class:`MacBinding`: a missing private framework only turns dimming off."""

    def __init__(self, ffi: Any, coregraphics: Any, displayservices: Any) -> None:
        self.ffi = ffi
        self.cg = coregraphics
        self.ds = displayservices

    def builtin_display(self) -> int | None:
        """The online built-in display's id (None: lid closed in clamshell mode, or a desktop Mac)."""
        displays = self.ffi.new("CGDirectDisplayID[]", MAX_ONLINE_DISPLAYS)
        count = self.ffi.new("uint32_t *")
        error = self.cg.CGGetOnlineDisplayList(MAX_ONLINE_DISPLAYS, displays, count)
        if error != 0:
            raise OSError(f"CGGetOnlineDisplayList failed with CGError {error}")
        for index in range(min(int(count[0]), MAX_ONLINE_DISPLAYS)):
            if self.cg.CGDisplayIsBuiltin(displays[index]):
                return int(displays[index])
        return None

    def get_brightness(self, display: int) -> float:
        value = self.ffi.new("float *")
        error = self.ds.DisplayServicesGetBrightness(display, value)
        if error != 0:
            raise OSError(f"DisplayServicesGetBrightness failed with {error}")
        return float(value[0])

    def set_brightness(self, display: int, value: float) -> None:
        error = self.ds.DisplayServicesSetBrightness(display, value)
        if error != 0:
            raise OSError(f"DisplayServicesSetBrightness failed with {error}")


@functools.cache
def _load_display() -> tuple[MacDisplayBinding | None, str]:
    binding, reason = _load()
    if binding is None:
        return None, reason
    try:
        libraries = [binding.ffi.dlopen(path) for path in (COREGRAPHICS_PATH, DISPLAYSERVICES_PATH)]
    except OSError as error:
        return None, f"CoreGraphics/DisplayServices could not be loaded ({error})"
    return MacDisplayBinding(binding.ffi, *libraries), "CoreGraphics and DisplayServices via cffi"


def active_display_binding() -> MacDisplayBinding:
    active, reason = binding_status()
    if not active:
        raise BindingInactive(reason)
    binding, reason = _load_display()
    if binding is None:
        raise BindingInactive(reason)
    return binding


@functools.cache
def _load() -> tuple[MacBinding | None, str]:
    if sys.platform != "darwin":
        return None, f"the CoreFoundation/IOKit/libproc binding loads only on macOS (this host is {sys.platform})"
    try:
        module = importlib.import_module("lidguard._native._macos")
    except ImportError as error:
        return None, f"cffi module lidguard._native._macos not built ({error})"
    ffi = module.ffi
    try:
        found = ffi.integer_const("LIDGUARD_MACOS_ABI_VERSION")
    except (AttributeError, ffi.error):
        found = None
    if found != EXPECTED_ABI_VERSION:
        return None, f"stale cffi module (ABI {found}, expected {EXPECTED_ABI_VERSION}); rebuild lidguard"
    try:
        libraries = [ffi.dlopen(path) for path in (COREFOUNDATION_PATH, IOKIT_PATH, SYSTEM_LIBRARY_PATH)]
    except OSError as error:
        return None, f"a framework could not be loaded ({error})"
    return MacBinding(ffi, *libraries), "CoreFoundation, IOKit and libproc via cffi"


def binding_status() -> tuple[bool, str]:
    """(active, reason) for ``doctor`` and the callers' path choice."""
    if extensions_disabled():
        return False, "disabled by LIDGUARD_NO_EXTENSIONS=1"
    if os.environ.get("LIDGUARD_MACOS_BINDING", "").strip().lower() in _OFF_VALUES:
        return False, "disabled by LIDGUARD_MACOS_BINDING=off"
    binding, reason = _load()
    return binding is not None, reason


def active_binding() -> MacBinding:
    active, reason = binding_status()
    binding, _ = _load()
    if not active or binding is None:
        raise BindingInactive(reason)
    return binding
