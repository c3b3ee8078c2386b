"""``lidguard tray``: an indicator for the runtime (extra ``lidguard[tray]``).

``model`` (pure: status -> state, tooltip, menu), ``icons`` (Pillow drawing), ``actions`` (menu entries
through the CLI's IPC commands), ``updates`` (the runtime's status stream), ``app`` (the pystray
process). Only ``lidguard tray`` imports this package beyond ``model``; pystray and Pillow are
imported inside ``app.load_toolkit`` and ``icons.draw_icon``.
"""
