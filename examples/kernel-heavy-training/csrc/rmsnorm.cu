// RMSNorm with one warp per row; a warp vote skips rows that are all zero.
#include <cuda_runtime.h>
#include <torch/extension.h>

__global__ void rmsnorm_kernel(const float* x, const float* w, float* y, int rows, int dim,
                               float eps) {
  int row = blockIdx.x;
  int lane = threadIdx.x;
  float sum = 0.f;
  for (int d = lane; d < dim; d += 32) sum += x[row * dim + d] * x[row * dim + d];
  if (!__any_sync(0xffffffff, sum != 0.f)) return;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
  float scale = rsqrtf(__shfl_sync(0xffffffff, sum, 0) / dim + eps);
  for (int d = lane; d < dim; d += 32) y[row * dim + d] = x[row * dim + d] * scale * w[d];
}

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor weight, double eps) {
  auto y = torch::empty_like(x);
  rmsnorm_kernel<<<x.size(0), 32>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                    y.data_ptr<float>(), x.size(0), x.size(1), (float)eps);
  return y;
}
