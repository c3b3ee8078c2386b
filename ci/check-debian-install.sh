#!/usr/bin/env bash
# The README's install command, run as a newcomer on stock Debian 12 / Ubuntu 24.04 would: Debian's own
# /usr/bin/python3 (EXTERNALLY-MANAGED: `pip install` into it is refused), a clean HOME, the distro's
# PATH, nothing of this checkout's environment. Then `lidguard doctor` from the installed command.
# Both routes of install.sh: pipx, and a plain venv. Installs pipx and python3-venv with apt-get when
# missing (it needs root or sudo then). Exit 0 = the README works.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=/usr/bin/python3
[ -x "$python" ] || { echo "check-debian-install: $python is missing (not a Debian/Ubuntu system)"; exit 1; }
marker=$("$python" -c 'import os, sysconfig; print(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))')
[ -f "$marker" ] || { echo "check-debian-install: $python has no $marker (not the stock distro Python)"; exit 1; }

if [ ! -x /usr/bin/pipx ] || ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
    as_root=(); [ "$(id -u)" -eq 0 ] || as_root=(sudo -n)
    "${as_root[@]}" apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q pipx python3-venv >/dev/null
fi

# The README's first sh block under "Install and check this machine" is the command under test.
command=$(awk '/^## Install and check this machine/{section=1} section && /^```sh$/{block=1; next}
               block && /^```$/{exit} block{print}' README.md)
[ "$(printf '%s\n' "$command" | wc -l)" -eq 1 ] && [ -n "$command" ] \
    || { echo "check-debian-install: the README's install command is not one line: $command"; exit 1; }
case "$command" in *"lidguard doctor"*) ;; *) echo "check-debian-install: no doctor in: $command"; exit 1;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for method in pipx venv; do
    home="$work/home-$method"
    mkdir -m 700 "$home"
    # A login shell's environment on a stock system: the distro PATH (so python3 and pipx are Debian's),
    # pip's own index settings kept (a mirror or proxy), nothing of lidguard's or this checkout's.
    clean_env=(env -i HOME="$home" USER="${USER:-$(id -un)}" LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
               PIPX_DEFAULT_PYTHON="$python" TMPDIR="${TMPDIR:-/tmp}" LIDGUARD_INSTALL_METHOD="$method")
    for name in $(compgen -e | grep -E '^(PIP_|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY)' || true); do
        clean_env+=("$name=${!name}")
    done

    echo "check-debian-install: \$ $command   (route: $method, python: $python, HOME: $home)"
    set +e
    "${clean_env[@]}" bash -c "cd '$repo' && $command" >"$work/out.txt" 2>"$work/err.txt"
    status=$?
    set -e
    # doctor exits 1 when this machine cannot be protected (no logind in a container): the install
    # worked if doctor ran and ended with its verdict.
    verdict=$(grep '^Verdict: ' "$work/out.txt" | tail -1 || true)
    if [ "$status" -gt 1 ] || [ -z "$verdict" ]; then
        echo "check-debian-install: FAILED ($method, exit $status)"; tail -30 "$work/err.txt"; tail -30 "$work/out.txt"
        exit 1
    fi
    installed=$(find "$home/.local" -name pyvenv.cfg -path "*lidguard*" | head -1)
    [ -n "$installed" ] && grep -q "^home = /usr/bin$" "$installed" \
        || { echo "check-debian-install: lidguard was not installed on $python ($method: $installed)"; exit 1; }
    head -1 "$work/out.txt"
    echo "check-debian-install: OK ($method) - $verdict (doctor exit $status)"
done
