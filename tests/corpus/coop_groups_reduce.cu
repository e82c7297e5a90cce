// Exercises: cooperative_groups/reduce.h (cg::reduce with cg::plus/cg::greater over a tile) and cg::inclusive_scan from cooperative_groups/scan.h.
#include <cstdio>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void tile_statistics(const int* in, int n, int* sums, int* maxima, int* prefix) {
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int sum = cg::reduce(tile, v, cg::plus<int>());
    int mx = cg::reduce(tile, v, cg::greater<int>());
    int scanned = cg::inclusive_scan(tile, v);
    if (i < n) prefix[i] = scanned;
    if (tile.thread_rank() == 0) {
        int t = i / 32;
        sums[t] = sum;
        maxima[t] = mx;
    }
}

int main() {
    const int n = 1 << 14;
    int *in, *sums, *maxima, *prefix;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&sums, (n / 32) * sizeof(int));
    cudaMalloc(&maxima, (n / 32) * sizeof(int));
    cudaMalloc(&prefix, n * sizeof(int));
    cudaMemset(in, 0, n * sizeof(int));
    tile_statistics<<<n / 128, 128>>>(in, n, sums, maxima, prefix);
    int first = 0;
    cudaMemcpy(&first, sums, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("tile 0 sum %d\n", first);
    cudaFree(in); cudaFree(sums); cudaFree(maxima); cudaFree(prefix);
    return 0;
}
