"""The optional extras (``lidguard[notify]``, ``[tray]``, ``[mcp]``) and the one line that says how to get one.

``require(extra, what)`` raises ``ExtraMissing`` (an ``ImportError``) when a module of the extra cannot be
found, without importing any of them. Its message is one line naming the exact command for the way this
lidguard was installed (``install_command``):

- pipx (``pipx_metadata.json`` in the environment): ``pipx install --force '<source>[<extras>]'``, with the
  extras already present kept (``--force`` rebuilds the environment from the spec);
- any other virtual environment: that environment's own ``python -m pip install '<source>[<extra>]'``;
- else ``pip install '<source>[<extra>]'``.

``<source>`` is ``lidguard``, or the folder it was installed from (PEP 610 ``direct_url.json``: a checkout
installed with ``sh install.sh`` or ``pipx install .``), ``-e`` kept for an editable install. Stdlib only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..platform.host import host_os_name

__all__ = ["EXTRAS", "ExtraMissing", "install_command", "missing_message", "missing_modules", "remove_command",
           "require"]

_TRAY = ("PIL", "jeepney", "Xlib") if host_os_name() == "linux" else ("PIL", "pystray")
# The import names of each extra's packages (pyproject.toml [project.optional-dependencies]).
EXTRAS: dict[str, tuple[str, ...]] = {
    "mcp": ("mcp",),
    "notify": ("starlette", "uvicorn", "jinja2", "pywebpush", "py_vapid", "cryptography"),
    "tray": _TRAY,
}


class ExtraMissing(ImportError):
    """A package of an optional extra is not installed; the message is the one line to print."""


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_modules(extra: str) -> list[str]:
    return [module for module in EXTRAS[extra] if not _found(module)]


def _source() -> tuple[str, bool]:
    """What this lidguard was installed from: ("lidguard", False), or (folder, editable)."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        text = distribution("lidguard").read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError, ValueError):
        return "lidguard", False
    try:
        record = json.loads(text or "null")
        parts = urlsplit(record["url"])
        editable = bool((record.get("dir_info") or {}).get("editable"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return "lidguard", False
    if parts.scheme != "file" or not parts.path:
        return "lidguard", False
    folder = unquote(parts.path)
    if host_os_name() == "windows" and folder.startswith("/") and folder[2:3] == ":":
        folder = folder[1:]
    return (folder, editable) if Path(folder).is_dir() else ("lidguard", False)


def install_command(extra: str, *, prefix: str | None = None, base_prefix: str | None = None,
                    source: tuple[str, bool] | None = None) -> str:
    """The one command that installs ``extra`` for this installation (see the module docstring)."""
    prefix = sys.prefix if prefix is None else prefix
    base_prefix = sys.base_prefix if base_prefix is None else base_prefix
    where, editable = _source() if source is None else source
    if Path(prefix, "pipx_metadata.json").is_file():
        present = [name for name in EXTRAS if name != extra and not missing_modules(name)]
        extras = ",".join(sorted([extra, *present]))
        command = ["pipx", "install", "--force", f"{where}[{extras}]"]
        if editable:
            command.insert(3, "--editable")
        return shlex.join(command)
    requirement = ["-e", f"{where}[{extra}]"] if editable else [f"{where}[{extra}]"]
    if prefix != base_prefix:  # a virtual environment: its own pip
        windows = host_os_name() == "windows"
        python = Path(prefix, "Scripts" if windows else "bin", "python.exe" if windows else "python")
        return shlex.join([str(python), "-m", "pip", "install", *requirement])
    return shlex.join(["pip", "install", *requirement])


def remove_command(*, prefix: str | None = None, base_prefix: str | None = None) -> str:
    """The command that removes the program itself (``lidguard uninstall``'s last line): ``pipx uninstall``;
    for install.sh's own venv (``$XDG_DATA_HOME/lidguard/venv``) removing it and the links to it; another
    venv's own pip; else pip."""
    prefix = sys.prefix if prefix is None else prefix
    base_prefix = sys.base_prefix if base_prefix is None else base_prefix
    if Path(prefix, "pipx_metadata.json").is_file():
        return shlex.join(["pipx", "uninstall", Path(prefix).name])
    if prefix == base_prefix:
        return "pip uninstall lidguard"
    home = os.environ.get("HOME") or os.path.expanduser("~")
    data = os.environ.get("XDG_DATA_HOME", "").strip()
    data = data if os.path.isabs(data) else os.path.join(home, ".local", "share")
    own_venv = os.path.join(data, "lidguard", "venv")  # install.sh's
    if host_os_name() != "windows" and os.path.realpath(prefix) == os.path.realpath(own_venv):
        bin_dir = os.environ.get("PIPX_BIN_DIR") or os.path.join(home, ".local", "bin")
        links = (os.path.join(bin_dir, name) for name in ("lidguard", "lidguard-notify"))
        return shlex.join(["rm", "-r", prefix, *links])
    windows = host_os_name() == "windows"
    python = Path(prefix, "Scripts" if windows else "bin", "python.exe" if windows else "python")
    return shlex.join([str(python), "-m", "pip", "uninstall", "lidguard"])


def missing_message(extra: str, what: str, missing: list[str]) -> str:
    return (f"{what} needs the optional '{extra}' packages (missing: {', '.join(missing)}); "
            f"install them with: {install_command(extra)}")


def require(extra: str, what: str) -> None:
    """Raises ``ExtraMissing`` (one line, the install command included) unless ``extra`` is importable."""
    missing = missing_modules(extra)
    if missing:
        raise ExtraMissing(missing_message(extra, what, missing))
