"""lidguard keeps a laptop awake while AI coding agents work and puts it to sleep when they are done."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Lazy: importlib.metadata costs ~20 ms, too much for the hook hot path.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("lidguard")
        except PackageNotFoundError:
            return "0.0.0+unknown"
    raise AttributeError(name)
