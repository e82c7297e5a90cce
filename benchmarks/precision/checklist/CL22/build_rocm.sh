#!/bin/sh
# Compiles the ROCm executor kernels into objects for the library.
set -e
ROCM_PATH=${ROCM_PATH:-/opt/rocm}
for src in executor_kernel.cu reduce_kernel.cu; do
    "$ROCM_PATH/llvm/bin/amdclang" -c -x hip \
        --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=native \
        -I"$ROCM_PATH/include" -fPIC -O3 "$src" -o "${src%.cu}.o"
done
