// Grid-stride helpers for kernels; relies on the runtime that nvcc includes in .cu files.
#pragma once

__device__ __forceinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ int grid_stride() { return blockDim.x * gridDim.x; }

inline dim3 grid_for(int n, int block) { return dim3((n + block - 1) / block); }
