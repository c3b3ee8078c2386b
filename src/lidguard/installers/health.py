"""Does an installed hook command still run? (hook-status, doctor)

An agent runs the command it finds in its config with its own PATH, maybe from an IDE or a desktop
launcher: a hook that points at a deleted venv or a ``lidguard`` that is not on that PATH protects
nothing, silently. Here each distinct lidguard command found in a config file is resolved and run with
``--version`` within the hook budget; anything else is reported as ``broken: <why>``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from typing import Any

from .common import _is_lidguard, command_parts

__all__ = ["check_command", "installed_commands"]

_PLUGIN_COMMAND = re.compile(r"^const COMMAND = (\[.*\]);$", re.MULTILINE)


def _lidguard_prefix(words: list[str]) -> list[str] | None:
    """The words that start lidguard (``.../lidguard`` or ``python -m lidguard``), without the subcommand."""
    for index, word in enumerate(words):
        if _is_lidguard(word):
            return words[:index + 1]
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "lidguard":
            return words[:index + 2]
    return None


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > 64:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item, depth + 1)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item, depth + 1)]
    return []


def installed_commands(text: str | None, sub: str) -> list[list[str]]:
    """Each distinct lidguard argv (without ``sub``) in a config file's text (JSON, or our OpenCode plugin)."""
    if not text:
        return []
    candidates: list[list[str]] = []
    match = _PLUGIN_COMMAND.search(text)
    if match:
        try:
            argv = json.loads(match.group(1))
        except ValueError:
            argv = None
        if isinstance(argv, list) and argv and all(isinstance(word, str) for word in argv):
            candidates.append(argv)
    else:
        try:
            root = json.loads(text)
        except (ValueError, RecursionError):
            return []
        for command in _strings(root):
            words = command_parts(command)
            prefix = _lidguard_prefix(words)
            if prefix is not None and sub in words[len(prefix):len(prefix) + 1]:
                candidates.append(prefix)
    unique: list[list[str]] = []
    for argv in candidates:
        if argv not in unique:
            unique.append(argv)
    return unique


def check_command(argv: list[str], budget_seconds: float) -> str | None:
    """None when ``argv --version`` runs and prints a lidguard version in time, else why not. The native
    hook client (issue 36) runs the Python hook words after it: that program must exist too."""
    if len(argv) > 1 and os.path.basename(argv[0]) == "lidguard-hook":
        for word in argv[1:2]:
            if os.sep in word and not os.path.exists(word):
                return f"{word} does not exist"
    head = argv[0]
    if os.sep in head or (os.altsep and os.altsep in head):
        if not os.path.exists(head):
            return f"{head} does not exist"
        if not os.access(head, os.X_OK) or os.path.isdir(head):
            return f"{head} is not executable"
        resolved = head
    else:
        found = shutil.which(head)
        if found is None:
            return f"{head} is not on PATH (an agent started from another shell or launcher runs nothing)"
        resolved = found
    try:
        result = subprocess.run([resolved, *argv[1:], "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                                timeout=budget_seconds, check=False)
    except subprocess.TimeoutExpired:
        return f"{' '.join(argv)} --version did not answer within {budget_seconds:g} s"
    except OSError as error:
        return f"{head} cannot run: {error.strerror or error}"
    output = result.stdout.decode("utf-8", "replace").strip()
    if result.returncode != 0 or not output.lower().startswith("lidguard"):
        reason = (result.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {result.returncode}"])[-1]
        return f"{' '.join(argv)} --version failed: {reason[:200]}"
    return None
