#!/usr/bin/env bash
# The release wheels of this runner's OS and architectures (release workflow), with cibuildwheel and the
# [tool.cibuildwheel] settings in pyproject.toml: CPython 3.11-3.13, manylinux x86_64/aarch64, macOS
# x86_64/arm64, Windows AMD64/ARM64; each wheel is tested by ci/wheel_smoke.py (every native module active).
#   bash ci/build-wheels.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: bash ci/build-wheels.sh OUT_DIR}"
python -m pip install -q "cibuildwheel>=2.22,<3"
# Each runner builds its own architecture (the workflow has a runner per OS and architecture): the other
# one would need emulation on Linux (no QEMU step) and only duplicate another runner's wheels elsewhere.
# CIBW_ARCHS set by the caller wins (pyproject.toml lists every architecture for a deliberate local run).
CIBW_ARCHS="${CIBW_ARCHS:-native}" python -m cibuildwheel --output-dir "$out" .
ls "$out"
