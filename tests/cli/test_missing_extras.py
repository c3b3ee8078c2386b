"""A command behind a missing extra (``lidguard-notify``, ``lidguard tray``, the MCP servers) is one line on
stderr naming the exact install command for the way lidguard was installed, exit 1, no traceback
(issue 33, items 4 and 12).

Each case runs in a fresh virtual environment started with ``-I`` (console scripts as pip writes them,
with ``-I`` in the shebang): lidguard comes from this checkout (a ``.pth`` line), its dependencies from this
interpreter's site-packages, and the extra's packages are made absent by a ``.pth`` line that puts ``None``
in ``sys.modules`` for them (what an import of a package that is not installed sees: ModuleNotFoundError,
``find_spec`` None). The installed-from record is a ``lidguard-*.dist-info`` with a PEP 610
``direct_url.json`` naming the checkout, as pip and pipx write it for ``pip install .``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

import lidguard

SOURCE = Path(lidguard.__file__).resolve().parent.parent  # the folder holding the package
CHECKOUT = SOURCE.parent if SOURCE.name == "src" else SOURCE
EVERY_EXTRA = ("mcp", "starlette", "uvicorn", "jinja2", "pywebpush", "py_vapid", "cryptography", "PIL",
               "jeepney", "Xlib", "pystray")


def _make_venv(root: Path, *, pipx: bool, blocked: tuple[str, ...] = EVERY_EXTRA,
               installed_from: Path | None = CHECKOUT, editable: bool = False) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120,
                   capture_output=True)
    python = root / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    # Every site-packages folder this run imports from (a venv with --system-site-packages has two).
    dependencies = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"),
                                  *(entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages")))])
    (purelib / "lidguard-under-test.pth").write_text("\n".join([str(SOURCE), *dependencies]) + "\n")
    (purelib / "without-extras.pth").write_text(f"import sys; sys.modules.update(dict.fromkeys({list(blocked)!r}))\n")
    info = purelib / "lidguard-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lidguard\nVersion: 0.0.0\n")
    if installed_from is not None:
        record: dict[str, Any] = {"url": installed_from.as_uri(), "dir_info": {"editable": True} if editable else {}}
        (info / "direct_url.json").write_text(json.dumps(record))
    if pipx:
        (root / "pipx_metadata.json").write_text(json.dumps({"main_package": {"package": "lidguard"}}))
    for name, entry in (("lidguard", "lidguard.cli"), ("lidguard-notify", "lidguard.notify.cli")):
        script = root / "bin" / name
        script.write_text(f"#!{python} -I\nimport sys\nfrom {entry} import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return root


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("extras")
    return {"venv": _make_venv(root / "venv", pipx=False), "pipx": _make_venv(root / "pipx", pipx=True)}


def _run(venv: Path, command: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / command), *args], env=env, capture_output=True, text=True, timeout=120)


def _one_line(result: subprocess.CompletedProcess[str], prefix: str, text: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(prefix), result.stderr
    assert text in result.stderr, result.stderr
    assert result.stdout == "", result.stdout


def _expected(kind: str, venv: Path, extra: str) -> str:
    if kind == "pipx":
        return "install them with: " + shlex.join(["pipx", "install", "--force", f"{CHECKOUT}[{extra}]"])
    return "install them with: " + shlex.join([str(venv / "bin" / "python"), "-m", "pip", "install",
                                              f"{CHECKOUT}[{extra}]"])


@pytest.mark.parametrize("kind", ["venv", "pipx"])
def test_lidguard_notify_names_the_install_command(venvs: dict[str, Path], lidguard: Any, kind: str) -> None:
    venv = venvs[kind]
    config = lidguard.home / "notify.json"
    for args in (["serve", "--config", str(config)], ["init", "--config", str(config), "--public-base-url",
                                                       "http://127.0.0.1:8787"]):
        result = _run(venv, "lidguard-notify", *args, env=lidguard.env)
        _one_line(result, "lidguard-notify: lidguard-notify needs the optional 'notify' packages (missing: "
                  "starlette, uvicorn, jinja2, pywebpush, py_vapid, cryptography); ", _expected(kind, venv, "notify"))
    assert not config.exists()


@pytest.mark.parametrize("kind", ["venv", "pipx"])
def test_the_tray_names_the_install_command_and_its_help_works(venvs: dict[str, Path], lidguard: Any,
                                                                kind: str) -> None:
    venv = venvs[kind]
    env = {**lidguard.env, "DISPLAY": ":0"}
    result = _run(venv, "lidguard", "tray", env=env)
    _one_line(result, "lidguard: lidguard tray needs the optional 'tray' packages (missing: ",
              _expected(kind, venv, "tray"))
    for args in (["tray", "--help"], ["help", "tray"]):
        shown = _run(venv, "lidguard", *args, env=env)
        assert shown.returncode == 0 and shown.stderr == "", shown
        assert "usage: lidguard tray" in shown.stdout
        # argparse wraps the description, also after a hyphen of the path (pytest-of-\nlidguard-test): compared
        # without white space, or the test passed or failed by the length of pytest's folder number.
        wanted = "".join(_expected(kind, venv, "tray").removeprefix("install them with: ").split())
        assert wanted in "".join(shown.stdout.split()), shown.stdout
    listed = _run(venv, "lidguard", "help", env=env)
    assert any(line.split()[:1] == ["tray"] for line in listed.stdout.splitlines()), listed.stdout


@pytest.mark.parametrize("kind", ["venv", "pipx"])
def test_the_mcp_servers_name_the_install_command(venvs: dict[str, Path], lidguard: Any, kind: str) -> None:
    venv = venvs[kind]
    for args in (["mcp-server"], ["provider-mcp-server", "--provider-name", "pi"]):
        result = _run(venv, "lidguard", *args, env=lidguard.env)
        _one_line(result, "lidguard: The MCP server needs the optional 'mcp' packages (missing: mcp 2.3 or newer); ",
                  _expected(kind, venv, "mcp"))


def test_pipx_keeps_the_extras_already_installed(tmp_path: Path, lidguard: Any) -> None:
    """``pipx install --force`` rebuilds the environment from the spec: the line names every extra present."""
    for module in ("PIL", "jeepney", "Xlib"):
        pytest.importorskip(module)
    venv = _make_venv(tmp_path / "pipx", pipx=True, blocked=("starlette", "mcp"))
    result = _run(venv, "lidguard-notify", "serve", env=lidguard.env)
    _one_line(result, "lidguard-notify: ", "install them with: " + shlex.join(
        ["pipx", "install", "--force", f"{CHECKOUT}[notify,tray]"]))


def test_the_command_for_each_way_of_installing(tmp_path: Path) -> None:
    from lidguard.shared.extras import install_command

    plain = str(tmp_path / "usr")
    assert install_command("notify", prefix=plain, base_prefix=plain, source=("lidguard", False)) \
        == "pip install 'lidguard[notify]'"
    assert install_command("tray", prefix=plain, base_prefix=plain, source=("/src/lg", True)) \
        == "pip install -e '/src/lg[tray]'"
    venv = tmp_path / "venv"
    assert install_command("mcp", prefix=str(venv), base_prefix=plain, source=("lidguard", False)) \
        == f"{venv}/bin/python -m pip install 'lidguard[mcp]'"
    venv.mkdir()
    (venv / "pipx_metadata.json").write_text("{}")
    assert install_command("notify", prefix=str(venv), base_prefix=plain, source=("/src/lg", True)).startswith(
        "pipx install --force --editable '/src/lg[")
    assert install_command("notify", prefix=str(venv), base_prefix=plain, source=("lidguard", False)).startswith(
        "pipx install --force 'lidguard[")


def test_from_the_package_index_the_line_names_lidguard(tmp_path: Path, lidguard: Any) -> None:
    """No ``direct_url.json`` (installed from an index): the requirement is ``lidguard[extra]``."""
    venv = _make_venv(tmp_path / "venv", pipx=False, installed_from=None)
    result = _run(venv, "lidguard", "mcp-server", env=lidguard.env)
    _one_line(result, "lidguard: ", "install them with: " + shlex.join(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "lidguard[mcp]"]))


def test_the_remove_line_for_each_way_of_installing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lidguard uninstall``'s last line: the command that removes the program as it was installed."""
    from lidguard.shared.extras import remove_command

    plain = str(tmp_path / "usr")
    assert remove_command(prefix=plain, base_prefix=plain) == "pip uninstall lidguard"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("PIPX_BIN_DIR", raising=False)
    own = tmp_path / "data" / "lidguard" / "venv"  # install.sh's
    assert remove_command(prefix=str(own), base_prefix=plain) == \
        f"rm -r {own} {tmp_path}/.local/bin/lidguard {tmp_path}/.local/bin/lidguard-notify"
    other = tmp_path / "work" / ".venv"
    assert remove_command(prefix=str(other), base_prefix=plain) == f"{other}/bin/python -m pip uninstall lidguard"
    pipx = tmp_path / "pipx" / "venvs" / "lidguard"
    pipx.mkdir(parents=True)
    (pipx / "pipx_metadata.json").write_text("{}")
    assert remove_command(prefix=str(pipx), base_prefix=plain) == "pipx uninstall lidguard"
