/* cffi cdef for lidguard._native._windows: every Win32 call lidguard makes on Windows.
 *
 * Out-of-line ABI mode (no compiler): cffi parses this file at build time (windows_build.py) and
 * lidguard.platform.windows._binding dlopen()s kernel32, powrprof, advapi32, user32, ntdll and ole32
 * at run time, on Windows only. The file also parses on Linux (tests/windows checks it): the
 * Windows base types are typedef'd here with fixed widths (LLP64: DWORD/ULONG/LONG are 32 bits,
 * WCHAR is UTF-16) instead of relying on cffi's Windows-only built-in names.
 * Declarations follow the Windows SDK headers named above each block (learn.microsoft.com pages).
 */

/* lidguard's own constant, not from any header: bumped whenever a declaration below changes so
 * the binding refuses a stale generated module (read with ffi.integer_const, no dlopen needed). */
enum { LIDGUARD_WINDOWS_ABI_VERSION = 3 };

/* windef.h / winnt.h / basetsd.h base types. */
typedef int32_t BOOL;
typedef uint8_t BOOLEAN;
typedef uint8_t BYTE;
typedef uint16_t USHORT;
typedef uint32_t DWORD;
typedef uint32_t ULONG;
typedef uint32_t UINT;
typedef int32_t LONG;
typedef int32_t NTSTATUS;
typedef uint64_t ULONGLONG;
typedef uintptr_t ULONG_PTR;
typedef uintptr_t SIZE_T;
typedef uintptr_t WPARAM;
typedef intptr_t LPARAM;
typedef char16_t WCHAR;
typedef void *HANDLE;
typedef void *HLOCAL;
typedef void *HKEY;
typedef void *HWND;
typedef void *HPOWERNOTIFY;
typedef void *PSID;
typedef void *PSECURITY_DESCRIPTOR;
typedef int32_t HRESULT;

/* guiddef.h */
typedef struct {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;

/* winnt.h */
typedef struct {
    DWORD LowPart;
    LONG HighPart;
} LUID;

typedef struct {
    LUID Luid;
    DWORD Attributes;
} LUID_AND_ATTRIBUTES;

typedef struct {
    DWORD PrivilegeCount;
    LUID_AND_ATTRIBUTES Privileges[1];
} TOKEN_PRIVILEGES;

typedef struct {
    PSID Sid;
    DWORD Attributes;
} SID_AND_ATTRIBUTES;

typedef struct {
    SID_AND_ATTRIBUTES User;
} TOKEN_USER;

/* minwinbase.h */
typedef struct {
    DWORD nLength;
    void *lpSecurityDescriptor;
    BOOL bInheritHandle;
} SECURITY_ATTRIBUTES;

/* minwinbase.h: REASON_CONTEXT with POWER_REQUEST_CONTEXT_SIMPLE_STRING (only the string member of
 * the union is used; the detailed member is the same size on every architecture: see below). */
typedef struct {
    ULONG Version;
    DWORD Flags;
    union {
        struct {
            void *LocalizedReasonModule;
            ULONG LocalizedReasonId;
            ULONG ReasonStringCount;
            WCHAR **ReasonStrings;
        } Detailed;
        WCHAR *SimpleReasonString;
    } Reason;
} REASON_CONTEXT;

/* winbase.h / minwinbase.h: PowerCreateRequest, PowerSetRequest, PowerClearRequest (kernel32). */
HANDLE WINAPI PowerCreateRequest(REASON_CONTEXT *Context);
BOOL WINAPI PowerSetRequest(HANDLE PowerRequest, int RequestType);
BOOL WINAPI PowerClearRequest(HANDLE PowerRequest, int RequestType);

/* handleapi.h, errhandlingapi.h, processthreadsapi.h, synchapi.h, winbase.h (kernel32). */
BOOL WINAPI CloseHandle(HANDLE hObject);
DWORD WINAPI GetLastError(void);
HANDLE WINAPI GetCurrentProcess(void);
HANDLE WINAPI OpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwProcessId);
DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
BOOL WINAPI TerminateProcess(HANDLE hProcess, UINT uExitCode);
HLOCAL WINAPI LocalFree(HLOCAL hMem);
BOOL WINAPI ReadProcessMemory(HANDLE hProcess, const void *lpBaseAddress, void *lpBuffer, SIZE_T nSize,
                              SIZE_T *lpNumberOfBytesRead);

/* minwinbase.h FILETIME (100 ns units); processthreadsapi.h GetProcessTimes (kernel32). */
typedef struct {
    DWORD dwLowDateTime;
    DWORD dwHighDateTime;
} FILETIME;
BOOL WINAPI GetProcessTimes(HANDLE hProcess, FILETIME *lpCreationTime, FILETIME *lpExitTime, FILETIME *lpKernelTime,
                            FILETIME *lpUserTime);

/* winbase.h: GetSystemPowerStatus (kernel32). */
typedef struct {
    BYTE ACLineStatus;
    BYTE BatteryFlag;
    BYTE BatteryLifePercent;
    BYTE SystemStatusFlag;
    DWORD BatteryLifeTime;
    DWORD BatteryFullLifeTime;
} SYSTEM_POWER_STATUS;
BOOL WINAPI GetSystemPowerStatus(SYSTEM_POWER_STATUS *lpSystemPowerStatus);

/* tlhelp32.h: CreateToolhelp32Snapshot, Process32FirstW, Process32NextW (kernel32). */
typedef struct {
    DWORD dwSize;
    DWORD cntUsage;
    DWORD th32ProcessID;
    ULONG_PTR th32DefaultHeapID;
    DWORD th32ModuleID;
    DWORD cntThreads;
    DWORD th32ParentProcessID;
    LONG pcPriClassBase;
    DWORD dwFlags;
    WCHAR szExeFile[260];
} PROCESSENTRY32W;
HANDLE WINAPI CreateToolhelp32Snapshot(DWORD dwFlags, DWORD th32ProcessID);
BOOL WINAPI Process32FirstW(HANDLE hSnapshot, PROCESSENTRY32W *lppe);
BOOL WINAPI Process32NextW(HANDLE hSnapshot, PROCESSENTRY32W *lppe);

/* winternl.h: NtQueryInformationProcess(ProcessBasicInformation) (ntdll). */
typedef struct {
    NTSTATUS ExitStatus;
    void *PebBaseAddress;
    ULONG_PTR AffinityMask;
    LONG BasePriority;
    ULONG_PTR UniqueProcessId;
    ULONG_PTR InheritedFromUniqueProcessId;
} PROCESS_BASIC_INFORMATION;
NTSTATUS WINAPI NtQueryInformationProcess(HANDLE ProcessHandle, int ProcessInformationClass,
                                          void *ProcessInformation, ULONG ProcessInformationLength,
                                          ULONG *ReturnLength);

/* winternl.h: UNICODE_STRING as it sits in RTL_USER_PROCESS_PARAMETERS (64-bit layout). */
typedef struct {
    USHORT Length;
    USHORT MaximumLength;
    WCHAR *Buffer;
} UNICODE_STRING;

/* namedpipeapi.h, fileapi.h (kernel32). */
HANDLE WINAPI CreateNamedPipeW(const WCHAR *lpName, DWORD dwOpenMode, DWORD dwPipeMode, DWORD nMaxInstances,
                               DWORD nOutBufferSize, DWORD nInBufferSize, DWORD nDefaultTimeOut,
                               SECURITY_ATTRIBUTES *lpSecurityAttributes);
BOOL WINAPI ConnectNamedPipe(HANDLE hNamedPipe, void *lpOverlapped);
BOOL WINAPI DisconnectNamedPipe(HANDLE hNamedPipe);
BOOL WINAPI WaitNamedPipeW(const WCHAR *lpNamedPipeName, DWORD nTimeOut);
BOOL WINAPI GetNamedPipeServerProcessId(HANDLE Pipe, ULONG *ServerProcessId);
BOOL WINAPI GetNamedPipeClientProcessId(HANDLE Pipe, ULONG *ClientProcessId);
HANDLE WINAPI CreateFileW(const WCHAR *lpFileName, DWORD dwDesiredAccess, DWORD dwShareMode,
                          SECURITY_ATTRIBUTES *lpSecurityAttributes, DWORD dwCreationDisposition,
                          DWORD dwFlagsAndAttributes, HANDLE hTemplateFile);
BOOL WINAPI ReadFile(HANDLE hFile, void *lpBuffer, DWORD nNumberOfBytesToRead, DWORD *lpNumberOfBytesRead,
                     void *lpOverlapped);
BOOL WINAPI WriteFile(HANDLE hFile, const void *lpBuffer, DWORD nNumberOfBytesToWrite,
                      DWORD *lpNumberOfBytesWritten, void *lpOverlapped);
BOOL WINAPI FlushFileBuffers(HANDLE hFile);

/* processthreadsapi.h, securitybaseapi.h, winbase.h, sddl.h (advapi32). */
BOOL WINAPI OpenProcessToken(HANDLE ProcessHandle, DWORD DesiredAccess, HANDLE *TokenHandle);
BOOL WINAPI LookupPrivilegeValueW(const WCHAR *lpSystemName, const WCHAR *lpName, LUID *lpLuid);
BOOL WINAPI AdjustTokenPrivileges(HANDLE TokenHandle, BOOL DisableAllPrivileges, TOKEN_PRIVILEGES *NewState,
                                  DWORD BufferLength, TOKEN_PRIVILEGES *PreviousState, DWORD *ReturnLength);
BOOL WINAPI GetTokenInformation(HANDLE TokenHandle, int TokenInformationClass, void *TokenInformation,
                                DWORD TokenInformationLength, DWORD *ReturnLength);
BOOL WINAPI ConvertSidToStringSidW(PSID Sid, WCHAR **StringSid);
BOOL WINAPI ConvertStringSecurityDescriptorToSecurityDescriptorW(const WCHAR *StringSecurityDescriptor,
                                                                 DWORD StringSDRevision,
                                                                 PSECURITY_DESCRIPTOR *SecurityDescriptor,
                                                                 ULONG *SecurityDescriptorSize);

/* powersetting.h, powrprof.h (powrprof): the active scheme and LIDACTION. Return a Win32 error code. */
DWORD WINAPI PowerGetActiveScheme(HKEY UserRootPowerKey, GUID **ActivePolicyGuid);
DWORD WINAPI PowerSetActiveScheme(HKEY UserRootPowerKey, const GUID *SchemeGuid);
DWORD WINAPI PowerReadACValueIndex(HKEY RootPowerKey, const GUID *SchemeGuid, const GUID *SubGroupOfPowerSettingsGuid,
                                   const GUID *PowerSettingGuid, DWORD *AcValueIndex);
DWORD WINAPI PowerReadDCValueIndex(HKEY RootPowerKey, const GUID *SchemeGuid, const GUID *SubGroupOfPowerSettingsGuid,
                                   const GUID *PowerSettingGuid, DWORD *DcValueIndex);
DWORD WINAPI PowerWriteACValueIndex(HKEY RootPowerKey, const GUID *SchemeGuid, const GUID *SubGroupOfPowerSettingsGuid,
                                    const GUID *PowerSettingGuid, DWORD AcValueIndex);
DWORD WINAPI PowerWriteDCValueIndex(HKEY RootPowerKey, const GUID *SchemeGuid, const GUID *SubGroupOfPowerSettingsGuid,
                                    const GUID *PowerSettingGuid, DWORD DcValueIndex);

/* powerbase.h / winuser.h: PowerSettingRegisterNotification with DEVICE_NOTIFY_CALLBACK (powrprof). */
typedef ULONG (__stdcall *DEVICE_NOTIFY_CALLBACK_ROUTINE)(void *Context, ULONG Type, void *Setting);
typedef struct {
    DEVICE_NOTIFY_CALLBACK_ROUTINE Callback;
    void *Context;
} DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS;
typedef struct {
    GUID PowerSetting;
    DWORD DataLength;
    uint8_t Data[1];
} POWERBROADCAST_SETTING;
DWORD WINAPI PowerSettingRegisterNotification(const GUID *SettingGuid, DWORD Flags, HANDLE Recipient,
                                              HPOWERNOTIFY *RegistrationHandle);
DWORD WINAPI PowerSettingUnregisterNotification(HPOWERNOTIFY RegistrationHandle);

/* powrprof.h: SetSuspendState, GetPwrCapabilities (powrprof); winnt.h SYSTEM_POWER_CAPABILITIES. */
typedef struct {
    DWORD Granularity;
    DWORD Capacity;
} BATTERY_REPORTING_SCALE;
typedef struct {
    BOOLEAN PowerButtonPresent;
    BOOLEAN SleepButtonPresent;
    BOOLEAN LidPresent;
    BOOLEAN SystemS1;
    BOOLEAN SystemS2;
    BOOLEAN SystemS3;
    BOOLEAN SystemS4;
    BOOLEAN SystemS5;
    BOOLEAN HiberFilePresent;
    BOOLEAN FullWake;
    BOOLEAN VideoDimPresent;
    BOOLEAN ApmPresent;
    BOOLEAN UpsPresent;
    BOOLEAN ThermalControl;
    BOOLEAN ProcessorThrottle;
    BYTE ProcessorMinThrottle;
    BYTE ProcessorMaxThrottle;
    BOOLEAN FastSystemS4;
    BOOLEAN Hiberboot;
    BOOLEAN WakeAlarmPresent;
    BOOLEAN AoAc;
    BOOLEAN DiskSpinDown;
    BYTE HiberFileType;
    BOOLEAN AoAcConnectivitySupported;
    BYTE spare3[6];
    BOOLEAN SystemBatteriesPresent;
    BOOLEAN BatteriesAreShortTerm;
    BATTERY_REPORTING_SCALE BatteryScale[3];
    int AcOnLineWake;
    int SoftLidWake;
    int RtcWake;
    int MinDeviceWakeState;
    int DefaultLowLatencyWake;
} SYSTEM_POWER_CAPABILITIES;
BOOLEAN WINAPI SetSuspendState(BOOLEAN bHibernate, BOOLEAN bForce, BOOLEAN bWakeupEventsDisabled);
BOOLEAN WINAPI GetPwrCapabilities(SYSTEM_POWER_CAPABILITIES *lpspc);

/* winuser.h: GetSystemMetrics, SendNotifyMessageW (user32). */
int WINAPI GetSystemMetrics(int nIndex);
BOOL WINAPI SendNotifyMessageW(HWND hWnd, UINT Msg, WPARAM wParam, LPARAM lParam);

/* wingdi.h / winuser.h: GetDisplayConfigBufferSizes, QueryDisplayConfig (user32). The mode array is
 * only a buffer for the call: its union (48 bytes, 8-aligned) is kept opaque. */
typedef struct {
    LUID adapterId;
    UINT id;
    UINT modeInfoIdx;
    UINT statusFlags;
} DISPLAYCONFIG_PATH_SOURCE_INFO;
typedef struct {
    UINT Numerator;
    UINT Denominator;
} DISPLAYCONFIG_RATIONAL;
typedef struct {
    LUID adapterId;
    UINT id;
    UINT modeInfoIdx;
    int outputTechnology;
    int rotation;
    int scaling;
    DISPLAYCONFIG_RATIONAL refreshRate;
    int scanLineOrdering;
    BOOL targetAvailable;
    UINT statusFlags;
} DISPLAYCONFIG_PATH_TARGET_INFO;
typedef struct {
    DISPLAYCONFIG_PATH_SOURCE_INFO sourceInfo;
    DISPLAYCONFIG_PATH_TARGET_INFO targetInfo;
    UINT flags;
} DISPLAYCONFIG_PATH_INFO;
typedef struct {
    int infoType;
    UINT id;
    LUID adapterId;
    uint64_t modeData[6];
} DISPLAYCONFIG_MODE_INFO;
LONG WINAPI GetDisplayConfigBufferSizes(UINT flags, UINT *numPathArrayElements, UINT *numModeInfoArrayElements);
LONG WINAPI QueryDisplayConfig(UINT flags, UINT *numPathArrayElements, DISPLAYCONFIG_PATH_INFO *pathArray,
                               UINT *numModeInfoArrayElements, DISPLAYCONFIG_MODE_INFO *modeInfoArray,
                               int *currentTopologyId);

/* combaseapi.h (ole32): COM for the Core Audio endpoint volume. */
HRESULT WINAPI CoInitializeEx(void *pvReserved, DWORD dwCoInit);
void WINAPI CoUninitialize(void);
HRESULT WINAPI CoCreateInstance(const GUID *rclsid, void *pUnkOuter, DWORD dwClsContext, const GUID *riid,
                                void **ppv);

/* mmdeviceapi.h: IMMDeviceEnumerator and IMMDevice vtables (only the slots used are typed). */
typedef struct IMMDeviceEnumeratorVtbl IMMDeviceEnumeratorVtbl;
typedef struct { IMMDeviceEnumeratorVtbl *lpVtbl; } IMMDeviceEnumerator;
typedef struct IMMDeviceVtbl IMMDeviceVtbl;
typedef struct { IMMDeviceVtbl *lpVtbl; } IMMDevice;
struct IMMDeviceEnumeratorVtbl {
    HRESULT (__stdcall *QueryInterface)(IMMDeviceEnumerator *self, const GUID *riid, void **ppv);
    ULONG (__stdcall *AddRef)(IMMDeviceEnumerator *self);
    ULONG (__stdcall *Release)(IMMDeviceEnumerator *self);
    void *EnumAudioEndpoints;
    HRESULT (__stdcall *GetDefaultAudioEndpoint)(IMMDeviceEnumerator *self, int dataFlow, int role,
                                                 IMMDevice **ppEndpoint);
};
struct IMMDeviceVtbl {
    HRESULT (__stdcall *QueryInterface)(IMMDevice *self, const GUID *riid, void **ppv);
    ULONG (__stdcall *AddRef)(IMMDevice *self);
    ULONG (__stdcall *Release)(IMMDevice *self);
    HRESULT (__stdcall *Activate)(IMMDevice *self, const GUID *iid, DWORD dwClsCtx, void *pActivationParams,
                                  void **ppInterface);
};

/* endpointvolume.h: IAudioEndpointVolume vtable up to GetMute (slot order from the header). */
typedef struct IAudioEndpointVolumeVtbl IAudioEndpointVolumeVtbl;
typedef struct { IAudioEndpointVolumeVtbl *lpVtbl; } IAudioEndpointVolume;
struct IAudioEndpointVolumeVtbl {
    HRESULT (__stdcall *QueryInterface)(IAudioEndpointVolume *self, const GUID *riid, void **ppv);
    ULONG (__stdcall *AddRef)(IAudioEndpointVolume *self);
    ULONG (__stdcall *Release)(IAudioEndpointVolume *self);
    void *RegisterControlChangeNotify;
    void *UnregisterControlChangeNotify;
    void *GetChannelCount;
    void *SetMasterVolumeLevel;
    HRESULT (__stdcall *SetMasterVolumeLevelScalar)(IAudioEndpointVolume *self, float fLevel, const GUID *pguidEventContext);
    void *GetMasterVolumeLevel;
    HRESULT (__stdcall *GetMasterVolumeLevelScalar)(IAudioEndpointVolume *self, float *pfLevel);
    void *SetChannelVolumeLevel;
    void *SetChannelVolumeLevelScalar;
    void *GetChannelVolumeLevel;
    void *GetChannelVolumeLevelScalar;
    HRESULT (__stdcall *SetMute)(IAudioEndpointVolume *self, BOOL bMute, const GUID *pguidEventContext);
    HRESULT (__stdcall *GetMute)(IAudioEndpointVolume *self, BOOL *pbMute);
};

/* winuser.h: LASTINPUTINFO, GetLastInputInfo (user32; the tick of this session's last input);
 * sysinfoapi.h: GetTickCount (kernel32; milliseconds since boot, wraps after 49.7 days). */
typedef struct {
    UINT cbSize;
    DWORD dwTime;
} LASTINPUTINFO;
BOOL WINAPI GetLastInputInfo(LASTINPUTINFO *plii);
DWORD WINAPI GetTickCount(void);
