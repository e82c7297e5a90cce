// Exercises: __match_any_sync to group lanes by key before a conflict-free atomic update (sm_70+ warp intrinsic).
#include <cstdio>

#include <cuda_runtime.h>

// Lanes holding the same bucket id combine their weights and one of them does the atomic.
__global__ void weighted_histogram(const int* bucket, const float* weight, int n, float* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int in_range = __ballot_sync(0xffffffffu, i < n);
    if (i >= n) return;
    int key = bucket[i];
    float w = weight[i];
    unsigned int peers = __match_any_sync(in_range, key);
    int lane = threadIdx.x & 31;
    int leader = __ffs(peers) - 1;
    float total = 0.f;
    // Sum the weights of the peers (walk the peer mask).
    for (unsigned int rest = peers; rest; rest &= rest - 1) {
        int src = __ffs(rest) - 1;
        total += __shfl_sync(peers, w, src);
    }
    if (lane == leader) atomicAdd(&bins[key], total);
}

int main() {
    const int n = 1 << 20, buckets = 64;
    int* bucket;
    float *weight, *bins;
    cudaMalloc(&bucket, n * sizeof(int));
    cudaMalloc(&weight, n * sizeof(float));
    cudaMalloc(&bins, buckets * sizeof(float));
    cudaMemset(bucket, 0, n * sizeof(int));
    cudaMemset(weight, 0, n * sizeof(float));
    cudaMemset(bins, 0, buckets * sizeof(float));
    weighted_histogram<<<(n + 255) / 256, 256>>>(bucket, weight, n, bins);
    cudaDeviceSynchronize();
    std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(bucket);
    cudaFree(weight);
    cudaFree(bins);
    return 0;
}
