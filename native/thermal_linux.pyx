# cython: language_level=3, boundscheck=False, wraparound=False
"""One batched thermal snapshot: every /sys/class/thermal/thermal_zone*/temp read with plain C I/O.

Dumb on purpose (STYLE rule 4): a root string in, a list of Celsius floats out, no policy. The
contract is shared with ``read_zone_temperatures_pure`` in lidguard/platform/linux/thermal.py and
checked by parity tests:

- zones are the entries of ``<root>/sys/class/thermal`` whose name starts with ``thermal_zone``,
  in order of their numeric suffix (non-numeric suffixes last, by name);
- each ``temp`` is millidegrees Celsius (Documentation/ABI/testing/sysfs-class-thermal); a file of
  at most 64 bytes holding ASCII whitespace, an optional sign and 1-18 digits parses, anything else
  (or any open/read error, e.g. EISDIR, ENODATA, EIO from a sensor) skips the zone;
- every parsed value is returned as value / 1000.0, including zero and negatives (the caller keeps
  only values > 0).
"""

from libc.errno cimport EINTR, errno

import os

ABI_VERSION = 1

cdef enum:
    _READ_LIMIT = 64  # a valid temp is a few bytes; longer files are not temperatures
    _MAX_DIGITS = 18  # fits a signed 64-bit value without overflow


cdef extern from "<sys/types.h>" nogil:
    ctypedef long ssize_t


cdef extern from "<dirent.h>" nogil:
    # opendir(3), readdir(3), closedir(3)
    ctypedef struct DIR:
        pass

    struct dirent:
        char d_name[256]

    DIR *opendir(const char *name)
    dirent *readdir(DIR *directory)
    int closedir(DIR *directory)


cdef extern from "<fcntl.h>" nogil:
    # open(2)
    int open(const char *path, int flags)
    int O_RDONLY
    int O_CLOEXEC


cdef extern from "<unistd.h>" nogil:
    # read(2), close(2)
    ssize_t read(int fd, void *buffer, size_t count)
    int close(int fd)


cdef inline bint _is_ascii_space(char character) noexcept nogil:
    # The set C isspace() uses in the "C" locale and Python's bytes.strip() strips.
    return character == 32 or (9 <= character <= 13)


cdef bint _parse_millidegrees(const char *text, ssize_t length, long long *value_out) noexcept nogil:
    cdef ssize_t start = 0
    cdef ssize_t end = length
    cdef bint negative = False
    cdef long long value = 0
    while start < end and _is_ascii_space(text[start]):
        start += 1
    while end > start and _is_ascii_space(text[end - 1]):
        end -= 1
    if start < end and (text[start] == 43 or text[start] == 45):  # '+' or '-'
        negative = text[start] == 45
        start += 1
    if end - start < 1 or end - start > _MAX_DIGITS:
        return False
    while start < end:
        if text[start] < 48 or text[start] > 57:  # not '0'..'9'
            return False
        value = value * 10 + (text[start] - 48)
        start += 1
    value_out[0] = -value if negative else value
    return True


cdef ssize_t _read_small_file(const char *path, char *buffer, ssize_t capacity) noexcept nogil:
    """Bytes read until EOF or ``capacity``; -1 when open or read fails."""
    cdef int fd = open(path, O_RDONLY | O_CLOEXEC)
    cdef ssize_t total = 0
    cdef ssize_t count
    if fd < 0:
        return -1
    while total < capacity:
        count = read(fd, buffer + total, <size_t>(capacity - total))
        if count < 0:
            if errno == EINTR:
                continue
            close(fd)
            return -1
        if count == 0:
            break
        total += count
    close(fd)
    return total


cdef list _list_zone_names(bytes directory):
    cdef list names = []
    cdef DIR *handle = opendir(directory)
    cdef dirent *entry
    if handle == NULL:
        return names
    while True:
        entry = readdir(handle)
        if entry == NULL:
            break
        name = <bytes>entry.d_name
        if name.startswith(b"thermal_zone"):
            names.append(name)
    closedir(handle)
    return names


def _zone_sort_key(bytes name):
    suffix = name[12:]
    if suffix.isdigit():
        return (0, int(suffix), name)
    return (1, 0, name)


def read_zone_temperatures(str root):
    """Celsius values of every parseable ``<root>/sys/class/thermal/thermal_zone*/temp``."""
    cdef bytes directory = os.fsencode(root).rstrip(b"/") + b"/sys/class/thermal"
    cdef list names = _list_zone_names(directory)
    cdef list temperatures = []
    cdef char buffer[_READ_LIMIT + 1]
    cdef ssize_t length
    cdef long long millidegrees
    cdef bytes path
    names.sort(key=_zone_sort_key)
    for name in names:
        path = directory + b"/" + name + b"/temp"
        length = _read_small_file(path, buffer, _READ_LIMIT + 1)
        if length < 0 or length > _READ_LIMIT:
            continue
        if _parse_millidegrees(buffer, length, &millidegrees):
            temperatures.append(<double>millidegrees / 1000.0)
    return temperatures
