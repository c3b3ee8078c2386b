/* LD_PRELOAD shim for systemd-logind in the lidguard real-logind test fixture.
 *
 * The namespace's private /dev has a FIFO at /dev/input/event0 standing in for a lid switch (the VM has
 * no uinput). logind opens it and asks evdev ioctls; this shim answers the 'E' ioctls on descriptors
 * opened from /dev/input/event*: the device reports EV_SYN + EV_SW with SW_LID, and EVIOCGSW reads the
 * lid from the file named by $FAKE_LID_STATE ("1" = closed). Events themselves arrive through the FIFO
 * (struct input_event written by the test). Every other call goes to libc unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TRACKED_FDS 4096
static unsigned char lid_fd[TRACKED_FDS];

static void track(int fd, const char *path) {
    if (fd >= 0 && fd < TRACKED_FDS)
        lid_fd[fd] = path != NULL && strncmp(path, "/dev/input/event", 16) == 0;
}

static mode_t mode_argument(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    static int (*next)(const char *, int, ...);
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    if (next == NULL) next = dlsym(RTLD_NEXT, "open");
    int fd = next(path, flags, mode); track(fd, path); return fd;
}

int open64(const char *path, int flags, ...) {
    static int (*next)(const char *, int, ...);
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    if (next == NULL) next = dlsym(RTLD_NEXT, "open64");
    int fd = next(path, flags, mode); track(fd, path); return fd;
}

int openat(int dir, const char *path, int flags, ...) {
    static int (*next)(int, const char *, int, ...);
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    if (next == NULL) next = dlsym(RTLD_NEXT, "openat");
    int fd = next(dir, path, flags, mode); track(fd, path); return fd;
}

int openat64(int dir, const char *path, int flags, ...) {
    static int (*next)(int, const char *, int, ...);
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    if (next == NULL) next = dlsym(RTLD_NEXT, "openat64");
    int fd = next(dir, path, flags, mode); track(fd, path); return fd;
}

int close(int fd) {
    static int (*next)(int);
    if (next == NULL) next = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < TRACKED_FDS) lid_fd[fd] = 0;
    return next(fd);
}

static int lid_is_closed(void) {
    const char *path = getenv("FAKE_LID_STATE");
    int closed = 0;
    FILE *file = path ? fopen(path, "re") : NULL;
    if (file != NULL) { closed = fgetc(file) == '1'; fclose(file); }
    return closed;
}

static void set_bit(void *buffer, size_t size, unsigned bit) {
    if (bit / 8 < size) ((unsigned char *)buffer)[bit / 8] |= (unsigned char)(1u << (bit % 8));
}

static int answer_evdev(unsigned long request, void *arg) {
    unsigned number = _IOC_NR(request);
    size_t size = _IOC_SIZE(request);
    if (_IOC_DIR(request) != _IOC_READ) return 0;           /* EVIOCGRAB, EVIOCSMASK, ...: accepted */
    if (number == 0x01) { *(int *)arg = EV_VERSION; return 0; }              /* EVIOCGVERSION */
    memset(arg, 0, size);
    if (number == 0x02) { ((struct input_id *)arg)->bustype = BUS_VIRTUAL; return 0; }  /* EVIOCGID */
    if (number == 0x06) {                                                     /* EVIOCGNAME */
        static const char name[] = "lidguard test lid switch";
        size_t length = sizeof name < size ? sizeof name : size;
        memcpy(arg, name, length); return (int)length;
    }
    if (number == 0x20) { set_bit(arg, size, EV_SYN); set_bit(arg, size, EV_SW); }  /* EVIOCGBIT(0) */
    else if (number == 0x20 + EV_SW) set_bit(arg, size, SW_LID);                    /* EVIOCGBIT(EV_SW) */
    else if (number == 0x1b && lid_is_closed()) set_bit(arg, size, SW_LID);         /* EVIOCGSW */
    return (int)size;                                        /* any other query: all bits clear */
}

int ioctl(int fd, unsigned long request, ...) {
    static int (*next)(int, unsigned long, ...);
    va_list ap; va_start(ap, request); void *arg = va_arg(ap, void *); va_end(ap);
    if (next == NULL) next = dlsym(RTLD_NEXT, "ioctl");
    if (fd >= 0 && fd < TRACKED_FDS && lid_fd[fd] && _IOC_TYPE(request) == 'E') return answer_evdev(request, arg);
    return next(fd, request, arg);
}
