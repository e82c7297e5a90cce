// Exercises: 32-bit full-warp masks of the _sync warp functions (a literal, a #define, ~0u) and a ballot kept in 32 bits.
#include <cstdio>

#include <cuda_runtime.h>

#define FULL_WARP_MASK 0xffffffff

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(FULL_WARP_MASK, v, offset);
    }
    return __shfl_sync(0xffffffff, v, 0);
}

__global__ void reduce(const float* in, float* out, int* positive_lanes, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    unsigned votes = __ballot_sync(~0u, v > 0.0f);
    bool all_small = __all_sync(0xFFFFFFFFu, v < 100.0f);
    bool any_big = __any_sync(0xffffffff, v > 50.0f);
    float total = warp_sum(v);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, all_small || any_big ? total : 0.0f);
        atomicAdd(positive_lanes, __popc(votes));
    }
}

int main() {
    const int n = 1024;
    float *in = nullptr, *out = nullptr;
    int* lanes = nullptr;
    cudaMallocManaged(&in, n * sizeof(float));
    cudaMallocManaged(&out, sizeof(float));
    cudaMallocManaged(&lanes, sizeof(int));
    for (int i = 0; i < n; ++i) in[i] = 1.0f;
    *out = 0.0f;
    *lanes = 0;
    reduce<<<n / 256, 256>>>(in, out, lanes, n);
    cudaDeviceSynchronize();
    std::printf("sum %f over %d positive lanes\n", *out, *lanes);
    cudaFree(in);
    cudaFree(out);
    cudaFree(lanes);
    return 0;
}
