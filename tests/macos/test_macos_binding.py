"""native/macos_cdef.h parses with cffi on any OS, declares every symbol the binding uses, and the
binding's logic runs over fake CoreFoundation/IOKit/libproc libraries (the frameworks load only on macOS)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import cffi
import pytest

from lidguard.platform.macos import _binding
from lidguard.platform.macos._binding import MacBinding

ROOT = Path(__file__).resolve().parents[2]
CDEF = (ROOT / "native" / "macos_cdef.h").read_text()
BINDING_SOURCE = (ROOT / "src" / "lidguard" / "platform" / "macos" / "_binding.py").read_text()


@pytest.fixture(scope="module")
def ffi() -> cffi.FFI:
    parsed = cffi.FFI()
    parsed.cdef(CDEF)
    return parsed


def test_the_cdef_parses_and_the_struct_matches_the_sdk_size(ffi):
    assert ffi.sizeof("struct proc_bsdinfo") == 136  # sys/proc_info.h, PROC_PIDTBSDINFO_SIZE
    assert ffi.sizeof("struct proc_taskinfo") == 96  # sys/proc_info.h, PROC_PIDTASKINFO_SIZE
    assert ffi.sizeof("CFDictionaryKeyCallBacks") == 6 * ffi.sizeof("void *")


def test_every_symbol_the_binding_uses_is_declared():
    used = set(re.findall(r"\b(?:cf|iokit|system|cg|ds)\.([A-Za-z_][A-Za-z0-9_]*)\(", BINDING_SOURCE))
    used |= set(re.findall(r'cf_data\("([A-Za-z_][A-Za-z0-9_]*)"\)', BINDING_SOURCE))
    types = set(re.findall(r'ffi\.(?:new|cast|sizeof)\("([A-Za-z_ ][A-Za-z0-9_ ]*?)[ *\[\]]*"', BINDING_SOURCE))
    assert len(used) >= 15, used
    declared = set(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", CDEF)) | set(re.findall(r"extern [^;]* (\w+);", CDEF))
    assert sorted(used - declared) == []
    parsed = cffi.FFI()
    parsed.cdef(CDEF)
    for name in types:
        parsed.typeof(name if name.endswith("]") else name + " *")  # raises for an undeclared type


def test_the_abi_constant_matches_the_binding():
    assert f"LIDGUARD_MACOS_ABI_VERSION = {_binding.EXPECTED_ABI_VERSION} }}" in CDEF


def test_off_macos_the_binding_is_inactive_with_the_reason_and_never_imported_on_the_hook_path():
    active, reason = _binding.binding_status()
    if sys.platform != "darwin":
        assert not active and "only on macOS" in reason or "disabled" in reason
    probe = ("import sys\nimport lidguard.proctree, lidguard.platform.ancestry.macos, lidguard.platform.macos.ps\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cffi', '_cffi_backend') "
             "or m.startswith('lidguard._native._macos') or m == 'lidguard.platform.macos._binding'))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


class FakeFrameworks:
    """CoreFoundation + IOKit + libSystem as Python: handles are small integers cast to pointers."""

    def __init__(self, ffi, sensors, processes):
        self.ffi = ffi
        self.objects: dict[int, object] = {}
        self.owned: set[int] = set()
        self.released: list[int] = []
        self.sensors = [self._handle(("service", name, value)) for name, value in sensors]
        self.processes = processes
        self.matching = None
        self.listed: list[int] = []

    def _handle(self, value, *, owned=False):
        handle = len(self.objects) + 1
        self.objects[handle] = value
        if owned:
            self.owned.add(handle)
        return self.ffi.cast("void *", handle)

    def _value(self, reference):
        return self.objects[int(self.ffi.cast("uintptr_t", reference))]

    # CoreFoundation
    def CFStringCreateWithCString(self, allocator, text, encoding):
        raw = text if isinstance(text, bytes) else self.ffi.string(text)  # a real lib takes bytes too
        return self._handle(raw.decode(), owned=True)

    def CFNumberCreate(self, allocator, number_type, pointer):
        return self._handle(self.ffi.cast("int32_t *", pointer)[0], owned=True)

    def CFDictionaryCreate(self, allocator, keys, values, count, key_callbacks, value_callbacks):
        return self._handle({self._value(keys[i]): self._value(values[i]) for i in range(count)}, owned=True)

    def CFArrayGetCount(self, array):
        return len(self._value(array))

    def CFArrayGetValueAtIndex(self, array, index):
        return self._value(array)[index]

    def CFStringGetCString(self, string, buffer, size, encoding):
        data = self._value(string).encode() + b"\0"
        self.ffi.memmove(buffer, data, min(len(data), size))
        return 1

    def CFRelease(self, reference):
        self.released.append(int(self.ffi.cast("uintptr_t", reference)))

    # IOKit
    def IOHIDEventSystemClientCreate(self, allocator):
        return self._handle("client", owned=True)

    def IOHIDEventSystemClientSetMatching(self, client, matching):
        self.matching = self._value(matching)
        return 0

    def IOHIDEventSystemClientCopyServices(self, client):
        return self._handle(list(self.sensors), owned=True)

    def IOHIDServiceClientCopyProperty(self, service, key):
        assert self._value(key) == "Product"
        return self._handle(self._value(service)[1], owned=True)

    def IOHIDServiceClientCopyEvent(self, service, event_type, options, timestamp):
        assert event_type == 15
        value = self._value(service)[2]
        return self.ffi.NULL if value is None else self._handle(("event", value), owned=True)

    def IOHIDEventGetFloatValue(self, event, field):
        assert field == 15 << 16
        return self._value(event)[1]

    # libproc / sysctl
    timebase = (1, 1)  # Intel; Apple silicon reports 125/3

    def mach_timebase_info(self, info):
        info.numer, info.denom = self.timebase
        return 0

    def proc_listchildpids(self, ppid, buffer, size):
        children = [pid for pid, process in self.processes.items() if process["ppid"] == ppid and pid != ppid]
        self.listed.append(ppid)
        written = children[:size // self.ffi.sizeof("int")]
        for index, pid in enumerate(written):
            self.ffi.cast("int *", buffer)[index] = pid
        return len(written)

    def proc_pidinfo(self, pid, flavor, argument, buffer, size):
        if pid not in self.processes or self.processes[pid].get("gone_before") == flavor:
            return 0
        if flavor == 4:
            task = self.ffi.cast("struct proc_taskinfo *", buffer)
            task.pti_total_user, task.pti_total_system = self.processes[pid].get("cpu_units", (0, 0))
            return size
        if flavor != 3:
            return 0
        info = self.ffi.cast("struct proc_bsdinfo *", buffer)
        process = self.processes[pid]
        info.pbi_pid, info.pbi_ppid, info.pbi_status = pid, process["ppid"], process.get("status", 2)
        info.pbi_comm = process["name"][:15].encode()
        return size

    def proc_pidpath(self, pid, buffer, size):
        path = self.processes[pid]["path"].encode()
        self.ffi.memmove(buffer, path, len(path))
        return len(path)

    def sysctl(self, name, length, old, old_length, new, new_length):
        assert (length, name[0], name[1]) == (3, 1, 49)
        process = self.processes[name[2]]
        argv = process["argv"]
        raw = len(argv).to_bytes(4, sys.byteorder) + process["path"].encode() + b"\0\0\0\0"
        raw += b"\0".join(word.encode() for word in argv) + b"\0PATH=/usr/bin\0"
        if old == self.ffi.NULL:
            old_length[0] = len(raw)
        else:
            self.ffi.memmove(old, raw, len(raw))
        return 0


class FakeBinding(MacBinding):
    def cf_data(self, name):
        kind = "CFDictionaryKeyCallBacks *" if "Key" in name else "CFDictionaryValueCallBacks *"
        return self.ffi.new(kind)


def test_one_hid_snapshot_reads_every_sensor_and_releases_what_it_created(ffi):
    fake = FakeFrameworks(ffi, [("PMU tdie1", 45.5), ("pACC MTR Temp Sensor2", 52.25), ("NAND CH0 temp", None)], {})
    binding = FakeBinding(ffi, fake, fake, fake)
    assert binding.read_hid_temperatures() == [("PMU tdie1", 45.5), ("pACC MTR Temp Sensor2", 52.25)]
    assert fake.matching == {"PrimaryUsagePage": 0xFF00, "PrimaryUsage": 5}
    assert sorted(fake.released) == sorted(fake.owned)  # every Create/Copy released exactly once


def test_libproc_ancestry_with_exact_argv_and_zombies(ffi):
    processes = {
        4000: {"ppid": 3000, "name": "zsh", "path": "/bin/zsh", "argv": ["/bin/zsh", "-c", "lidguard claude-hook"]},
        3000: {"ppid": 1, "name": "node", "path": "/opt/homebrew/bin/node",
               "argv": ["node", "/opt/homebrew/bin/claude", "--resume", "my session"]},
        1: {"ppid": 0, "name": "launchd", "path": "/sbin/launchd", "argv": ["/sbin/launchd"]},
        5000: {"ppid": 1, "name": "gone", "path": "/bin/gone", "argv": ["gone"], "status": 5},
    }
    fake = FakeFrameworks(ffi, [], processes)
    binding = FakeBinding(ffi, fake, fake, fake)
    chain = binding.read_ancestry(4000, 64)
    assert [(p.pid, p.ppid, p.name, p.exe) for p in chain] == [
        (4000, 3000, "zsh", "/bin/zsh"), (3000, 1, "node", "/opt/homebrew/bin/node"),
        (1, 0, "launchd", "/sbin/launchd")]
    assert chain[1].cmdline == ("node", "/opt/homebrew/bin/claude", "--resume", "my session")
    assert binding.read_process(999) is None
    assert binding.is_zombie(5000) and not binding.is_zombie(4000)


def test_thermal_prefers_the_hid_snapshot_when_the_binding_is_active(monkeypatch, ffi, standins):
    from lidguard.platform.macos.thermal import MacThermalReader

    fake = FakeFrameworks(ffi, [("PMU tdie1", 71.0), ("gas gauge battery", 30.0)], {})
    monkeypatch.setattr(_binding, "binding_status", lambda: (True, "fake"))
    monkeypatch.setattr(_binding, "active_binding", lambda: FakeBinding(ffi, fake, fake, fake))
    assert MacThermalReader().read_temperatures_celsius() == [71.0]
    assert standins.calls() == []  # no powermetrics when the sensors answered


def _tool_tree():
    """An agent (3000) running a build (3100 -> compiler 3110) and a test (3200); 3300 exits mid-walk."""
    def process(ppid, name, cpu_units=(0, 0), **extra):
        return {"ppid": ppid, "name": name, "path": f"/usr/bin/{name}", "argv": [name], "cpu_units": cpu_units,
                **extra}

    return {
        1: process(0, "launchd"),
        3000: process(1, "node", (9_000_000_000, 1_000_000_000)),  # the agent itself: never counted
        3100: process(3000, "make", (1_000_000_000, 500_000_000)),
        3110: process(3100, "clang", (2_000_000_000, 250_000_000)),
        3200: process(3000, "pytest", (250_000_000, 0)),
        3300: process(3000, "sh", (7_000_000_000, 0), gone_before=4),
        4000: process(1, "unrelated", (5_000_000_000, 0)),
    }


def test_libproc_descendant_cpu_sums_the_tools_processes_not_the_agent(ffi):
    fake = FakeFrameworks(ffi, [], _tool_tree())
    binding = FakeBinding(ffi, fake, fake, fake)
    assert binding.descendant_cpu_seconds(3000) == pytest.approx(1.5 + 2.25 + 0.25)
    assert binding.descendant_cpu_seconds(3110) == 0.0  # no children
    assert binding.descendant_cpu_seconds(999) is None  # gone
    fake.timebase = (125, 3)  # Apple silicon: 24 MHz ticks
    assert binding.descendant_cpu_seconds(3000) == pytest.approx((1.5 + 2.25 + 0.25) * 125 / 3)


def test_libproc_descendant_cpu_is_bounded_and_survives_a_cycle(ffi):
    processes = _tool_tree()
    processes[3110]["ppid"] = 3110  # a process listed as its own parent is never walked twice
    processes.update({5000 + index: {"ppid": 3200, "name": "w", "path": "/w", "argv": ["w"], "cpu_units": (1, 0)}
                      for index in range(300)})
    fake = FakeFrameworks(ffi, [], processes)
    binding = FakeBinding(ffi, fake, fake, fake)
    assert binding.descendant_cpu_seconds(3000) == pytest.approx(1.5 + 0.25 + 300e-9)
    # Each process's children listed once, but 3200's twice: 300 children fill the first 256-pid buffer.
    assert fake.listed.count(3200) == 2 and all(fake.listed.count(pid) == 1 for pid in fake.listed if pid != 3200)


def test_the_runtime_reads_descendant_cpu_through_libproc_when_the_binding_is_active(monkeypatch, ffi):
    from lidguard.platform.macos.process import MacProcessWatcher

    fake = FakeFrameworks(ffi, [], _tool_tree())
    monkeypatch.setattr(_binding, "binding_status", lambda: (True, "fake"))
    monkeypatch.setattr(_binding, "active_binding", lambda: FakeBinding(ffi, fake, fake, fake))
    assert MacProcessWatcher().descendant_cpu_seconds(3000) == pytest.approx(4.0)
