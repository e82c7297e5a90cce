// Which multiprocessor runs this block; used to spread the persistent work.
#pragma once
#include <cstdint>

static __device__ __forceinline__ uint32_t current_smid()
{
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    return smid;
}
