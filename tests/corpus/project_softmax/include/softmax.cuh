// Half-precision row softmax: warp helpers (masked shuffles) and kernel templates, included via -Iinclude.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace attn {

constexpr unsigned kFullMask = 0xffffffffu;

template <typename T>
__device__ __forceinline__ T warp_all_reduce_max(T v) {
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_all_reduce_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

// One warp per row; `cols` up to 32 * kMaxPerLane.
template <int kMaxPerLane>
__global__ void softmax_rows(const __half* __restrict__ in, __half* __restrict__ out, int rows,
                             int cols, float scale) {
    const int warps_per_block = blockDim.x / 32;
    const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float vals[kMaxPerLane];
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        int c = lane + 32 * k;
        vals[k] = c < cols ? __half2float(in[static_cast<size_t>(row) * cols + c]) * scale : -INFINITY;
        m = fmaxf(m, vals[k]);
    }
    m = warp_all_reduce_max(m);
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        vals[k] = __expf(vals[k] - m);
        sum += vals[k];
    }
    sum = warp_all_reduce_sum(sum);
    const float inv = 1.f / sum;
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        int c = lane + 32 * k;
        if (c < cols) out[static_cast<size_t>(row) * cols + c] = __float2half(vals[k] * inv);
    }
}

cudaError_t softmax(const __half* in, __half* out, int rows, int cols, float scale,
                    cudaStream_t stream);

}  // namespace attn
