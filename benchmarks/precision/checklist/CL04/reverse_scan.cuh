// Warp-level reverse scan used by the backward pass.
#pragma once
#ifndef USE_ROCM
  #include <cub/cub.cuh>
  #define WARP_THREADS CUB_WARP_THREADS(0)
#else
  #include <hipcub/hipcub.hpp>
  #define WARP_THREADS HIPCUB_WARP_THREADS
#endif

template <typename T, int LOGICAL_WARP_THREADS>
struct WarpReverseScan {
    static constexpr bool IS_ARCH_WARP = (LOGICAL_WARP_THREADS == WARP_THREADS);
    static constexpr int STEPS = 5;

    unsigned lane_id;

    __device__ WarpReverseScan() : lane_id(threadIdx.x % LOGICAL_WARP_THREADS) {}

    __device__ T inclusive(T v) const
    {
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            T other = __shfl_down_sync(0xffffffff, v, offset, LOGICAL_WARP_THREADS);
            if (lane_id + offset < LOGICAL_WARP_THREADS) v += other;
        }
        return v;
    }
};
