"""``lidguard tray``: an indicator for the runtime (extra ``lidguard[tray]``).

``model`` (pure: status -> state, tooltip, menu), ``icons`` (Pillow drawing), ``actions`` (menu entries
through the CLI's IPC commands), ``updates`` (the runtime's watch stream), ``app`` (the process and
the choice of indicator), and the indicators: ``sni`` (StatusNotifierItem + dbusmenu over D-Bus,
jeepney), ``xembed`` (X11 system tray, python-xlib), ``pystray_indicator`` (Windows, macOS). Only
``lidguard tray`` imports this package; Pillow, jeepney, python-xlib and pystray are imported inside
functions.
"""
