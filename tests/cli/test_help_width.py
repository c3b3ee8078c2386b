"""`lidguard help` and every command's --help fit 100 columns, on a wide terminal too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lidguard.cli.full import build_parser


def commands() -> list[str]:
    import argparse

    parser = build_parser()
    return sorted(next(action for action in parser._actions
                       if isinstance(action, argparse._SubParsersAction)).choices)


@pytest.mark.parametrize("columns", ["", "250"])
def test_help_fits_100_columns(lidguard, columns):
    env = {**lidguard.env, "COLUMNS": columns}
    # One process prints every help text (a process per command would be slow on a loaded machine).
    probe = ("import contextlib, io, sys\nfrom lidguard.cli import main\n"
             "for args in [['help'], *[[name, '--help'] for name in sys.argv[1:]]]:\n"
             "    out = io.StringIO()\n"
             "    with contextlib.redirect_stdout(out):\n"
             "        main(args)\n"
             "    for line in out.getvalue().splitlines():\n"
             "        if len(line) > 100:\n"
             "            print(' '.join(args), len(line), line)\n")
    result = subprocess.run([sys.executable, "-c", probe, *commands()], env=env, text=True, capture_output=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
