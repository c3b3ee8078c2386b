"""``sh install.sh --with notify,tray`` installs the optional parts on both routes (issue 33.4).

The package tools are stand-ins that record what install.sh asks of them (a real install builds the
native modules: minutes on this machine; tests/cli/test_newcomer_walk.py does one): a ``pipx`` on PATH,
and for the venv route a ``PYTHON`` whose ``-m venv`` makes an environment whose python records its pip
line.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
INSTALL = CHECKOUT / "install.sh"

FAKE_PIPX = """#!/bin/sh
printf '%s\\n' "pipx $*" >> "$RECORD"
mkdir -p "$PIPX_BIN_DIR" && printf '#!/bin/sh\\n' > "$PIPX_BIN_DIR/lidguard" && chmod +x "$PIPX_BIN_DIR/lidguard"
"""
# -c (the version check) passes; -m venv --clear DIR makes DIR/bin with a recording python and the scripts.
FAKE_PYTHON = """#!/bin/sh
case "$1" in
    -c) exit 0 ;;
    -m) [ "$2" = venv ] || exit 2; dir="$4"; mkdir -p "$dir/bin"
        printf '#!/bin/sh\\nprintf "%%s\\\\n" "venv-python $*" >> "$RECORD"\\n' > "$dir/bin/python"
        printf '#!/bin/sh\\n' > "$dir/bin/lidguard"; printf '#!/bin/sh\\n' > "$dir/bin/lidguard-notify"
        chmod +x "$dir/bin/python" "$dir/bin/lidguard" "$dir/bin/lidguard-notify" ;;
esac
"""


def _tools(tmp_path: Path) -> dict[str, str]:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "pipx").write_text(FAKE_PIPX)
    (tools / "python3-fake").write_text(FAKE_PYTHON)
    for name in ("pipx", "python3-fake"):
        (tools / name).chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(home), "RECORD": str(tmp_path / "rec"),
            "PIPX_BIN_DIR": str(home / ".local" / "bin"), "XDG_DATA_HOME": str(home / "data"),
            "PYTHON": str(tools / "python3-fake")}


def _install(env: dict[str, str], *args: str, method: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(INSTALL), *args], env={**env, "LIDGUARD_INSTALL_METHOD": method},
                          capture_output=True, text=True, timeout=60)


def _recorded(env: dict[str, str]) -> list[str]:
    record = Path(env["RECORD"])
    lines = record.read_text().splitlines() if record.exists() else []
    record.unlink(missing_ok=True)
    return lines


@pytest.mark.parametrize("method", ["pipx", "venv"])
def test_with_installs_the_extras(tmp_path: Path, method: str) -> None:
    env = _tools(tmp_path)
    for args, spec in ((["--with", "notify,tray"], ".[notify,tray]"), (["--with=tray", "--with", "notify,tray"],
                                                                       ".[tray,notify]"), ([], ".")):
        result = _install(env, *args, method=method)
        assert result.returncode == 0, result
        expected = (f"pipx install --force {spec}" if method == "pipx"
                    else f"venv-python -m pip install -q --disable-pip-version-check {spec}")
        assert _recorded(env) == [expected]
        if spec != ".":
            assert f"(with {spec[2:-1]})" in result.stdout


def test_a_bad_with_is_one_line_and_installs_nothing(tmp_path: Path) -> None:
    env = _tools(tmp_path)
    for args, text in ((["--with", "gpu"], "--with takes notify, tray and mcp (a comma list), not 'gpu'."),
                       (["--with"], "--with needs a value"), (["--yes"], "unknown option '--yes'")):
        result = _install(env, *args, method="pipx")
        assert result.returncode == 1 and result.stderr.count("\n") == 1 and text in result.stderr, result
        assert _recorded(env) == []
    shown = _install(env, "--help", method="pipx")
    assert shown.returncode == 0 and "--with notify,tray" in shown.stdout and _recorded(env) == []
