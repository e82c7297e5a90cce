// Exercises: __activemask, warp-aggregated atomics, __any_sync/__all_sync votes, __ffs lane election and __syncwarp.
#include <cstdio>

#include <cuda_runtime.h>

// Stream compaction: each warp reserves room for its surviving elements with one atomic.
__device__ int warp_aggregated_increment(int* counter) {
    unsigned int active = __activemask();
    int leader = __ffs(active) - 1;
    int lane = threadIdx.x % 32;
    unsigned int lower = active & ((1u << lane) - 1u);
    int base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(active));
    base = __shfl_sync(active, base, leader);
    return base + __popc(lower);
}

__global__ void compact_positive(const float* in, int n, float* out, int* out_count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0.f) {
        int slot = warp_aggregated_increment(out_count);
        out[slot] = in[i];
    }
}

__global__ void early_exit_search(const int* keys, int n, int wanted, int* found_at) {
    __shared__ int staged[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && keys[i] == wanted;
    staged[threadIdx.x] = hit ? i : -1;
    __syncwarp();
    // Only one lane per warp writes, the first that saw the key.
    if (__any_sync(0xffffffff, hit)) {
        unsigned int hits = __ballot_sync(0xffffffff, hit);
        int first_lane = __ffs(hits) - 1;
        int warp_base = threadIdx.x & ~31;
        if ((threadIdx.x & 31) == first_lane) atomicMin(found_at, staged[warp_base + first_lane]);
    }
    if (__all_sync(0xffffffff, !hit) && (threadIdx.x & 31) == 0) {
        // nothing in this warp: a cheap statistic
        atomicAdd(found_at + 1, 1);
    }
    __syncwarp(0xffffffff);
}

int main() {
    const int n = 1 << 16;
    float *in, *out;
    int *count, *keys, *found;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&count, sizeof(int));
    cudaMalloc(&keys, n * sizeof(int));
    cudaMalloc(&found, 2 * sizeof(int));
    cudaMemset(in, 0, n * sizeof(float));
    cudaMemset(count, 0, sizeof(int));
    cudaMemset(keys, 0, n * sizeof(int));
    int init[2] = {n, 0};
    cudaMemcpy(found, init, sizeof(init), cudaMemcpyHostToDevice);
    compact_positive<<<n / 256, 256>>>(in, n, out, count);
    early_exit_search<<<n / 256, 256>>>(keys, n, 42, found);
    int host_count = 0;
    cudaMemcpy(&host_count, count, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("%d kept\n", host_count);
    cudaFree(in);
    cudaFree(out);
    cudaFree(count);
    cudaFree(keys);
    cudaFree(found);
    return 0;
}
