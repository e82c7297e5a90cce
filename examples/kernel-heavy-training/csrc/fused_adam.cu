// Adam in one pass over parameters, gradients and both moments, with a ballot of finite lanes.
#include <cuda_runtime.h>
#include <torch/extension.h>

__global__ void adam_kernel(float* p, const float* g, float* m, float* v, int n, float lr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned finite = __ballot_sync(0xffffffff, isfinite(g[i]));
  if (finite != 0xffffffff) return;  // skip the step for a warp that saw an inf or a nan
  m[i] = 0.9f * m[i] + 0.1f * g[i];
  v[i] = 0.999f * v[i] + 0.001f * g[i] * g[i];
  p[i] -= lr * m[i] / (sqrtf(v[i]) + 1e-8f);
}

void fused_adam_(torch::Tensor p, torch::Tensor g, torch::Tensor m, torch::Tensor v, double lr) {
  int n = p.numel();
  adam_kernel<<<(n + 255) / 256, 256>>>(p.data_ptr<float>(), g.data_ptr<float>(),
                                        m.data_ptr<float>(), v.data_ptr<float>(), n, (float)lr);
}
