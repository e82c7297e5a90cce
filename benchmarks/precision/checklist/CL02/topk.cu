// Per-warp top-k over the logits of one row.
#include "compat.h"

template <int kWarpSize>
__device__ float warp_max(float v)
{
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
    return v;
}

__global__ void row_max_kernel(const float* logits, float* out, int n)
{
    float best = -INFINITY;
    for (int i = threadIdx.x; i < n; i += blockDim.x) best = fmaxf(best, logits[blockIdx.x * n + i]);
    best = warp_max<WARP_SIZE>(best);
    if (threadIdx.x == 0) out[blockIdx.x] = best;
}
