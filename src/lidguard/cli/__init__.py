"""The `lidguard` command line. Errors are one line on stderr with exit code 1.

``main`` stays import-light: hook commands (``cli/fast.py``) run without argparse, pydantic or the
runtime; everything else goes to the full parser (``cli/full.py``).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "print_version"]

VERSION_COMMANDS = ("--version", "version")
# Agent hooks (hooks/runner.py, one `<agent>-hook` per agent of lidguard.agents.AGENTS): dispatched before
# anything else, stdlib only, always exit 0.


def _(message: str) -> str:
    """``lidguard.l10n._``, imported only when a message is shown (never on the hook path)."""
    from ..l10n import _ as translate

    return translate(message)


def _is_hook_command(word: str) -> bool:
    if not word.lower().endswith("-hook"):
        return False
    from ..agents import agent_for_hook_command

    return agent_for_hook_command(word) is not None


def print_version() -> int:
    from .. import __version__

    sys.stdout.write(f"lidguard {__version__}\n")
    return 0


def _another_runtime_holds_the_lock() -> bool:
    """A cheap, stdlib-only look at the single-instance lock. Many clients may launch a runtime at
    once; the losers must not pay for importing the runtime. ``run_server`` still decides for real."""
    from ..platform.locking import held_by_another_process
    from ..platform.paths import resolve_paths

    try:
        return held_by_another_process(resolve_paths().lock_file)
    except ValueError:  # RuntimeDirError: run_server reports it
        return False


def _take_ui_culture(arguments: list[str]) -> list[str]:
    """``--ui-culture VALUE`` (or ``=VALUE``) anywhere: this run's language (``lidguard.l10n``). The
    ``settings`` command keeps it too: there it also sets the stored ``UiCulture``."""
    from .output import CliError

    rest: list[str] = []
    keep = bool(arguments) and arguments[0].lower() == "settings"
    index = 0
    while index < len(arguments):
        token = arguments[index]
        name, equals, value = token.partition("=")
        if name.lower() != "--ui-culture":
            rest.append(token)
            index += 1
            continue
        if not equals:
            if index + 1 >= len(arguments):
                raise CliError(_("The --ui-culture option needs a value: auto, en, ko, ja, zh-Hans or zh-Hant."))
            value = arguments[index + 1]
        from .. import l10n

        if value.strip().lower() != "auto" and l10n.normalize_culture(value) is None:
            raise CliError(_("Unknown UI culture: {value} (use auto, en, ko, ja, zh-Hans or zh-Hant).").format(
                value=value))
        l10n.set_culture(value)
        if keep:
            rest += arguments[index:index + (1 if equals else 2)]
        index += 1 if equals else 2
    return rest


def _dispatch(arguments: list[str]) -> int:
    from .output import CliError, escape_control

    try:
        if any(token.lower().startswith("--ui-culture") for token in arguments):
            arguments = _take_ui_culture(arguments)
        asks_help = any(token.lower() in ("--help", "-h") for token in arguments[1:])
        if arguments and arguments[0].lower() in VERSION_COMMANDS and not asks_help:
            if len(arguments) > 1:
                raise CliError(_("Unexpected argument: {value}").format(value=arguments[1]))
            return print_version()
        from .fast import run_fast

        code = run_fast(arguments)
        if code is not None:
            return code
        from .full import run_full

        return run_full(arguments)
    except CliError as error:
        sys.stderr.write(f"lidguard: {escape_control(str(error))}\n")
        return 1
    except (ImportError, ValueError) as error:
        if not _is_readable(error):
            raise
        sys.stderr.write(f"lidguard: {escape_control(str(error))}\n")
        return 1


def _is_readable(error: Exception) -> bool:
    """Errors whose message is one readable line for the user: a required compiled module that cannot
    be used (LIDGUARD_REQUIRE_EXTENSIONS), a bad LIDGUARD_* switch, an unsafe runtime folder."""
    from ..platform.paths import RuntimeDirError
    from ..switches import RequiredExtensionError, SwitchError

    return isinstance(error, (RequiredExtensionError, SwitchError, RuntimeDirError))


def _silence_stdout() -> None:
    """The reader went away (``lidguard status | head -1``): drop what is left, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _run(arguments: list[str]) -> int:
    try:
        return _dispatch(arguments)
    except SystemExit as stop:  # argparse: --help, usage errors
        return stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    except KeyboardInterrupt:
        sys.stderr.write(_("lidguard: interrupted") + "\n")
        return 130
    except BrokenPipeError:
        raise
    except Exception as error:  # last resort: still one readable line
        from .output import escape_control

        sys.stderr.write(_("lidguard: unexpected error: {kind}: {error}").format(
            kind=type(error).__name__, error=escape_control(str(error))) + "\n")
        return 1


def _run_hook(arguments: list[str]) -> int:
    try:
        from ..hooks.runner import run_hook_command

        run_hook_command(arguments)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except Exception:  # noqa: BLE001 - run_hook_command logs its own errors; a hook never fails its agent
        pass
    return 0


def _exit_now(code: int) -> None:
    """Ends a hook process without the interpreter's shutdown (module teardown and garbage collection of
    everything imported: 2-3 ms of a PreToolUse hook in a fresh venv, more than all its own imports).
    Nothing is left to run: the output is flushed here, log lines went out with ``os.write``, a launched
    runtime is detached, no thread or atexit handler."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None or sys.stderr is None:  # started with a closed stdout/stderr (`>&-`): still work
        devnull = open(os.devnull, "w")  # lives as long as the process
        sys.stdout = sys.stdout or devnull
        sys.stderr = sys.stderr or devnull
    if arguments and _is_hook_command(arguments[0]) and not any(
            token.lower() in ("--help", "-h") for token in arguments[1:]):
        code = _run_hook(arguments)
        if argv is None:  # the console script: this process ends here
            _exit_now(code)
        return code
    if arguments == ["run-server"] and _another_runtime_holds_the_lock():
        # REFERENCE 3.2: a second run-server exits 0 at once (before loading the runtime), and says why.
        sys.stdout.write(_("LidGuard runtime is already running for this user; this run-server exits.") + "\n")
        return 0
    try:
        code = _run(arguments)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 0
    return code
