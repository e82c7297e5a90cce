#!/usr/bin/env bash
# Fills a local wheelhouse with gpuport's runtime dependencies and its build backend, so that the
# packaging tests (tests/packaging) install the built wheel into a fresh venv, and pre-commit
# installs the hook repository, with `pip --no-index --find-links` and no network.
#
# The requirements come from pyproject.toml ([project] dependencies and [build-system] requires),
# so the wheelhouse follows them. Idempotent: a second run with the same requirements only checks.
# GPUPORT_WHEELHOUSE overrides the destination (default .cache/wheelhouse).
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${GPUPORT_WHEELHOUSE:-.cache/wheelhouse}
PY=${PYTHON:-.venv/bin/python}
reqs=$("$PY" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    data = tomllib.load(f)
for req in data["project"]["dependencies"] + data["build-system"]["requires"]:
    print(req)
PY
)
stamp="$dest/.requirements"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$reqs" ]; then
  exit 0
fi
printf '\033[1msetup:\033[0m %s\n' "filling the wheelhouse $dest for the packaging tests" >&2
mkdir -p "$dest"
mapfile -t req_list <<<"$reqs"
"$PY" -m pip download -q --disable-pip-version-check --only-binary :all: -d "$dest" "${req_list[@]}"
printf '%s' "$reqs" >"$stamp"
