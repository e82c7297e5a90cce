// Fused row-wise softmax for the attention scores of the reranker head.
// One warp per row; rows up to 1024 columns. Launched from binding.cpp.
#include <cuda_runtime.h>
#include <cfloat>
#include <cstdio>

#define WARP_SIZE 32
#define ROWS_PER_BLOCK 4

__device__ __forceinline__ float warp_reduce_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
  }
  return v;
}

__device__ __forceinline__ float warp_reduce_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(0xffffffff, v, offset);
  }
  return v;
}

__global__ void fused_softmax_kernel(const float* __restrict__ in, float* __restrict__ out,
                                     int rows, int cols, float scale) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int row = blockIdx.x * ROWS_PER_BLOCK + warp;
  if (row >= rows) return;
  const float* x = in + (size_t)row * cols;
  float* y = out + (size_t)row * cols;

  float m = -FLT_MAX;
  for (int c = lane; c < cols; c += WARP_SIZE) m = fmaxf(m, x[c] * scale);
  m = warp_reduce_max(m);

  float s = 0.f;
  for (int c = lane; c < cols; c += WARP_SIZE) s += __expf(x[c] * scale - m);
  s = warp_reduce_sum(s);

  const float inv = 1.f / s;
  for (int c = lane; c < cols; c += WARP_SIZE) y[c] = __expf(x[c] * scale - m) * inv;
}

// `stream` is a cudaStream_t passed through as void* so that binding.cpp needs no CUDA headers.
extern "C" int launch_fused_softmax(const float* in, float* out, int rows, int cols, float scale,
                                    void* stream_handle) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
  dim3 block(WARP_SIZE * ROWS_PER_BLOCK);
  dim3 grid((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
  fused_softmax_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols, scale);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    fprintf(stderr, "fused_softmax: %s\n", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}

// Small self-test used by `make check-kernel` on a developer's GPU box.
extern "C" int fused_softmax_selftest() {
  const int rows = 8, cols = 100;
  float *d_in = nullptr, *d_out = nullptr;
  cudaMalloc(&d_in, rows * cols * sizeof(float));
  cudaMalloc(&d_out, rows * cols * sizeof(float));
  cudaMemset(d_in, 0, rows * cols * sizeof(float));
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int rc = launch_fused_softmax(d_in, d_out, rows, cols, 1.0f, stream);
  cudaStreamSynchronize(stream);
  float first = 0.f;
  cudaMemcpy(&first, d_out, sizeof(float), cudaMemcpyDeviceToHost);
  cudaStreamDestroy(stream);
  cudaFree(d_in);
  cudaFree(d_out);
  return rc != 0 || first < 0.0099f || first > 0.0101f;
}
