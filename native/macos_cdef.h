/* cffi cdef for lidguard._native._macos: the CoreFoundation, IOKit (IOHID event system), libproc
 * and notify(3) calls lidguard makes on macOS.
 *
 * Out-of-line ABI mode (no compiler, like logind_cdef.h): cffi parses this file at build time and
 * lidguard.platform.macos._binding dlopen()s the frameworks at run time, on macOS only:
 *   /System/Library/Frameworks/CoreFoundation.framework/CoreFoundation
 *   /System/Library/Frameworks/IOKit.framework/IOKit
 *   /usr/lib/libSystem.B.dylib (libproc, sysctl and notify)
 * Only plain C types cross the boundary; no variadic function is declared.
 */

/* lidguard's own constant, not from any header: bumped whenever a declaration below changes so the
 * binding refuses a stale generated module (read with ffi.integer_const, no dlopen needed). */
enum { LIDGUARD_MACOS_ABI_VERSION = 3 };

/* CoreFoundation/CFBase.h */
typedef const void *CFTypeRef;
typedef const struct __CFAllocator *CFAllocatorRef;
typedef const struct __CFString *CFStringRef;
typedef const struct __CFArray *CFArrayRef;
typedef const struct __CFDictionary *CFDictionaryRef;
typedef const struct __CFNumber *CFNumberRef;
typedef long CFIndex;
typedef unsigned int CFStringEncoding;
typedef unsigned char Boolean;
void CFRelease(CFTypeRef cf);

/* CoreFoundation/CFString.h: kCFStringEncodingUTF8 = 0x08000100. */
CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char *cStr, CFStringEncoding encoding);
Boolean CFStringGetCString(CFStringRef theString, char *buffer, CFIndex bufferSize, CFStringEncoding encoding);

/* CoreFoundation/CFNumber.h: kCFNumberSInt32Type = 3. */
typedef CFIndex CFNumberType;
CFNumberRef CFNumberCreate(CFAllocatorRef allocator, CFNumberType theType, const void *valuePtr);

/* CoreFoundation/CFArray.h */
CFIndex CFArrayGetCount(CFArrayRef theArray);
const void *CFArrayGetValueAtIndex(CFArrayRef theArray, CFIndex idx);

/* CoreFoundation/CFDictionary.h: the callback tables are exported data symbols (looked up by name,
 * the "NativeLibrary export lookup" of seed 001); their function-pointer fields are never called here. */
typedef struct {
    CFIndex version;
    const void *retain;
    const void *release;
    const void *copyDescription;
    const void *equal;
    const void *hash;
} CFDictionaryKeyCallBacks;
typedef struct {
    CFIndex version;
    const void *retain;
    const void *release;
    const void *copyDescription;
    const void *equal;
} CFDictionaryValueCallBacks;
extern const CFDictionaryKeyCallBacks kCFTypeDictionaryKeyCallBacks;
extern const CFDictionaryValueCallBacks kCFTypeDictionaryValueCallBacks;
CFDictionaryRef CFDictionaryCreate(CFAllocatorRef allocator, const void **keys, const void **values,
                                   CFIndex numValues, const CFDictionaryKeyCallBacks *keyCallBacks,
                                   const CFDictionaryValueCallBacks *valueCallBacks);

/* IOKit/hidsystem/IOHIDEventSystemClient.h and IOHIDServiceClient.h (private SPI, stable since
 * macOS 10.5; used by every Apple Silicon temperature tool): the event-system client, matching on
 * PrimaryUsagePage 0xff00 / PrimaryUsage 5 (temperature sensors), kIOHIDEventTypeTemperature = 15,
 * field IOHIDEventFieldBase(15) = 15 << 16. */
typedef struct __IOHIDEventSystemClient *IOHIDEventSystemClientRef;
typedef struct __IOHIDServiceClient *IOHIDServiceClientRef;
typedef struct __IOHIDEvent *IOHIDEventRef;
typedef uint32_t IOHIDEventType;
typedef uint32_t IOHIDEventField;
typedef double IOHIDFloat;
IOHIDEventSystemClientRef IOHIDEventSystemClientCreate(CFAllocatorRef allocator);
int IOHIDEventSystemClientSetMatching(IOHIDEventSystemClientRef client, CFDictionaryRef match);
CFArrayRef IOHIDEventSystemClientCopyServices(IOHIDEventSystemClientRef client);
CFTypeRef IOHIDServiceClientCopyProperty(IOHIDServiceClientRef service, CFStringRef key);
IOHIDEventRef IOHIDServiceClientCopyEvent(IOHIDServiceClientRef service, int64_t type, int32_t options, int64_t timestamp);
IOHIDFloat IOHIDEventGetFloatValue(IOHIDEventRef event, IOHIDEventField field);

/* libproc.h and sys/proc_info.h: PROC_PIDTBSDINFO = 3, MAXCOMLEN = 16, PROC_PIDPATHINFO_MAXSIZE = 4096. */
struct proc_bsdinfo {
    uint32_t pbi_flags;
    uint32_t pbi_status;
    uint32_t pbi_xstatus;
    uint32_t pbi_pid;
    uint32_t pbi_ppid;
    uint32_t pbi_uid;
    uint32_t pbi_gid;
    uint32_t pbi_ruid;
    uint32_t pbi_rgid;
    uint32_t pbi_svuid;
    uint32_t pbi_svgid;
    uint32_t rfu_1;
    char pbi_comm[16];
    char pbi_name[32];
    uint32_t pbi_nfiles;
    uint32_t pbi_pgid;
    uint32_t pbi_pjobc;
    uint32_t e_tdev;
    uint32_t e_tpgid;
    int32_t pbi_nice;
    uint64_t pbi_start_tvsec;
    uint64_t pbi_start_tvusec;
};
int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize);
int proc_pidpath(int pid, void *buffer, uint32_t buffersize);

/* sys/proc_info.h: PROC_PIDTASKINFO = 4 (PROC_PIDTASKINFO_SIZE 96); the CPU times are in Mach absolute
   time units (nanoseconds = units * numer / denom of mach_timebase_info). libproc.h:
   proc_listchildpids returns how many child pids it wrote (-1 on error). */
struct proc_taskinfo {
    uint64_t pti_virtual_size;
    uint64_t pti_resident_size;
    uint64_t pti_total_user;
    uint64_t pti_total_system;
    uint64_t pti_threads_user;
    uint64_t pti_threads_system;
    int32_t pti_policy;
    int32_t pti_faults;
    int32_t pti_pageins;
    int32_t pti_cow_faults;
    int32_t pti_messages_sent;
    int32_t pti_messages_received;
    int32_t pti_syscalls_mach;
    int32_t pti_syscalls_unix;
    int32_t pti_csw;
    int32_t pti_threadnum;
    int32_t pti_numrunning;
    int32_t pti_priority;
};
int proc_listchildpids(int ppid, void *buffer, int buffersize);
typedef struct {
    uint32_t numer;
    uint32_t denom;
} mach_timebase_info_data_t;
int mach_timebase_info(mach_timebase_info_data_t *info);

/* sys/sysctl.h: sysctl(3) with {CTL_KERN = 1, KERN_PROCARGS2 = 49, pid} reads argc + exec path + argv. */
int sysctl(int *name, unsigned int namelen, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/* notify.h (libsystem_notify, part of libSystem): NOTIFY_STATUS_OK = 0, NOTIFY_REUSE = 1 (register one
 * more name on the descriptor already in *notify_fd). Each notification of a name writes that
 * registration's token (a 4-byte int, network byte order) to the descriptor; notify_cancel of the
 * last token on a descriptor closes it. IOPowerSources.h: kIOPSNotifyPowerSource =
 * "com.apple.system.powersources.source", kIOPSNotifyPercentChange = "com.apple.system.powersources.percent". */
uint32_t notify_register_file_descriptor(const char *name, int *notify_fd, int flags, int *out_token);
uint32_t notify_cancel(int token);

/* CoreGraphics/CGDirectDisplay.h + CGDisplayConfiguration.h (CoreGraphics.framework): the online
 * displays and which one is the built-in panel (CGDisplayIsBuiltin returns a boolean_t, 32 bits). */
typedef uint32_t CGDirectDisplayID;
typedef int32_t CGError;
CGError CGGetOnlineDisplayList(uint32_t maxDisplays, CGDirectDisplayID *onlineDisplays, uint32_t *displayCount);
int CGDisplayIsBuiltin(CGDirectDisplayID display);

/* DisplayServices.framework (private, no header; the prototypes brightness tools have long used):
 * the built-in panel's brightness as 0.0-1.0; 0 means success. */
int DisplayServicesGetBrightness(CGDirectDisplayID display, float *brightness);
int DisplayServicesSetBrightness(CGDirectDisplayID display, float brightness);
