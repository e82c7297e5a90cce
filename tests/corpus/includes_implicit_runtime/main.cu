// Exercises: two headers that rely on nvcc's implicit cuda_runtime.h, used by one unit.
#include "check.h"
#include "grid.h"

__global__ void axpy(float a, const float* x, float* y, int n) {
  for (int i = global_index(); i < n; i += grid_stride()) y[i] += a * x[i];
}

int main() {
  const int n = 1 << 16;
  if (device_count() == 0) return 0;
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(x, 0, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(y, 0, n * sizeof(float)));
  axpy<<<grid_for(n, 256), 256>>>(2.0f, x, y, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  return 0;
}
