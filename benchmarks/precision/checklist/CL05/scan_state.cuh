// Per-warp state of the chunked scan.
#pragma once

struct ScanLane {
    unsigned lane_id;
    unsigned warp_id;

    __device__ ScanLane()
        : lane_id(threadIdx.x & 0x1f)
        , warp_id(threadIdx.x >> 5)
    {
    }
};
