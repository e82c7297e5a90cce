// NHWC batch norm: the reduction tile width is fixed at compile time from the warp size.
#pragma once
#include <hip/hip_runtime.h>

constexpr int kWarpSize = warpSize;
constexpr int kPixelsPerThread = 4;
constexpr int kThreadsPerPixel = 16;

template <int ELEMENTS_PER_LDG>
__device__ void warp_reduce_tile(float (&acc)[ELEMENTS_PER_LDG])
{
    for (int offset = kWarpSize / 2; offset >= kThreadsPerPixel; offset /= 2)
        for (int i = 0; i < ELEMENTS_PER_LDG; ++i) acc[i] += __shfl_down(acc[i], offset);
}
