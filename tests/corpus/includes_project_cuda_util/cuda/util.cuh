// The project's own helpers, in a folder named cuda/ (not libcu++).
#pragma once
#include <cuda_runtime.h>

namespace proj {

template <typename T>
__device__ __forceinline__ T clamp01(T v) {
  return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
}

inline int blocks_for(int n, int block) { return (n + block - 1) / block; }

}  // namespace proj
