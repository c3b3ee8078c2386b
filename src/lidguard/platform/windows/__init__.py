"""The Windows backend: power requests, LIDACTION, lid notifications, displays, SetSuspendState,
Toolhelp/PEB ancestry, exit handles, sound and the named pipe, all through one cffi binding.

Kept import-light on purpose: ``platform/ancestry/windows.py`` and the named-pipe client (hook
path) import ``winapi``/``_binding`` from here, so this package imports nothing itself. The platform
class is :class:`lidguard.platform.windows.backend.WindowsPlatform`. Importing any module of this
package on another OS imports no Windows-only module; the binding loads its DLLs on Windows only.
"""

__all__: list[str] = []
