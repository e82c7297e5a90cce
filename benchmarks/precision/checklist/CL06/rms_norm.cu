// RMS norm: one partial sum per warp, then the first warp reduces the partials.
#include <cuda_fp16.h>

#define NUM_THREADS 1024
#define NUM_WARPS (NUM_THREADS / 32)

__global__ void rms_norm_kernel(const half* x, half* y, const half* w, int dim, float eps)
{
    __shared__ float sums[NUM_WARPS];
    const int warp_id = threadIdx.x / warpSize;
    const int lane_id = threadIdx.x % warpSize;

    float sum = 0.0f;
    for (int i = threadIdx.x; i < dim; i += NUM_THREADS) {
        const float v = __half2float(x[blockIdx.x * dim + i]);
        sum += v * v;
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) sum += __shfl_xor(sum, offset);
    if (lane_id == 0) sums[warp_id] = sum;
    __syncthreads();

    sum = sums[lane_id];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) sum += __shfl_xor(sum, offset);

    const float norm = rsqrtf(sum / dim + eps);
    for (int i = threadIdx.x; i < dim; i += NUM_THREADS)
        y[blockIdx.x * dim + i] = __float2half(__half2float(x[blockIdx.x * dim + i]) * norm * __half2float(w[i]));
}
