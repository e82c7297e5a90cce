// Exercises: CUB block- and warp-level primitives (cub::BlockReduce, cub::BlockScan, cub::WarpReduce, cub::BlockLoad with temp storage unions).
#include <cstdio>

#include <cub/cub.cuh>
#include <cuda_runtime.h>

template <int BLOCK_THREADS, int ITEMS_PER_THREAD>
__global__ void block_sum_and_scan(const int* in, int* block_sums, int* scanned) {
    using BlockLoad = cub::BlockLoad<int, BLOCK_THREADS, ITEMS_PER_THREAD, cub::BLOCK_LOAD_TRANSPOSE>;
    using BlockReduce = cub::BlockReduce<int, BLOCK_THREADS>;
    using BlockScan = cub::BlockScan<int, BLOCK_THREADS>;
    __shared__ union {
        typename BlockLoad::TempStorage load;
        typename BlockReduce::TempStorage reduce;
        typename BlockScan::TempStorage scan;
    } temp;

    int items[ITEMS_PER_THREAD];
    const int tile = BLOCK_THREADS * ITEMS_PER_THREAD;
    BlockLoad(temp.load).Load(in + blockIdx.x * tile, items);
    __syncthreads();
    int total = BlockReduce(temp.reduce).Sum(items);
    __syncthreads();
    BlockScan(temp.scan).ExclusiveSum(items, items);
    for (int k = 0; k < ITEMS_PER_THREAD; ++k)
        scanned[blockIdx.x * tile + threadIdx.x * ITEMS_PER_THREAD + k] = items[k];
    if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

__global__ void warp_maxima(const float* in, float* out) {
    using WarpReduce = cub::WarpReduce<float>;
    __shared__ typename WarpReduce::TempStorage temp[4];
    int warp = threadIdx.x / 32;
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    float m = WarpReduce(temp[warp]).Reduce(v, [](float a, float b) { return a > b ? a : b; });
    if (threadIdx.x % 32 == 0) out[blockIdx.x * 4 + warp] = m;
}

int main() {
    const int blocks = 32, threads = 128, items = 4, n = blocks * threads * items;
    int *in, *sums, *scanned;
    float *fin, *fout;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&sums, blocks * sizeof(int));
    cudaMalloc(&scanned, n * sizeof(int));
    cudaMalloc(&fin, blocks * 128 * sizeof(float));
    cudaMalloc(&fout, blocks * 4 * sizeof(float));
    cudaMemset(in, 0, n * sizeof(int));
    block_sum_and_scan<128, 4><<<blocks, threads>>>(in, sums, scanned);
    warp_maxima<<<blocks, 128>>>(fin, fout);
    int first = 0;
    cudaMemcpy(&first, sums, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("block 0 sum %d\n", first);
    cudaFree(in); cudaFree(sums); cudaFree(scanned); cudaFree(fin); cudaFree(fout);
    return 0;
}
