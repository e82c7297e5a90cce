// Exercises: CUDA's math constants, with the toolkit header written in quotes.
#include "math_constants.h"
#include <cuda_runtime.h>

__global__ void angles(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (i == 0) ? CUDART_INF_F : CUDART_PI_F * i / n;
}

int main() {
  const int n = 360;
  float* out = nullptr;
  cudaMalloc(&out, n * sizeof(float));
  angles<<<(n + 63) / 64, 64>>>(out, n);
  cudaDeviceSynchronize();
  cudaFree(out);
  return 0;
}
