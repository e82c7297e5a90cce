// Exercises: cuda.h and cuda_runtime.h together (one HIP header stands for both), and
// cuRAND's device API through its umbrella header and two of its parts.
#include <cuda.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <curand_philox4x32_x.h>
#include <curand_uniform.h>
#include <cstdio>

__global__ void fill_uniform(float* out, unsigned long long seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, 0, &state);
  out[i] = curand_uniform(&state);
}

int main() {
  CUdevice device;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS) return 0;
  char name[128];
  cuDeviceGetName(name, sizeof(name), device);
  std::printf("%s\n", name);
  const int n = 4096;
  float* out = nullptr;
  cudaMalloc(&out, n * sizeof(float));
  fill_uniform<<<(n + 255) / 256, 256>>>(out, 1234ULL, n);
  cudaDeviceSynchronize();
  cudaFree(out);
  return 0;
}
