// Warp sum used by the softmax kernels.
#pragma once

template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}
