#!/usr/bin/env bash
# The GitHub release of a tag (release workflow, after PyPI): notes from CHANGELOG.md's section of the
# version, every built file attached. Needs the gh CLI and GH_TOKEN (the workflow's own token).
#   bash ci/github-release.sh vX.Y.Z DIST_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:?usage: bash ci/github-release.sh vX.Y.Z DIST_DIR}"
dist="${2:?usage: bash ci/github-release.sh vX.Y.Z DIST_DIR}"
notes="$(mktemp)"
python3 ci/changelog_section.py "${tag#v}" >"$notes"
gh release create "$tag" --title "lidguard ${tag#v}" --notes-file "$notes" "$dist"/*
