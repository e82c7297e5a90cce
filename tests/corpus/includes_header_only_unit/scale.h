// A kernel and its host launcher, all in a header; no runtime include of its own.
#pragma once

template <typename T>
__global__ void scale_kernel(T* data, int n, T factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

template <typename T>
inline cudaError_t scale(T* data, int n, T factor, cudaStream_t stream = 0) {
  const int block = 128;
  scale_kernel<T><<<(n + block - 1) / block, block, 0, stream>>>(data, n, factor);
  return cudaGetLastError();
}
