// Shuffle helpers for the sparse-dense matmul.
#pragma once
#include <ATen/ATen.h>

#define FULL_MASK 0xffffffff

#ifdef USE_ROCM
  #define SHFL_DOWN_SYNC(mask, var, delta) __shfl_down(var, delta)
#else
  #define SHFL_DOWN_SYNC __shfl_down_sync
#endif
