# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Linux process ancestry in one native call: ``read_chain(pid)`` walks /proc with libc I/O;
``descendant_cpu(pid)`` sums the CPU time of a process's descendants (the running-tool check).

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

``descendant_cpu`` finds descendants through ``<root>/<pid>/task/<tid>/children`` (the children of
each thread, Linux 4.2+ with CONFIG_PROC_CHILDREN) and reads fields 4 (ppid) and 14-17 (utime,
stime, cutime, cstime, clock ticks) of each one's stat; where the root's children file is missing
it scans every ``<root>/<pid>/stat`` once and walks the ppid links instead. Its pure twin is
``lidguard.platform.ancestry.linux.descendant_cpu_seconds`` (the full scan); the tests compare them.
"""

from cpython.object cimport PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdlib cimport malloc, realloc, free, strtol
from libc.stdio cimport snprintf
from libc.string cimport memchr
from posix.fcntl cimport open as c_open, O_RDONLY, O_CLOEXEC
from posix.unistd cimport read as c_read, close as c_close, readlink as c_readlink, sysconf, _SC_CLK_TCK

# Bumped whenever a function is added or a signature or result layout changes; lidguard.proctree
# refuses a mismatching build (see lidguard._native.load_native_module). 2: descendant_cpu.
# 3: read_chain's record_type.
ABI_VERSION = 3


cdef extern from "dirent.h" nogil:
    ctypedef struct DIR:
        pass
    struct dirent:
        char d_name[256]
    DIR* opendir(const char* name)
    dirent* readdir(DIR* directory)
    int closedir(DIR* directory)

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


cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char* data, Py_ssize_t size, const char* errors)
    object PyType_GenericAlloc(type subtype, Py_ssize_t items)


cdef inline str decode_text(const char* start, Py_ssize_t length):
    # bytes.decode("utf-8", "surrogateescape") without the intermediate bytes object
    return PyUnicode_DecodeUTF8(start, length, "surrogateescape")


cdef tuple split_cmdline(const char* data, Py_ssize_t length):
    """argv from NUL-separated bytes; exactly one trailing NUL is the terminator, not an argument.
    Counts the arguments first and fills the tuple in place (no list to copy from)."""
    if length <= 0:
        return ()
    if data[length - 1] == 0:
        length -= 1
    cdef const char* end = data + length
    cdef const char* at = data
    cdef const char* separator
    cdef Py_ssize_t count = 1
    while True:
        separator = <const char*>memchr(at, 0, end - at)
        if separator == NULL:
            break
        count += 1
        at = separator + 1
    cdef tuple arguments = PyTuple_New(count)
    cdef object argument
    cdef Py_ssize_t index
    at = data
    for index in range(count):
        separator = <const char*>memchr(at, 0, end - at)
        if separator == NULL:
            separator = end
        argument = decode_text(at, separator - at)
        Py_INCREF(argument)  # PyTuple_SET_ITEM takes over this reference
        PyTuple_SET_ITEM(arguments, index, argument)
        at = separator + 1
    return arguments


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


cdef extern from "<fcntl.h>" nogil:
    int openat(int directory_fd, const char* path, int flags)
    int O_DIRECTORY

cdef extern from "<unistd.h>" nogil:
    Py_ssize_t readlinkat(int directory_fd, const char* path, char* buffer, size_t size)


cdef Py_ssize_t read_file_at(int directory_fd, const char* path, GrowableBuffer* buffer) noexcept nogil:
    """``read_whole_file`` relative to an open directory, with one read for a file that fits: a read
    that returns less than asked is the end of these files (seq_file /proc/<pid>/stat and
    get_mm_cmdline fill the buffer as far as they have data; so does a regular file of a fake tree),
    which saves the read that would return 0. Returns the length, or -1 on error."""
    cdef int fd = openat(directory_fd, path, O_RDONLY | O_CLOEXEC)
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
        count = c_read(fd, buffer.data + length, buffer.capacity - length)
        if count < 0:
            c_close(fd)
            return -1
        length += count
        if count == 0 or length < buffer.capacity:
            break
    c_close(fd)
    return length


cdef inline Py_ssize_t pid_path(char* path, long pid, const char* leaf) noexcept nogil:
    """Writes ``<pid>/<leaf>`` (NUL-terminated) into ``path`` (at least 32 bytes); returns its length."""
    cdef char digits[24]
    cdef int count = 0
    cdef Py_ssize_t length = 0
    cdef unsigned long value = <unsigned long>pid
    while True:
        digits[count] = <char>(48 + value % 10)
        count += 1
        value //= 10
        if value == 0:
            break
    while count > 0:
        count -= 1
        path[length] = digits[count]
        length += 1
    path[length] = b'/'
    length += 1
    while leaf[0] != 0:
        path[length] = leaf[0]
        length += 1
        leaf += 1
    path[length] = 0
    return length


class _ClassStatementTuple(tuple):
    """A tuple subclass made by a class statement: the deallocator every such class has (``subtype_dealloc``)."""


cdef bint holds_five_items_only(type record_type) noexcept:
    """True when ``record_type`` and each of its bases up to ``tuple`` were made by class statements (a
    NamedTuple, ``class Row(tuple)``): an instance is then its item slots and nothing else. A type with a
    C layout of its own (a struct sequence such as ``os.stat_result`` keeps hidden fields past its visible
    ones, and its deallocator reads them) is not: five items written into one would corrupt memory."""
    cdef PyTypeObject* current = <PyTypeObject*>record_type
    cdef PyTypeObject* tuple_type = <PyTypeObject*>tuple
    cdef PyTypeObject* by_class_statement = <PyTypeObject*>_ClassStatementTuple
    if current == tuple_type:
        return False
    while current != tuple_type:
        if current == NULL or current.tp_dealloc != by_class_statement.tp_dealloc:
            return False
        current = current.tp_base
    return True


cdef inline object new_record(type record_type, object pid, object ppid, str name, str exe, tuple cmdline):
    """A ``record_type`` (``holds_five_items_only``, checked by the caller) holding the five values, built the way
    ``tuple.__new__`` builds a subclass instance but without the tuple it would copy from."""
    cdef object record = PyType_GenericAlloc(record_type, 5)
    Py_INCREF(pid)  # each PyTuple_SET_ITEM takes over one reference
    PyTuple_SET_ITEM(record, 0, pid)
    Py_INCREF(ppid)
    PyTuple_SET_ITEM(record, 1, ppid)
    Py_INCREF(name)
    PyTuple_SET_ITEM(record, 2, name)
    Py_INCREF(exe)
    PyTuple_SET_ITEM(record, 3, exe)
    Py_INCREF(cmdline)
    PyTuple_SET_ITEM(record, 4, cmdline)
    return record


def read_chain(long pid, int max_depth=64, str proc_root="/proc", type record_type=None):
    """Returns ``[(pid, ppid, name, exe, cmdline), ...]`` from ``pid`` up through its parents, each entry a
    plain tuple or, with ``record_type`` (a tuple subclass made by a class statement, such as a NamedTuple of
    these five fields), one of those built in place (``lidguard.proctree`` passes ``ProcessInfo``; ``TypeError``
    for any other type, ``tuple`` itself and struct sequences included).

    Stops after a process whose ppid is 0 (init and kthreadd), at a process that is gone or whose
    stat is unreadable or malformed, at a pid seen before (only possible in a fake tree), or after
    ``max_depth`` processes. A missing ``pid`` (or proc root) gives an empty list.

    Three system calls per file at most, paths relative to the proc root opened once (``openat``,
    ``readlinkat``): the walk costs about what a plain C loop over the same files costs
    (benchmarks/test_bench_proctree.py measures both).
    """
    cdef bytes root = proc_root.encode("utf-8", "surrogateescape")
    if len(root) > 4096:
        raise ValueError("proc_root is longer than PATH_MAX")
    cdef char path[48]
    cdef char link_target[LINK_CAPACITY]
    cdef GrowableBuffer buffer
    cdef list chain = []
    cdef long* seen = NULL  # the pids walked so far (a loop is only possible in a fake tree)
    cdef Py_ssize_t seen_count = 0, seen_capacity = 64, index
    cdef long* grown_seen
    cdef bint repeated
    cdef long current = pid
    cdef long parent
    cdef Py_ssize_t length, comm_start, comm_length, link_length
    cdef str name, exe
    cdef tuple cmdline
    cdef int root_fd
    if record_type is not None and not holds_five_items_only(record_type):
        raise TypeError(f"record_type must be a tuple subclass made by a class statement, not {record_type!r}")
    if pid <= 0 or max_depth <= 0:
        return chain
    # "<root>/<pid>/stat" of the pure reader: an empty root means "/<pid>/stat"
    root_fd = c_open(root if root else b"/", O_RDONLY | O_CLOEXEC | O_DIRECTORY)
    if root_fd < 0:
        return chain
    buffer.capacity = INITIAL_BUFFER
    buffer.data = <char*>malloc(INITIAL_BUFFER)
    seen = <long*>malloc(seen_capacity * sizeof(long))
    if buffer.data == NULL or seen == NULL:
        free(buffer.data)
        free(seen)
        c_close(root_fd)
        raise MemoryError()
    try:
        while current > 0 and seen_count < max_depth:
            repeated = False
            for index in range(seen_count):  # a chain is a few dozen processes: a scan beats a set
                if seen[index] == current:
                    repeated = True
                    break
            if repeated:
                break
            if seen_count == seen_capacity:
                grown_seen = <long*>realloc(seen, seen_capacity * 2 * sizeof(long))
                if grown_seen == NULL:
                    raise MemoryError()
                seen = grown_seen
                seen_capacity *= 2
            pid_path(path, current, b"stat")
            length = read_file_at(root_fd, path, &buffer)
            if length < 0:
                break
            if parse_stat(buffer.data, length, &comm_start, &comm_length, &parent) != 0:
                break
            name = decode_text(buffer.data + comm_start, comm_length)

            pid_path(path, current, b"exe")
            link_length = readlinkat(root_fd, path, link_target, LINK_CAPACITY - 1)
            exe = decode_text(link_target, link_length) if link_length > 0 else ""

            pid_path(path, current, b"cmdline")
            length = read_file_at(root_fd, path, &buffer)
            cmdline = split_cmdline(buffer.data, length) if length > 0 else ()

            if record_type is None:
                chain.append((current, parent, name, exe, cmdline))
            else:
                chain.append(new_record(record_type, current, parent, name, exe, cmdline))
            seen[seen_count] = current
            seen_count += 1
            current = parent
    finally:
        free(seen)
        free(buffer.data)
        c_close(root_fd)
    return chain


cdef inline bint is_space(char c) noexcept nogil:
    # The bytes bytes.split() splits on, so the pure reader and this one read the same fields.
    return c == b' ' or c == b'\n' or c == b'\t' or c == b'\r' or c == b'\x0b' or c == b'\x0c'


cdef int parse_long(const char* data, Py_ssize_t start, Py_ssize_t end, long long* value) noexcept nogil:
    """An optionally signed decimal integer spanning exactly data[start:end]; 0 on success, -1 if not."""
    cdef bint negative = False
    cdef long long result = 0
    if start < end and (data[start] == b'-' or data[start] == b'+'):
        negative = data[start] == b'-'
        start += 1
    if start >= end or end - start > 18:
        return -1
    while start < end:
        if not (b'0' <= data[start] <= b'9'):
            return -1
        result = result * 10 + (data[start] - 48)  # 48: '0'
        start += 1
    value[0] = -result if negative else result
    return 0


cdef int parse_stat_times(const char* data, Py_ssize_t length, long* ppid, long long* ticks) noexcept nogil:
    """ppid and utime + stime + cutime + cstime from a stat line (proc(5) fields 4 and 14-17, counted
    after the last ')'); 0 on success, -1 when the line is malformed."""
    cdef Py_ssize_t index = length - 1
    while index >= 0 and data[index] != b')':
        index -= 1
    if index < 0:
        return -1
    index += 1
    cdef int field = 0
    cdef Py_ssize_t start
    cdef long long value
    cdef long long total = 0
    while field < 15:
        while index < length and is_space(data[index]):
            index += 1
        if index >= length:
            return -1
        start = index
        while index < length and not is_space(data[index]):
            index += 1
        if field == 1 or field >= 11:
            if parse_long(data, start, index, &value) != 0:
                return -1
            if field == 1:
                ppid[0] = <long>value
            else:
                total += value
        field += 1
    ticks[0] = total
    return 0


cdef int read_times(const char* root_text, long pid, char* path, GrowableBuffer* buffer, long* ppid,
                    long long* ticks) noexcept nogil:
    snprintf(path, PATH_CAPACITY, "%s/%ld/stat", root_text, pid)
    cdef Py_ssize_t length = read_whole_file(path, buffer)
    if length < 0:
        return -1
    return parse_stat_times(buffer.data, length, ppid, ticks)


cdef bint append_children(const char* root_text, long pid, char* path, GrowableBuffer* buffer, list out):
    """Appends the children of every thread of ``pid``; False when ``<pid>/task`` cannot be listed."""
    snprintf(path, PATH_CAPACITY, "%s/%ld/task", root_text, pid)
    cdef DIR* tasks = opendir(path)
    if tasks == NULL:
        return False
    cdef dirent* entry
    cdef Py_ssize_t length, index, start
    cdef long long child
    try:
        while True:
            entry = readdir(tasks)
            if entry == NULL:
                break
            if entry.d_name[0] == b'.':
                continue
            snprintf(path, PATH_CAPACITY, "%s/%ld/task/%s/children", root_text, pid, entry.d_name)
            length = read_whole_file(path, buffer)
            index = 0
            while index < length:
                while index < length and is_space(buffer.data[index]):
                    index += 1
                start = index
                while index < length and not is_space(buffer.data[index]):
                    index += 1
                if index > start and parse_long(buffer.data, start, index, &child) == 0 and child > 0:
                    out.append(child)
    finally:
        closedir(tasks)
    return True


cdef dict read_cpu_table(const char* root_text, char* path, GrowableBuffer* buffer):
    """pid -> (ppid, ticks) for every numeric entry of the proc root (the fallback scan)."""
    cdef dict table = {}
    cdef DIR* directory = opendir(root_text)
    if directory == NULL:
        return table
    cdef dirent* entry
    cdef long long pid
    cdef long ppid
    cdef long long ticks
    cdef Py_ssize_t name_length
    try:
        while True:
            entry = readdir(directory)
            if entry == NULL:
                break
            name_length = 0
            while entry.d_name[name_length] != 0:
                name_length += 1
            if parse_long(entry.d_name, 0, name_length, &pid) != 0 or not (b'0' <= entry.d_name[0] <= b'9'):
                continue
            if read_times(root_text, <long>pid, path, buffer, &ppid, &ticks) == 0:
                table[pid] = (ppid, ticks)
    finally:
        closedir(directory)
    return table


def descendant_cpu(object pid_number, str proc_root="/proc", bint children_files=True):
    """CPU seconds (utime + stime + cutime + cstime) of every descendant of ``pid``, not ``pid`` itself;
    None when ``pid``'s stat is unreadable or malformed (gone), or ``pid`` is no pid at all (<= 0 or
    past what a C long holds: the pure reader finds no such process either). ``children_files=False``
    forces the full scan (tests compare both walks)."""
    if not 0 < pid_number < 2**62:
        return None
    cdef long pid = pid_number
    cdef bytes root = proc_root.encode("utf-8", "surrogateescape")
    if len(root) > 4096:
        raise ValueError("proc_root is longer than PATH_MAX")
    cdef const char* root_text = root
    cdef char path[PATH_CAPACITY]
    cdef GrowableBuffer buffer
    cdef long ppid
    cdef long long ticks
    cdef long long total = 0
    cdef long clock_ticks = sysconf(_SC_CLK_TCK)
    cdef list pending = []
    cdef set seen = {pid}
    cdef dict table
    cdef dict children
    if clock_ticks <= 0:
        clock_ticks = 100
    buffer.capacity = INITIAL_BUFFER
    buffer.data = <char*>malloc(INITIAL_BUFFER)
    if buffer.data == NULL:
        raise MemoryError()
    try:
        if children_files and read_times(root_text, pid, path, &buffer, &ppid, &ticks) != 0:
            return None
        snprintf(path, PATH_CAPACITY, "%s/%ld/task/%ld/children", root_text, pid, pid)
        if children_files and read_whole_file(path, &buffer) >= 0:
            append_children(root_text, pid, path, &buffer, pending)
            while pending:
                current = pending.pop()
                if current in seen:
                    continue
                seen.add(current)
                if read_times(root_text, current, path, &buffer, &ppid, &ticks) != 0:
                    continue  # exited meanwhile: its children went to a reaper
                total += ticks
                append_children(root_text, current, path, &buffer, pending)
            return total / <double>clock_ticks
        table = read_cpu_table(root_text, path, &buffer)
        if pid not in table:
            return None
        children = {}
        for child, entry in table.items():
            if child != entry[0]:
                children.setdefault(entry[0], []).append(child)
        pending.extend(children.get(pid, ()))
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            total += table[current][1]
            pending.extend(children.get(current, ()))
        return total / <double>clock_ticks
    finally:
        free(buffer.data)
