"""A new user-facing text must be marked for translation (issue 38.2): an AST scan of cli/, the settings
block and validation, and the tray model for literal (f-)strings handed to print, sys.stdout/stderr.write,
CliError/SettingsInputError, argparse's help=/description= and the status/doctor line lists. The texts
not marked yet (machine-read key=value lines, shell completion code, the modules not converted) are the
baseline ci/l10n_unmarked.txt: a text not in it fails here, and so does one it lists that is gone
(`python3 ci/l10n_catalogs.py unmarked --write` records the baseline again, on purpose)."""

from __future__ import annotations

from pathlib import Path

from .conftest import catalog_tool


def test_no_new_unmarked_text_and_no_stale_baseline_entry() -> None:
    tool = catalog_tool()
    found, known = set(tool.unmarked()), set(tool.read_baseline())
    assert sorted(found - known) == [], "mark these with lidguard.l10n._ (or N_ in a table)"
    assert sorted(known - found) == [], "gone or marked now: run python3 ci/l10n_catalogs.py unmarked --write"


def test_the_scan_finds_each_kind_of_sink_and_skips_marked_text(tmp_path: Path) -> None:
    tool = catalog_tool()
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "demo.py").write_text('''
import sys
from ..l10n import _

def run(parser, error, count):
    print("Hello there")
    print(_("Marked text"))
    print(f"Saved {count} files")
    print(_("Saved {count} files").format(count=count))
    sys.stderr.write(f"lidguard: cannot read {error}\\n")
    raise CliError("The thing went wrong." if count else _("Nothing"))
    parser.add_argument("--x", help="an option's help")
    parser.add_argument("--y", help=_("a marked help"))
    lines = []
    lines.append("Plain line")
    lines += [f"Count: {count}", _("Fine")]
    print("")
    print(f"  {count}: {error}")
''')
    found = tool.unmarked(tmp_path)
    assert found == sorted(["cli/demo.py: Hello there", "cli/demo.py: Saved {} files",
                            "cli/demo.py: lidguard: cannot read {}", "cli/demo.py: The thing went wrong.",
                            "cli/demo.py: an option's help", "cli/demo.py: Plain line", "cli/demo.py: Count: {}"])
