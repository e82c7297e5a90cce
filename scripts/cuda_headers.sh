#!/usr/bin/env bash
# Fetches the CUDA 13 library headers (cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, NVRTC, NCCL)
# that nvcc needs to compile tests/corpus, from NVIDIA's wheels on PyPI, keeping only the
# headers. The wheels are mostly shared libraries, so each one is deleted once its
# nvidia/cu13/include/ has been unpacked into .cache/cuda-headers/include/.
#
# Idempotent and silent when the headers are already there. Prints the include folder when
# it did work, or always with --print. GPUPORT_CUDA_HEADERS overrides the destination.
# Measured on the development machine (2 cores): 56 s for the seven wheels, 3.3 MB of headers kept.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${GPUPORT_CUDA_HEADERS:-.cache/cuda-headers}
include="$dest/include"
print=0
[ "${1:-}" = "--print" ] && print=1

# The CUDA 13.0 line, matching nvcc 13.0.88 (the versions of CUDA 13.0 Update 2's components).
# https://docs.nvidia.com/cuda/archive/13.0.2/cuda-toolkit-release-notes/index.html
wheels=(
  nvidia-cuda-nvrtc==13.0.88
  nvidia-curand==10.4.0.35
  nvidia-cusparse==12.6.3.3
  nvidia-cufft==12.0.0.61
  nvidia-cusolver==12.0.4.66
  nvidia-cublas==13.0.2.14
  nvidia-nccl-cu13==2.27.7
)
stamp="$dest/.complete"
want=$(printf '%s\n' "${wheels[@]}")

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  [ "$print" = 1 ] && echo "$include"
  exit 0
fi

if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
log() { printf '\033[1mcuda_headers:\033[0m %s\n' "$*" >&2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuport-cuda-wheels.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$include"
started=$(date +%s)
for spec in "${wheels[@]}"; do
  name=${spec%%==*}
  marker="$dest/.got-$spec"
  [ -f "$marker" ] && continue
  log "downloading $spec (headers only are kept)"
  rm -rf "$work"/*
  "$PY" -m pip download -q --no-deps --no-cache-dir --only-binary=:all: -d "$work" "$spec" 2>&1 \
    | grep -v -E '^WARNING: (Location|pip index)' >&2 || true
  whl=$(ls "$work"/*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$whl" ]; then
    log "could not download $spec"
    exit 1
  fi
  # Python's zipfile, not unzip(1): a fresh machine may not have unzip.
  "$PY" - "$whl" "$work/x" <<'PY'
import fnmatch, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if fnmatch.fnmatch(n, "nvidia/*/include/*")])
PY
  found=0
  for dir in "$work"/x/nvidia/*/include; do
    [ -d "$dir" ] || continue
    cp -R "$dir"/. "$include"/
    found=1
  done
  if [ "$found" = 0 ]; then
    log "$name's wheel has no nvidia/*/include folder"
    exit 1
  fi
  touch "$marker"
done
printf '%s\n' "$want" > "$stamp"
log "CUDA library headers in $include ($(du -sh "$include" | cut -f1), $(( $(date +%s) - started )) s)"
echo "$include"
