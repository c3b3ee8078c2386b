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
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy, strcmp, strlen

import os

ABI_VERSION = 1

cdef enum:
    _READ_LIMIT = 64  # a valid temp is a few bytes; longer files are not temperatures
    _MAX_DIGITS = 18  # fits a signed 64-bit value without overflow
    _NAME_CAPACITY = 256  # d_name
    _LISTING_BUFFER = 8192


cdef extern from "<sys/types.h>" nogil:
    ctypedef long ssize_t


cdef extern from *:
    """
    #include <stdint.h>
    #include <sys/syscall.h>
    #include <unistd.h>
    /* getdents64(2) straight: readdir(3) over fdopendir(3) adds an fstat, two fcntl calls and a 32 KiB
       allocation per listing. */
    struct lidguard_dirent64 { uint64_t d_ino; int64_t d_off; unsigned short d_reclen; unsigned char d_type;
                               char d_name[]; };
    static long lidguard_getdents64(int fd, char *buffer, unsigned long size) {
        return syscall(SYS_getdents64, fd, buffer, size);
    }
    """
    struct lidguard_dirent64:
        unsigned short d_reclen
        char d_name[1]
    long lidguard_getdents64(int fd, char *buffer, unsigned long size) nogil


cdef extern from "<fcntl.h>" nogil:
    # open(2), openat(2)
    int open(const char *path, int flags)
    int openat(int directory_fd, const char *path, int flags)
    int O_RDONLY
    int O_CLOEXEC
    int O_DIRECTORY


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


cdef ssize_t _read_small_file_at(int directory_fd, const char *path, char *buffer,
                                 ssize_t capacity) noexcept nogil:
    """Bytes read until EOF or ``capacity``; -1 when open or read fails. A read shorter than asked is the
    end of the file (a sysfs attribute comes whole in one read; so does a regular file of a test tree),
    so a temperature costs open, one read and close."""
    cdef int fd = openat(directory_fd, path, O_RDONLY | O_CLOEXEC)
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
        total += count
        if count == 0 or total < capacity:
            break
    close(fd)
    return total


cdef struct _Zone:
    int numeric  # 0: the suffix is all ASCII digits (sorted by value), 1: anything else (by name)
    unsigned long long number
    char name[_NAME_CAPACITY + 6]  # + "/temp"


cdef int _compare_zones(const void *left, const void *right) noexcept nogil:
    """thermal_zone2 before thermal_zone10; non-numeric suffixes last, by name (the pure key)."""
    cdef const _Zone *a = <const _Zone *>left
    cdef const _Zone *b = <const _Zone *>right
    if a.numeric != b.numeric:
        return -1 if a.numeric < b.numeric else 1
    if a.numeric == 0 and a.number != b.number:
        return -1 if a.number < b.number else 1
    return strcmp(a.name, b.name)


cdef bint _numeric_suffix(const char *suffix, unsigned long long *value_out) noexcept nogil:
    """True for 1-19 ASCII digits (``bytes.isdigit``), with their value; longer runs sort by name among the
    numeric ones in the pure key too only when their values tie, which 19 digits cannot."""
    cdef size_t index = 0
    cdef unsigned long long value = 0
    if suffix[0] == 0:
        return False
    while suffix[index] != 0:
        if suffix[index] < 48 or suffix[index] > 57:
            return False
        if index >= 19:
            return False
        value = value * 10 + <unsigned long long>(suffix[index] - 48)
        index += 1
    value_out[0] = value
    return True


cdef int _list_zones(int directory_fd, _Zone **zones_out, size_t *count_out, bint *fallback) noexcept nogil:
    """The ``thermal_zone*`` entries of the directory; 0, or -1 when listing or allocating fails."""
    cdef char listing[_LISTING_BUFFER]
    cdef long filled
    cdef long offset
    cdef lidguard_dirent64 *entry
    cdef const char *name
    cdef size_t name_length
    cdef size_t count = 0
    cdef size_t capacity = 0
    cdef _Zone *zones = NULL
    cdef _Zone *grown
    while True:
        filled = lidguard_getdents64(directory_fd, listing, _LISTING_BUFFER)
        if filled < 0:
            if errno == EINTR:
                continue
            free(zones)
            return -1
        if filled == 0:
            break
        offset = 0
        while offset < filled:
            entry = <lidguard_dirent64 *>(listing + offset)
            offset += entry.d_reclen
            name = entry.d_name
            name_length = strlen(name)
            if name_length < 12 or name_length >= _NAME_CAPACITY or memcmp_prefix(name) != 0:
                continue
            if count == capacity:
                capacity = 16 if capacity == 0 else capacity * 2
                grown = <_Zone *>realloc(zones, capacity * sizeof(_Zone))
                if grown == NULL:
                    free(zones)
                    return -1
                zones = grown
            memcpy(zones[count].name, name, name_length + 1)
            zones[count].numeric = 0 if _numeric_suffix(name + 12, &zones[count].number) else 1
            if zones[count].numeric == 1 and _all_digits(name + 12):
                fallback[0] = True  # more digits than 64 bits: keep Python's exact order
            count += 1
    zones_out[0] = zones
    count_out[0] = count
    return 0


def read_zone_temperatures(str root):
    """Celsius values of every parseable ``<root>/sys/class/thermal/thermal_zone*/temp``."""
    cdef bytes directory = os.fsencode(root).rstrip(b"/") + b"/sys/class/thermal"
    cdef list temperatures = []
    cdef char buffer[_READ_LIMIT + 1]
    cdef ssize_t length
    cdef long long millidegrees
    cdef int directory_fd = open(directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
    cdef _Zone *zones = NULL
    cdef size_t count = 0
    cdef size_t name_length
    cdef size_t index
    cdef bint fallback = False
    if directory_fd < 0:
        return temperatures
    try:
        if _list_zones(directory_fd, &zones, &count, &fallback) != 0:
            return temperatures
        if fallback:
            return _read_in_python_order(directory_fd, zones, count)
        if count > 1:
            qsort(zones, count, sizeof(_Zone), _compare_zones)
        for index in range(count):
            name_length = strlen(zones[index].name)
            memcpy(zones[index].name + name_length, b"/temp", 6)
            length = _read_small_file_at(directory_fd, zones[index].name, buffer, _READ_LIMIT + 1)
            if length < 0 or length > _READ_LIMIT:
                continue
            if _parse_millidegrees(buffer, length, &millidegrees):
                temperatures.append(<double>millidegrees / 1000.0)
        return temperatures
    finally:
        free(zones)
        close(directory_fd)


cdef inline int memcmp_prefix(const char *name) noexcept nogil:
    cdef const char *prefix = b"thermal_zone"
    cdef int index
    for index in range(12):
        if name[index] != prefix[index]:
            return 1
    return 0


cdef bint _all_digits(const char *text) noexcept nogil:
    if text[0] == 0:
        return False
    while text[0] != 0:
        if text[0] < 48 or text[0] > 57:
            return False
        text += 1
    return True


def _zone_sort_key(bytes name):
    suffix = name[12:]
    if suffix.isdigit():
        return (0, int(suffix), name)
    return (1, 0, name)


cdef list _read_in_python_order(int directory_fd, _Zone *zones, size_t count):
    """The rare tree with a zone number past 64 bits: Python sorts the names (exact integers)."""
    cdef list names = sorted([<bytes>zones[index].name for index in range(count)], key=_zone_sort_key)
    cdef list temperatures = []
    cdef char buffer[_READ_LIMIT + 1]
    cdef ssize_t length
    cdef long long millidegrees
    cdef bytes path
    for name in names:
        path = name + b"/temp"
        length = _read_small_file_at(directory_fd, path, buffer, _READ_LIMIT + 1)
        if length < 0 or length > _READ_LIMIT:
            continue
        if _parse_millidegrees(buffer, length, &millidegrees):
            temperatures.append(<double>millidegrees / 1000.0)
    return temperatures
