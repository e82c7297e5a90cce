// Rotary embedding in place; the lane id comes from inline PTX.
#include <cuda_runtime.h>
#include <torch/extension.h>

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__global__ void rotary_kernel(float* x, const float* cos, const float* sin, int n, int half) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int d = (i % half);
  float a = x[2 * i], b = x[2 * i + 1];
  unsigned lane = lane_id();
  (void)lane;
  x[2 * i] = a * cos[d] - b * sin[d];
  x[2 * i + 1] = a * sin[d] + b * cos[d];
}

void rotary_(torch::Tensor x, torch::Tensor cos, torch::Tensor sin) {
  int n = x.numel() / 2;
  rotary_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), cos.data_ptr<float>(),
                                          sin.data_ptr<float>(), n, cos.numel());
}
