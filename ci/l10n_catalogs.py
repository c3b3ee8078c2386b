"""The message catalogs of src/lidguard/l10n (issue 38.2), stdlib only: extract, update, merge, compile, check.

    python3 ci/l10n_catalogs.py extract            print every marked message id (one per line, escaped)
    python3 ci/l10n_catalogs.py update             add new ids to every .po (empty translation), drop gone ones
    python3 ci/l10n_catalogs.py merge FILE...      take translations from a batch file (below) into the .po files
    python3 ci/l10n_catalogs.py compile            .po -> .mo (committed; the wheel ships them as package data)
    python3 ci/l10n_catalogs.py check              exit 1 listing what is missing, untranslated, stale or broken
    python3 ci/l10n_catalogs.py unmarked [--write] user-facing literals not marked for translation, against
                                                   ci/l10n_unmarked.txt (--write: record today's as the baseline)

A message id is the literal argument of ``_("...")`` or ``N_("...")`` in src/lidguard (Python source), or
``_("...")`` inside a Jinja template string (notify/pages.py). A batch file for ``merge`` holds blocks
separated by blank lines: ``= <English>`` then ``<culture>: <translation>`` lines (``\\n`` is a new line).
Babel is not needed: the .po format here is the plain subset (no plurals, no contexts) gettext reads.
"""

from __future__ import annotations

import ast
import re
import string
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "lidguard"
LOCALE = SOURCE / "l10n" / "locale"
CULTURES = ("ko", "ja", "zh-Hans", "zh-Hant")
DOMAIN = "lidguard"
_TEMPLATE_CALL = re.compile(r"""_\("((?:[^"\\]|\\.)*)"\)""")
HEADER = ("Project-Id-Version: lidguard\nLanguage: {culture}\nMIME-Version: 1.0\n"
          "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n"
          "Plural-Forms: nplurals=1; plural=0;\n")


def extract(source: Path = SOURCE) -> dict[str, list[str]]:
    """Every message id -> where it is marked (``path:line``), in order of first appearance."""
    found: dict[str, list[str]] = {}
    for path in sorted(source.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(source.parent).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_"):
                if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
                        and isinstance(node.args[0].value, str):
                    found.setdefault(node.args[0].value, []).append(f"{where}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "{{" in node.value:
                for match in _TEMPLATE_CALL.finditer(node.value):
                    text = match.group(1).encode().decode("unicode_escape").encode("latin-1").decode()
                    found.setdefault(text, []).append(f"{where}:{node.lineno}")
    return found


def _unquote(text: str) -> str:
    body = text.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ValueError(f"not a quoted string: {text!r}")
    out, index, body = [], 0, body[1:-1]
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}
    while index < len(body):
        character = body[index]
        if character == "\\":
            index += 1
            out.append(escapes[body[index]])
        elif character == '"':
            raise ValueError(f"an unescaped quote in {text!r}")
        else:
            out.append(character)
        index += 1
    return "".join(out)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def read_po(path: Path) -> dict[str, str]:
    """msgid -> msgstr (the header under ""). Comments and flags are ignored; no plurals, no contexts."""
    entries: dict[str, str] = {}
    key: str | None = None
    current: list[str] | None = None
    msgid: list[str] = []
    msgstr: list[str] = []

    def flush() -> None:
        if key == "msgstr":
            identifier = "".join(msgid)
            if identifier in entries:
                raise ValueError(f"{path}: duplicate msgid {identifier!r}")
            entries[identifier] = "".join(msgstr)

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        try:
            if not stripped or stripped.startswith("#"):
                continue
            if stripped.startswith("msgid "):
                flush()
                msgid, msgstr, key = [_unquote(stripped[6:])], [], "msgid"
                current = msgid
            elif stripped.startswith("msgstr "):
                if key != "msgid":
                    raise ValueError("msgstr without msgid")
                msgstr, key = [_unquote(stripped[7:])], "msgstr"
                current = msgstr
            elif stripped.startswith('"') and current is not None:
                current.append(_unquote(stripped))
            else:
                raise ValueError(f"unexpected line: {stripped!r}")
        except (ValueError, KeyError) as error:
            raise ValueError(f"{path}:{number}: {error}") from error
    flush()
    return entries


def write_po(path: Path, culture: str, entries: dict[str, str], where: dict[str, list[str]]) -> None:
    lines = ["# lidguard messages (English source) - " + culture, "msgid \"\"", "msgstr \"\""]
    lines += [_quote(line + "\n") for line in HEADER.format(culture=culture).splitlines()]
    for identifier, text in entries.items():
        if identifier == "":
            continue
        lines.append("")
        lines += [f"#: {place}" for place in where.get(identifier, [])[:3]]
        if fields(identifier):
            lines.append("#, python-brace-format")
        lines.append(f"msgid {_quote(identifier)}")
        lines.append(f"msgstr {_quote(text)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def mo_bytes(entries: dict[str, str]) -> bytes:
    """GNU .mo (little-endian, no hash table) of the translated entries, sorted: the same bytes every time."""
    items = sorted((key.encode(), value.encode()) for key, value in entries.items() if value or key == "")
    count = len(items)
    ids_start = 7 * 4
    strs_start = ids_start + count * 8
    data_start = strs_start + count * 8
    ids_table, strs_table, data = [], [], bytearray()
    for key, _value in items:
        ids_table.append((len(key), data_start + len(data)))
        data += key + b"\0"
    for _key, value in items:
        strs_table.append((len(value), data_start + len(data)))
        data += value + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, count, ids_start, strs_start, 0, data_start)
    tables = b"".join(struct.pack("<2I", *pair) for pair in ids_table + strs_table)
    return header + tables + bytes(data)


def po_path(culture: str, locale: Path = LOCALE) -> Path:
    return locale / culture / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(culture: str, locale: Path = LOCALE) -> Path:
    return locale / culture / "LC_MESSAGES" / f"{DOMAIN}.mo"


def _wide_punctuation(character: str) -> bool:
    """Full-width punctuation (``、``, ``（``): CJK needs no space beside it."""
    import unicodedata

    return bool(character) and unicodedata.east_asian_width(character) in ("W", "F") \
        and unicodedata.category(character).startswith("P")


def _edges(text: str) -> tuple[str, str]:
    """The leading and trailing white space a translation keeps (the settings block's indentation)."""
    return text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]


# No space flag: "{floor} % until" is a percent sign in prose (no help text uses "% d"-style conversions).
_PERCENT_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0+]*[0-9]*(?:\.[0-9]+)?[diouxXeEfFgGcrsa%]")


def percent_fields(text: str) -> list[str]:
    """argparse's ``%`` placeholders (``%s``, ``%(value)r``) and every other ``%`` (a help text is
    ``%``-formatted: a ``%`` a translation adds breaks it), in order."""
    found = _PERCENT_FIELD.findall(text)
    bare = text.count("%") - sum(item.count("%") for item in found)
    return sorted(found) + ["%"] * bare


def fields(text: str) -> set[str]:
    """The ``str.format`` fields of a message (``{name}``, ``{count:d}``), as written."""
    result = set()
    for _literal, name, spec, conversion in string.Formatter().parse(text):
        if name is not None:
            result.add(f"{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}")
    return result


def _catalog(culture: str) -> dict[str, str]:
    path = po_path(culture)
    entries = read_po(path) if path.exists() else {}
    entries.setdefault("", HEADER.format(culture=culture))
    return entries


def update() -> None:
    where = extract()
    for culture in CULTURES:
        old = _catalog(culture)
        entries = {"": HEADER.format(culture=culture), **{key: old.get(key, "") for key in where}}
        write_po(po_path(culture), culture, entries, where)


def read_batch(path: Path) -> dict[str, dict[str, str]]:
    """``= English`` blocks -> {English: {culture: text}}."""
    result: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None

    def unescape(text: str) -> str:
        return text.replace("\\\\", "\0").replace("\\n", "\n").replace("\0", "\\")

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip("\n")
        if not line.strip():
            current = None
            continue
        if line.startswith("= "):
            current = result.setdefault(unescape(line[2:]), {})
            continue
        culture, sep, text = line.partition(": ")
        if current is None or not sep or culture not in CULTURES:
            raise ValueError(f"{path}:{number}: expected '= English' or '<culture>: text', got {line!r}")
        current[culture] = unescape(text)
    return result


def merge(paths: list[Path]) -> list[str]:
    where = extract()
    unknown = []
    batches: dict[str, dict[str, str]] = {}
    for path in paths:
        batches.update(read_batch(path))
    for english in batches:
        if english not in where:
            unknown.append(english)
    for culture in CULTURES:
        entries = _catalog(culture)
        merged = {"": entries[""], **{key: entries.get(key, "") for key in where}}
        for english, texts in batches.items():
            if english in merged and culture in texts:
                merged[english] = texts[culture]
        write_po(po_path(culture), culture, merged, where)
    return unknown


def compile_all() -> None:
    for culture in CULTURES:
        mo_path(culture).write_bytes(mo_bytes(_catalog(culture)))


def problems(locale: Path = LOCALE, source: Path = SOURCE) -> list[str]:
    """What makes the catalogs not ready: a missing or untranslated id, a changed placeholder or
    indentation, an obsolete id, a .mo that is not the .po compiled."""
    where = extract(source)
    found: list[str] = []
    for culture in CULTURES:
        try:
            entries = read_po(po_path(culture, locale))
        except (OSError, ValueError) as error:
            found.append(f"{culture}: {error}")
            continue
        for identifier in where:
            text = entries.get(identifier)
            if text is None:
                found.append(f"{culture}: missing {identifier!r} ({where[identifier][0]})")
            elif not text:
                found.append(f"{culture}: untranslated {identifier!r} ({where[identifier][0]})")
            elif fields(text) != fields(identifier):
                found.append(f"{culture}: placeholders differ in {identifier!r}: {sorted(fields(text))}")
            elif percent_fields(text) != percent_fields(identifier):
                found.append(f"{culture}: % placeholders or signs differ in {identifier!r}: {percent_fields(text)}")
            elif (_edges(text)[0] != _edges(identifier)[0] and not (_edges(identifier)[0] == " "
                                                                    and _wide_punctuation(text[:1]))) \
                    or (_edges(text)[1] != _edges(identifier)[1] and not _wide_punctuation(text[-1:])):
                found.append(f"{culture}: leading or trailing white space differs in {identifier!r}")
        found += [f"{culture}: obsolete {identifier!r}" for identifier in entries if identifier and
                  identifier not in where]
        mo = mo_path(culture, locale)
        if not mo.exists() or mo.read_bytes() != mo_bytes(entries):
            found.append(f"{culture}: {mo} is not compiled from the .po (run: python3 ci/l10n_catalogs.py compile)")
    return found


# What the unmarked-text scan reads: every module that prints to a person (issue 38.2).
SCANNED = ("cli/*.py", "settings/display.py", "settings/validation.py", "tray/model.py")
BASELINE = ROOT / "ci" / "l10n_unmarked.txt"
_WORD = re.compile(r"[A-Za-z]{2,}")
_SINK_CALLS = {"print", "CliError", "SettingsInputError"}
_SINK_KEYWORDS = {"help", "description", "epilog"}
_LINE_LISTS = {"lines", "tail", "entries", "hints"}


def _has_words(text: str) -> bool:
    """A word to translate: two letters or more, the product's name aside."""
    return bool(_WORD.search(re.sub(r"lidguard", "", text, flags=re.IGNORECASE)))


def _bare_text(node: ast.AST) -> str | None:
    """The literal text of an unmarked user-facing expression (``{}`` for each interpolation), else None:
    a string or f-string with a word in it, or a ``+``/conditional made of one. A call (``_()``, a
    formatter) or a name is not bare."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if _has_words(node.value) else None
    if isinstance(node, ast.JoinedStr):
        text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        literal = "".join(part.value for part in node.values if isinstance(part, ast.Constant))
        return text if _has_words(literal) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for side in (node.left, node.right):
            found = _bare_text(side)
            if found is not None:
                return found
    if isinstance(node, ast.IfExp):
        for side in (node.body, node.orelse):
            found = _bare_text(side)
            if found is not None:
                return found
    return None


def _sink_values(node: ast.AST) -> list[ast.AST]:
    """The expressions a call hands to a person: print/CliError/SettingsInputError's first argument,
    ``sys.stdout``/``sys.stderr`` ``.write``, ``help=``/``description=``, ``lines.append(...)`` and the
    items of ``lines += [...]``."""
    values: list[ast.AST] = []
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in _SINK_CALLS and node.args:
            values.append(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute) \
                and func.value.attr in ("stdout", "stderr") and node.args:
            values.append(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name) \
                and func.value.id in _LINE_LISTS and node.args:
            values.append(node.args[0])
        values += [keyword.value for keyword in node.keywords if keyword.arg in _SINK_KEYWORDS]
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in _LINE_LISTS \
            and isinstance(node.value, ast.List):
        values += node.value.elts
    return values


def unmarked(source: Path = SOURCE) -> list[str]:
    """``<module>: <text>`` for each unmarked user-facing literal of the scanned modules, sorted."""
    found: set[str] = set()
    for pattern in SCANNED:
        for path in sorted(source.glob(pattern)):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = path.relative_to(source).as_posix()
            for node in ast.walk(tree):
                for value in _sink_values(node):
                    text = _bare_text(value)
                    if text is not None:
                        found.add(f"{where}: {' '.join(text.split())}")
    return sorted(found)


def read_baseline() -> list[str]:
    if not BASELINE.exists():
        return []
    return [line for line in BASELINE.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "extract":
        for identifier in extract():
            print(identifier.encode("unicode_escape").decode())
    elif command == "update":
        update()
    elif command == "merge":
        unknown = merge([Path(name) for name in argv[1:]])
        for text in unknown:
            print(f"not a message id (ignored): {text!r}")
    elif command == "compile":
        compile_all()
    elif command == "unmarked":
        found = unmarked()
        if argv[1:] == ["--write"]:
            BASELINE.write_text("# Unmarked user-facing texts known today (python3 ci/l10n_catalogs.py unmarked "
                                "--write); a new one fails tests/l10n/test_marked_texts.py.\n"
                                + "".join(line + "\n" for line in found), encoding="utf-8")
        known = set(read_baseline())
        for line in found:
            if line not in known:
                print(f"new: {line}")
        return 1 if any(line not in known for line in found) else 0
    elif command == "check":
        found = problems()
        for line in found:
            print(line)
        return 1 if found else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
