#!/usr/bin/env bash
# Sets up gpuport in .venv. With --test, also what the test suite needs: Debian's HIP compiler
# and HIP libraries, Chromium for the HTML report test, CUDA library headers for nvcc, and a
# local wheelhouse of gpuport's dependencies for the packaging tests.
# Idempotent: a second run only checks. Needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1
PY=${PYTHON:-python3}
log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

if [ "$want_test" = 1 ]; then
  # Debian packages: hipcc + HIP headers/libraries (translation oracle), chromium (HTML report test).
  apt_pkgs=(hipcc libamdhip64-dev libhiprand-dev librocrand-dev libhipsparse-dev librocsparse-dev
            librocprim-dev chromium)
  missing=()
  for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  $PY -m venv .venv
fi
if [ "$want_test" = 1 ]; then
  stamp=.venv/.gpuport-installed-dev; spec=".[dev,bench]"; what="gpuport with its test tools"
else
  stamp=.venv/.gpuport-installed; spec="."; what="gpuport"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  log "installing $what into .venv"
  if [ "$want_test" = 1 ]; then
    # bench/verify's tests run on PyTorch's CPU build. The exact pin takes the CPU wheel; the
    # bench extra's `torch>=2.4` is then already met, so pip never fetches a CUDA build.
    .venv/bin/python -m pip install -q --disable-pip-version-check "torch==${GPUPORT_TORCH:-2.13.0}"
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec"
  touch "$stamp"
fi

if [ "$want_test" = 1 ] && [ -x scripts/wheelhouse.sh ]; then
  # The packaging tests install the built wheel, and pre-commit the hook, offline from here.
  scripts/wheelhouse.sh
fi

if [ "$want_test" = 1 ] && [ -x scripts/cuda_headers.sh ]; then
  scripts/cuda_headers.sh
fi
