// Exercises: cooperative groups tiles (cg::tiled_partition<32>, thread_block_tile shfl_down/shfl_xor/any/ballot, coalesced_threads, dynamic tiled_partition).
#include <cstdio>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

template <unsigned int TileSize>
__device__ float tile_sum(cg::thread_block_tile<TileSize> tile, float v) {
    for (unsigned int offset = tile.size() / 2; offset > 0; offset /= 2)
        v += tile.shfl_down(v, offset);
    return v;  // lane 0 holds the sum
}

__global__ void segmented_sums(const float* in, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> octet = cg::tiled_partition<8>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.f;

    float warp_total = tile_sum<32>(warp, v);
    float octet_total = tile_sum<8>(octet, v);
    float mx = v;
    for (int off = 4; off > 0; off >>= 1) mx = fmaxf(mx, octet.shfl_xor(mx, off));
    if (warp.thread_rank() == 0) atomicAdd(&out[0], warp_total);
    if (octet.thread_rank() == 0) atomicAdd(&out[1], octet_total + 0.f * mx);
    if (warp.any(v < 0.f) && warp.thread_rank() == 0) atomicAdd(&out[2], 1.f);
    unsigned int positive = warp.ballot(v > 0.f);
    if (warp.thread_rank() == 0) atomicAdd(&out[3], static_cast<float>(__popc(positive)));
    block.sync();
}

__global__ void only_some_threads(const int* flags, int* out) {
    if (flags[threadIdx.x]) {
        cg::coalesced_group active = cg::coalesced_threads();
        if (active.thread_rank() == 0) atomicAdd(out, static_cast<int>(active.size()));
        active.sync();
    }
    cg::thread_group tile4 = cg::tiled_partition(cg::this_thread_block(), 4);
    if (tile4.thread_rank() == 0) atomicAdd(out + 1, 1);
    tile4.sync();
}

int main() {
    const int n = 1 << 16;
    float *in, *out;
    int *flags, *counts;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, 4 * sizeof(float));
    cudaMalloc(&flags, 256 * sizeof(int));
    cudaMalloc(&counts, 2 * sizeof(int));
    cudaMemset(in, 0, n * sizeof(float));
    cudaMemset(out, 0, 4 * sizeof(float));
    cudaMemset(flags, 0, 256 * sizeof(int));
    cudaMemset(counts, 0, 2 * sizeof(int));
    segmented_sums<<<n / 256, 256>>>(in, out, n);
    only_some_threads<<<1, 256>>>(flags, counts);
    float host[4];
    cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
    std::printf("%f %f %f %f\n", host[0], host[1], host[2], host[3]);
    cudaFree(in); cudaFree(out); cudaFree(flags); cudaFree(counts);
    return 0;
}
