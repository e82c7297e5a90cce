// Exercises: warp-level reductions with __shfl_xor_sync(0xffffffff, ...), __shfl_down_sync, __shfl_sync broadcast and __ballot_sync/__popc counting.
#include <cstdio>

#include <cuda_runtime.h>

#define FULL_MASK 0xffffffff
constexpr int kWarpSize = 32;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_down_sync(FULL_MASK, v, offset));
    return __shfl_sync(FULL_MASK, v, 0);  // lane 0 holds the result: broadcast it
}

__device__ __forceinline__ int warp_inclusive_scan(int v) {
    const int lane = threadIdx.x % kWarpSize;
    for (int delta = 1; delta < kWarpSize; delta <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, delta);
        if (lane >= delta) v += up;
    }
    return v;
}

// One block computes sum, max and the number of positive entries of a row.
__global__ void row_stats(const float* matrix, int cols, float* sums, float* maxes, int* positives,
                          int* scan_out) {
    __shared__ float warp_sums[32];
    __shared__ float warp_maxes[32];
    __shared__ int warp_counts[32];
    const float* row = matrix + static_cast<size_t>(blockIdx.x) * cols;
    const int lane = threadIdx.x & (kWarpSize - 1);
    const int warp = threadIdx.x / kWarpSize;

    float s = 0.f, m = -INFINITY;
    int positive = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float x = row[c];
        s += x;
        m = fmaxf(m, x);
        unsigned int votes = __ballot_sync(FULL_MASK, x > 0.f);
        if (lane == 0) positive += __popc(votes);
    }
    s = warp_sum(s);
    m = warp_max(m);
    if (lane == 0) {
        warp_sums[warp] = s;
        warp_maxes[warp] = m;
        warp_counts[warp] = positive;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x / kWarpSize;
        s = lane < warps ? warp_sums[lane] : 0.f;
        m = lane < warps ? warp_maxes[lane] : -INFINITY;
        int count = lane < warps ? warp_counts[lane] : 0;
        s = warp_sum(s);
        m = warp_max(m);
        int prefix = warp_inclusive_scan(count);
        if (lane == 0) {
            sums[blockIdx.x] = s;
            maxes[blockIdx.x] = m;
        }
        if (lane == kWarpSize - 1) positives[blockIdx.x] = prefix;
        if (lane < warps) scan_out[blockIdx.x * 32 + lane] = prefix;
    }
}

int main() {
    const int rows = 64, cols = 1000;
    float *matrix, *sums, *maxes;
    int *positives, *scan;
    cudaMalloc(&matrix, rows * cols * sizeof(float));
    cudaMalloc(&sums, rows * sizeof(float));
    cudaMalloc(&maxes, rows * sizeof(float));
    cudaMalloc(&positives, rows * sizeof(int));
    cudaMalloc(&scan, rows * 32 * sizeof(int));
    cudaMemset(matrix, 0, rows * cols * sizeof(float));
    row_stats<<<rows, 256>>>(matrix, cols, sums, maxes, positives, scan);
    float first = 0.f;
    cudaMemcpy(&first, sums, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("sum of row 0: %f\n", first);
    cudaFree(matrix);
    cudaFree(sums);
    cudaFree(maxes);
    cudaFree(positives);
    cudaFree(scan);
    return 0;
}
