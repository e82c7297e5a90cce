// Exercises: cooperative launch and grid-wide synchronization (cg::this_grid().sync(), cudaLaunchCooperativeKernel, occupancy-sized grid).
#include <cstdio>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// Two phases over the whole grid without a second kernel launch.
__global__ void normalize_by_global_sum(float* data, int n, float* partial, float* total) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    extern __shared__ float sdata[];

    float local = 0.f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) local += data[i];
    sdata[block.thread_rank()] = local;
    block.sync();
    for (unsigned int s = block.size() / 2; s > 0; s >>= 1) {
        if (block.thread_rank() < s) sdata[block.thread_rank()] += sdata[block.thread_rank() + s];
        block.sync();
    }
    if (block.thread_rank() == 0) partial[blockIdx.x] = sdata[0];

    grid.sync();

    if (grid.thread_rank() == 0) {
        float sum = 0.f;
        for (unsigned int b = 0; b < gridDim.x; ++b) sum += partial[b];
        *total = sum;
    }
    grid.sync();
    const float inv = 1.0f / *total;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] *= inv;
}

int main() {
    int device = 0, supported = 0;
    cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, device);
    if (!supported) {
        std::printf("cooperative launch unsupported\n");
        return 0;
    }
    const int threads = 256;
    const size_t smem = threads * sizeof(float);
    int per_sm = 0, sms = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, normalize_by_global_sum, threads, smem);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int blocks = per_sm * sms;

    int n = 1 << 22;
    float *data, *partial, *total;
    cudaMalloc(&data, n * sizeof(float));
    cudaMalloc(&partial, blocks * sizeof(float));
    cudaMalloc(&total, sizeof(float));
    cudaMemset(data, 0, n * sizeof(float));
    void* args[] = {&data, &n, &partial, &total};
    cudaError_t err = cudaLaunchCooperativeKernel((void*)normalize_by_global_sum, dim3(blocks),
                                                  dim3(threads), args, smem, 0);
    std::printf("launch: %s\n", cudaGetErrorString(err));
    cudaDeviceSynchronize();
    cudaFree(data); cudaFree(partial); cudaFree(total);
    return 0;
}
