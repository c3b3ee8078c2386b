#!/usr/bin/env bash
# Builds the sdist and the Linux wheel, installs the wheel into a clean venv and checks that
# `lidguard doctor --json` reports every native module active; then checks that
# LIDGUARD_NO_EXTENSIONS=1 builds a pure wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m pip install -q build
LIDGUARD_REQUIRE_EXTENSIONS=1 python3 -m build --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/lidguard-*.whl)
sdist=$(ls "$work"/dist/lidguard-*.tar.gz)
tar -tzf "$sdist" >"$work/sdist-files.txt"  # to a file: grep -q closing a pipe breaks pipefail
grep -q "^lidguard-[^/]*/LICENSE$" "$work/sdist-files.txt" || { echo "sdist lacks LICENSE"; exit 1; }
python3 -m zipfile -l "$wheel" >"$work/wheel-files.txt"
for module in "_native/_proctree.*\.so" "_native/_logind\.py" "dist-info/licenses/LICENSE"; do
    grep -q "$module" "$work/wheel-files.txt" || { echo "wheel lacks $module"; exit 1; }
done

# A clean venv: nothing from a development PYTHONPATH (a source tree's egg-info would make pip skip the wheel).
unset PYTHONPATH
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel"
env -u LIDGUARD_PLATFORM HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_RUNTIME_DIR="$work/home/run" \
    "$work/venv/bin/lidguard" doctor --json >"$work/doctor.json" \
    || [ $? -eq 1 ]  # 1: this machine cannot be protected (no logind in a container); the report is complete
"$work/venv/bin/python" - "$work/doctor.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
inactive = [m for m in report["nativeModules"] if not m["active"]]
assert report["platform"] == "linux", report["platform"]
assert not inactive, f"native modules inactive in the installed wheel: {inactive}"
print("wheel OK:", ", ".join(f"{m['name']} ({m['reason']})" for m in report["nativeModules"]))
PY

LIDGUARD_NO_EXTENSIONS=1 python3 -m build --wheel --outdir "$work/pure" . >"$work/pure.log" 2>&1 \
    || { tail -40 "$work/pure.log"; exit 1; }
python3 -m zipfile -l "$work"/pure/lidguard-*.whl >"$work/pure-files.txt"
if grep -q "\.so" "$work/pure-files.txt"; then
    echo "LIDGUARD_NO_EXTENSIONS=1 wheel contains compiled modules"; exit 1
fi
echo "pure wheel OK: $(basename "$work"/pure/lidguard-*.whl)"
