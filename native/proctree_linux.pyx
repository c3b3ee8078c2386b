# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Linux process ancestry in one native call: ``read_chain(pid)`` walks /proc with libc I/O.

The pure-Python twin is ``lidguard.proctree.read_ancestry_pure``; both must return the same values
(the parity tests compare them field by field). This module is a dumb binding: plain values in and
out, no logging, no retries, no policy about which process matters.

Files read per process (see proc(5)):

    <root>/<pid>/stat      "pid (comm) state ppid ...": comm may contain spaces and ')' so it is
                           the text between the FIRST '(' and the LAST ')'; ppid is the second
                           field after that last ')'.
    <root>/<pid>/cmdline   argv joined by NUL with a trailing NUL; empty for zombies and kernel
                           threads.
    <root>/<pid>/exe       readlink(2); unreadable (EACCES, ENOENT, kernel thread) gives "".

Text is decoded as UTF-8 with ``surrogateescape`` (what ``os.fsdecode`` does on a UTF-8 system),
so undecodable bytes round-trip through ``os.fsencode``.
"""

from libc.stdlib cimport malloc, realloc, free, strtol
from libc.stdio cimport snprintf
from libc.string cimport memchr
from posix.fcntl cimport open as c_open, O_RDONLY, O_CLOEXEC
from posix.unistd cimport read as c_read, close as c_close, readlink as c_readlink

# Bumped whenever read_chain's signature or tuple layout changes; lidguard.proctree refuses a
# mismatching build (see lidguard._native.load_native_module).
ABI_VERSION = 1

cdef enum:
    PATH_CAPACITY = 4352          # proc_root (<= 4096 bytes) + "/<pid>/cmdline"
    LINK_CAPACITY = 4097          # PATH_MAX + 1: readlink(2) does not NUL-terminate
    INITIAL_BUFFER = 4096


cdef struct GrowableBuffer:
    char* data
    Py_ssize_t capacity


cdef Py_ssize_t read_whole_file(const char* path, GrowableBuffer* buffer) noexcept nogil:
    """Reads a whole file into ``buffer`` (grown as needed); returns its length or -1 on error."""
    cdef int fd = c_open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0:
        return -1
    cdef Py_ssize_t length = 0
    cdef Py_ssize_t count
    cdef char* grown
    while True:
        if length == buffer.capacity:
            grown = <char*>realloc(buffer.data, buffer.capacity * 2)
            if grown == NULL:
                c_close(fd)
                return -1
            buffer.data = grown
            buffer.capacity *= 2
        # /proc files can return short reads (cmdline is produced page by page): loop to EOF.
        count = c_read(fd, buffer.data + length, buffer.capacity - length)
        if count < 0:
            c_close(fd)
            return -1
        if count == 0:
            break
        length += count
    c_close(fd)
    return length


cdef inline str decode_text(const char* start, Py_ssize_t length):
    return start[:length].decode("utf-8", "surrogateescape")


cdef tuple split_cmdline(const char* data, Py_ssize_t length):
    """argv from NUL-separated bytes; exactly one trailing NUL is the terminator, not an argument."""
    if length <= 0:
        return ()
    if data[length - 1] == 0:
        length -= 1
    cdef list arguments = []
    cdef Py_ssize_t start = 0
    cdef const char* separator
    while True:
        separator = <const char*>memchr(data + start, 0, length - start)
        if separator == NULL:
            arguments.append(decode_text(data + start, length - start))
            break
        arguments.append(decode_text(data + start, separator - (data + start)))
        start = (separator - data) + 1
    return tuple(arguments)


cdef int parse_stat(const char* data, Py_ssize_t length, Py_ssize_t* comm_start,
                    Py_ssize_t* comm_length, long* ppid) noexcept:
    """Finds comm and ppid in a stat line; returns 0 on success, -1 when it is malformed."""
    cdef Py_ssize_t first_open = -1
    cdef Py_ssize_t last_close = -1
    cdef Py_ssize_t index
    for index in range(length):
        if data[index] == b'(':
            first_open = index
            break
    if first_open < 0:
        return -1
    index = length - 1
    while index > first_open:
        if data[index] == b')':
            last_close = index
            break
        index -= 1
    if last_close < 0:
        return -1
    # After ") " come the state (one word) and then ppid.
    index = last_close + 1
    while index < length and data[index] == b' ':
        index += 1
    while index < length and data[index] != b' ':
        index += 1
    while index < length and data[index] == b' ':
        index += 1
    if index >= length or not (b'0' <= data[index] <= b'9'):
        return -1
    cdef char* number_end = NULL
    cdef long value = strtol(data + index, &number_end, 10)
    if number_end == data + index:
        return -1
    comm_start[0] = first_open + 1
    comm_length[0] = last_close - first_open - 1
    ppid[0] = value
    return 0


def read_chain(long pid, int max_depth=64, str proc_root="/proc"):
    """Returns ``[(pid, ppid, name, exe, cmdline), ...]`` from ``pid`` up through its parents.

    Stops after a process whose ppid is 0 (init and kthreadd), at a process that is gone or whose
    stat is unreadable or malformed, at a pid seen before (only possible in a fake tree), or after
    ``max_depth`` processes. A missing ``pid`` gives an empty list.
    """
    cdef bytes root = proc_root.encode("utf-8", "surrogateescape")
    if len(root) > 4096:
        raise ValueError("proc_root is longer than PATH_MAX")
    cdef const char* root_text = root
    cdef char path[PATH_CAPACITY]
    cdef char link_target[LINK_CAPACITY]
    cdef GrowableBuffer buffer
    cdef list chain = []
    cdef set seen = set()
    cdef long current = pid
    cdef long parent
    cdef Py_ssize_t length, comm_start, comm_length, link_length
    cdef str name, exe
    cdef tuple cmdline
    buffer.capacity = INITIAL_BUFFER
    buffer.data = <char*>malloc(INITIAL_BUFFER)
    if buffer.data == NULL:
        raise MemoryError()
    try:
        while current > 0 and len(chain) < max_depth and current not in seen:
            snprintf(path, PATH_CAPACITY, "%s/%ld/stat", root_text, current)
            length = read_whole_file(path, &buffer)
            if length < 0:
                break
            if parse_stat(buffer.data, length, &comm_start, &comm_length, &parent) != 0:
                break
            name = decode_text(buffer.data + comm_start, comm_length)

            snprintf(path, PATH_CAPACITY, "%s/%ld/exe", root_text, current)
            link_length = c_readlink(path, link_target, LINK_CAPACITY - 1)
            exe = decode_text(link_target, link_length) if link_length > 0 else ""

            snprintf(path, PATH_CAPACITY, "%s/%ld/cmdline", root_text, current)
            length = read_whole_file(path, &buffer)
            cmdline = split_cmdline(buffer.data, length) if length > 0 else ()

            chain.append((current, parent, name, exe, cmdline))
            seen.add(current)
            current = parent
    finally:
        free(buffer.data)
    return chain
