// Attention for short sequences: one warp per query row, scores reduced with warp shuffles.
#include <cuda_runtime.h>
#include <torch/extension.h>

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}

__global__ void attention_kernel(const float* q, const float* k, const float* v, float* out,
                                 int seq, int dim) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= seq) return;
  float best = -INFINITY;
  for (int j = lane; j < seq; j += 32) {
    float s = 0.f;
    for (int d = 0; d < dim; ++d) s += q[row * dim + d] * k[j * dim + d];
    best = fmaxf(best, s);
  }
  best = warp_max(best);
  float total = 0.f;
  for (int j = lane; j < seq; j += 32) {
    float s = 0.f;
    for (int d = 0; d < dim; ++d) s += q[row * dim + d] * k[j * dim + d];
    total += __expf(s - best);
  }
  total = warp_sum(total);
  for (int d = lane; d < dim; d += 32) out[row * dim + d] = v[row * dim + d] / total;
}

torch::Tensor fused_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
  auto out = torch::empty_like(q);
  int seq = q.size(0), dim = q.size(1);
  attention_kernel<<<(seq + 3) / 4, 128>>>(q.data_ptr<float>(), k.data_ptr<float>(),
                                           v.data_ptr<float>(), out.data_ptr<float>(), seq, dim);
  return out;
}
