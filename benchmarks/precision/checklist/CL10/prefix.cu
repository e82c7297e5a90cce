// Warp-wide inclusive prefix sum of the labels.
#include <cuda_runtime.h>

__global__ void warp_prefix_kernel(const int* in, int* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % warpSize;
    int v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d *= 2) {
        const int up = __shfl_up(v, d);
        if (lane >= d) v += up;
    }
    if (i < n) out[i] = v;
}
