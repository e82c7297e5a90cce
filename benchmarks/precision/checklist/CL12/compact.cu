// Stream compaction: each kept element finds its slot from the warp's ballot.
#include <cuda_runtime.h>

__global__ void compact_kernel(const float* in, float* out, int* count, int n, float threshold)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % warpSize;
    const bool keep = i < n && in[i] > threshold;
    const auto bal = __ballot(keep);
    const int before = __popcll(bal & ~(-1 << lane));
    const int leader = __ffs(bal) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popcll(bal));
    base = __shfl(base, leader);
    if (keep) out[base + before] = in[i];
}
