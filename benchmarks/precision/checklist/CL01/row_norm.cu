// Row-wise norm: one partial sum per lane kept in shared memory.
#include <cuda_runtime.h>

__global__ void row_norm_kernel(const float* __restrict__ x, float* __restrict__ out, int cols)
{
    __shared__ float partial[warpSize];
    const int lane = threadIdx.x % warpSize;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = x[blockIdx.x * cols + c];
        acc += v * v;
    }
    partial[lane] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < blockDim.x && i < 32; ++i) total += partial[i];
        out[blockIdx.x] = sqrtf(total);
    }
}
