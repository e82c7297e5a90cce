// Exercises: read-only loads (__ldg), integer/bit intrinsics (__clz, __ffsll, __popcll, __brev, __byte_perm, __funnelshift_l, __umulhi, __mul24, __sad) and restrict pointers.
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

// Rotate-left via funnel shift, as hash functions do.
__device__ __forceinline__ uint32_t rotl32(uint32_t x, int r) { return __funnelshift_l(x, x, r); }

__device__ uint32_t murmur_mix(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h = __umulhi(h, 0xc2b2ae35u) ^ (h * 0xc2b2ae35u);
    return h ^ (h >> 16);
}

__global__ void hash_keys(const uint32_t* __restrict__ keys, uint32_t* __restrict__ hashes,
                          int* __restrict__ stats, int n) {
    int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
    if (i >= n) return;
    uint32_t k = __ldg(&keys[i]);
    uint32_t h = murmur_mix(rotl32(k, 13) ^ __brev(k));
    h = __byte_perm(h, k, 0x3210) ^ __funnelshift_r(h, k, 7);
    hashes[i] = h;
    int leading = __clz(static_cast<int>(h));
    int ones = __popc(h) + __popcll(static_cast<unsigned long long>(h) << 32);
    int first = __ffsll(static_cast<long long>(k) | (1ll << 40));
    unsigned int diff = __sad(static_cast<int>(k & 0xff), static_cast<int>(h & 0xff), 0u);
    atomicAdd(&stats[0], leading);
    atomicAdd(&stats[1], ones + first + static_cast<int>(diff) + __clzll(static_cast<long long>(h)));
}

__global__ void gather_ro(const float4* __restrict__ table, const int* __restrict__ idx,
                          float4* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(table + __ldg(idx + i));
}

int main() {
    const int n = 1 << 16;
    uint32_t *keys, *hashes;
    int* stats;
    cudaMalloc(&keys, n * sizeof(uint32_t));
    cudaMalloc(&hashes, n * sizeof(uint32_t));
    cudaMalloc(&stats, 2 * sizeof(int));
    cudaMemset(stats, 0, 2 * sizeof(int));
    hash_keys<<<n / 256, 256>>>(keys, hashes, stats, n);
    float4 *table, *out;
    int* idx;
    cudaMalloc(&table, 1024 * sizeof(float4));
    cudaMalloc(&out, n * sizeof(float4));
    cudaMalloc(&idx, n * sizeof(int));
    cudaMemset(idx, 0, n * sizeof(int));
    gather_ro<<<n / 256, 256>>>(table, idx, out, n);
    int host[2];
    cudaMemcpy(host, stats, sizeof(host), cudaMemcpyDeviceToHost);
    std::printf("%d %d\n", host[0], host[1]);
    cudaFree(keys); cudaFree(hashes); cudaFree(stats); cudaFree(table); cudaFree(out); cudaFree(idx);
    return 0;
}
