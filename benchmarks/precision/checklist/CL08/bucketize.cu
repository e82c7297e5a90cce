// Counts, for each element, the earlier elements of the warp that fall in the same bucket.
#include <cuda_runtime.h>

__global__ void bucket_rank_kernel(const int* bucket, int* rank, int n, int target)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % warpSize;
    const bool same = i < n && bucket[i] == target;
    const unsigned int votes = __ballot_sync(__activemask(), same);
    const unsigned int below = votes & ((1u << lane) - 1u);
    if (same) rank[i] = __popc(below);
}
