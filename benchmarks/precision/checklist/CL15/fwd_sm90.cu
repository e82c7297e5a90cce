// Forward attention mainloop for Hopper: warpgroup MMA fed by TMA.
#include <cuda.h>
#include <cuda_runtime.h>

__device__ void mainloop_sm90(const CUtensorMap* tma_q, float* acc, unsigned long long desc_a, unsigned long long desc_b)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1}, %2, %3, 1, 1, 1, 0, 0;\n"
        : "+f"(acc[0]), "+f"(acc[1])
        : "l"(desc_a), "l"(desc_b));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
