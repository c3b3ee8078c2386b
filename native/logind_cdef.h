/* cffi cdef for lidguard._native._logind: the sd-bus calls lidguard makes to systemd-logind.
 *
 * Out-of-line ABI mode (no compiler): cffi parses this file at build time and the binding
 * dlopen()s libsystemd.so.0 (or libelogind.so.0, which exports the same sd-bus API) at run time.
 * Only non-variadic functions are declared: variadic calls such as sd_bus_call_method() cannot be
 * called reliably for every signature in ABI mode, so messages are built with
 * sd_bus_message_new_method_call() + sd_bus_message_append_basic() and read back with
 * sd_bus_message_read_basic() / sd_bus_message_enter_container().
 * Every declaration comes from <systemd/sd-bus.h> (systemd 252); see sd-bus(3).
 */

/* lidguard's own constant, not from any header: bumped whenever a declaration below changes so
 * the binding refuses a stale generated module (read with ffi.integer_const, no dlopen needed). */
enum { LIDGUARD_LOGIND_ABI_VERSION = 1 };

/* systemd/sd-bus.h: opaque handles. */
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;

/* systemd/sd-bus.h: struct sd_bus_error, see sd_bus_error(3); SD_BUS_ERROR_NULL is all zeroes. */
typedef struct {
    const char *name;
    const char *message;
    int _need_free;
} sd_bus_error;

/* systemd/sd-bus.h: sd_bus_open_system(3); honours $DBUS_SYSTEM_BUS_ADDRESS. */
int sd_bus_open_system(sd_bus **ret);

/* systemd/sd-bus.h: sd_bus_flush_close_unref(3); always returns NULL. */
sd_bus *sd_bus_flush_close_unref(sd_bus *bus);

/* systemd/sd-bus.h: sd_bus_message_new_method_call(3). */
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
                                   const char *path, const char *interface, const char *member);

/* systemd/sd-bus.h: sd_bus_message_append_basic(3); p points to the value (a char* for 's'). */
int sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p);

/* systemd/sd-bus.h: sd_bus_call(3); usec 0 means the default timeout (25 s). */
int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                sd_bus_message **reply);

/* systemd/sd-bus.h: sd_bus_message_read_basic(3); strings and fds stay owned by the message. */
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p);

/* systemd/sd-bus.h: sd_bus_message_enter_container(3); returns 0 at the end of an array. */
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents);

/* systemd/sd-bus.h: sd_bus_message_exit_container(3). */
int sd_bus_message_exit_container(sd_bus_message *m);

/* systemd/sd-bus.h: sd_bus_message_unref(3); always returns NULL. */
sd_bus_message *sd_bus_message_unref(sd_bus_message *m);

/* systemd/sd-bus.h: sd_bus_get_property_trivial(3); reads one basic-typed property. */
int sd_bus_get_property_trivial(sd_bus *bus, const char *destination, const char *path,
                                const char *interface, const char *member, sd_bus_error *ret_error,
                                char type, void *ret_ptr);

/* systemd/sd-bus.h: sd_bus_error_free(3). */
void sd_bus_error_free(sd_bus_error *e);
