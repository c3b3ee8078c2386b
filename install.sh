#!/bin/sh
# Installs lidguard for this user from this folder, on any Python 3.11+, a distribution's own
# externally-managed Python included (Debian 12, Ubuntu 24.04): with pipx when it is installed, else in
# a private virtual environment. Either way `lidguard` and `lidguard-notify` end up in ~/.local/bin.
#
#   sh install.sh                       pipx if present, else a venv
#   sh install.sh --with notify,tray    also the optional parts (notify, tray, mcp; comma list or repeated)
#   LIDGUARD_INSTALL_METHOD=venv sh install.sh    (or =pipx) to choose
#   PYTHON=/path/to/python3 sh install.sh         another interpreter for the venv
set -eu
cd "$(dirname "$0")"
say() { printf 'install.sh: %s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

extras=""
add_extras() {
    for extra in $(printf '%s' "$1" | tr ',' ' '); do
        case "$extra" in
            notify|tray|mcp) case ",$extras," in *",$extra,"*) ;; *) extras="${extras:+$extras,}$extra" ;; esac ;;
            *) fail "--with takes notify, tray and mcp (a comma list), not '$extra'." ;;
        esac
    done
}
while [ $# -gt 0 ]; do
    case "$1" in
        --with) [ $# -ge 2 ] || fail "--with needs a value: --with notify,tray"; add_extras "$2"; shift 2 ;;
        --with=*) add_extras "${1#--with=}"; shift ;;
        -h|--help) sed -n '2,9p' install.sh | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) fail "unknown option '$1' (sh install.sh [--with notify,tray,mcp])." ;;
    esac
done
spec="."
[ -z "$extras" ] || spec=".[$extras]"

bin_dir="${PIPX_BIN_DIR:-$HOME/.local/bin}"
python="${PYTHON:-python3}"
method="${LIDGUARD_INSTALL_METHOD:-}"
case "$method" in
    "") if command -v pipx >/dev/null 2>&1; then method=pipx; else method=venv; fi ;;
    pipx|venv) ;;
    *) fail "LIDGUARD_INSTALL_METHOD must be pipx or venv, not '$method'." ;;
esac

if [ "$method" = pipx ]; then
    command -v pipx >/dev/null 2>&1 || fail "pipx is not installed (sudo apt install pipx, or brew install pipx)."
    say "installing with pipx${extras:+ (with $extras)}"
    PIPX_BIN_DIR="$bin_dir" pipx install --force "$spec" || fail "pipx install failed (see above)."
else
    venv="${XDG_DATA_HOME:-$HOME/.local/share}/lidguard/venv"
    command -v "$python" >/dev/null 2>&1 || fail "$python is not installed (Python 3.11 or newer is needed)."
    "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
        || fail "$python is older than 3.11; run with PYTHON=/path/to/python3.11-or-newer."
    say "installing into the virtual environment $venv${extras:+ (with $extras)}"
    "$python" -m venv --clear "$venv" >/dev/null 2>&1 \
        || fail "$python cannot create a virtual environment: install python3-venv (sudo apt install python3-venv) or pipx (sudo apt install pipx), then run this again."
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$spec" || fail "pip install failed (see above)."
    mkdir -p "$bin_dir"
    for command in lidguard lidguard-notify; do
        ln -sfn "$venv/bin/$command" "$bin_dir/$command"
    done
fi

[ -x "$bin_dir/lidguard" ] || fail "$bin_dir/lidguard is missing after the install."
say "installed $bin_dir/lidguard"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) say "$bin_dir is not on your PATH: add it (pipx ensurepath, or your shell's profile) to type just 'lidguard'." ;;
esac
