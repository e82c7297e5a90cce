// Exercises: device properties and attributes, occupancy calculator, cudaFuncGetAttributes/cudaFuncSetAttribute and cache config.
#include <cstdio>

#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                                      \
    do {                                                                                   \
        if (cudaError_t e = (x); e != cudaSuccess) {                                       \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                   \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

constexpr int kTile = 32;

__global__ void __launch_bounds__(256, 2) tiled_sum(const float* in, float* out, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
}

int main() {
    int device = 0;
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("%s: sm_%d%d, %d SMs, warp %d, %zu KiB smem/block, %zu MiB global\n", prop.name,
                prop.major, prop.minor, prop.multiProcessorCount, prop.warpSize,
                prop.sharedMemPerBlock / 1024, prop.totalGlobalMem >> 20);
    std::printf("max threads/block %d, max grid %d x %d x %d, L2 %d bytes\n",
                prop.maxThreadsPerBlock, prop.maxGridSize[0], prop.maxGridSize[1],
                prop.maxGridSize[2], prop.l2CacheSize);

    int smem_optin = 0, clock_khz = 0, bus_width = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, device));
    std::printf("opt-in smem %d, clock %d kHz, bus %d bits\n", smem_optin, clock_khz, bus_width);

    cudaFuncAttributes attrs;
    CUDA_CHECK(cudaFuncGetAttributes(&attrs, tiled_sum));
    std::printf("tiled_sum: %d regs, %zu local bytes, max %d threads\n", attrs.numRegs,
                attrs.localSizeBytes, attrs.maxThreadsPerBlock);

    const int block = 256;
    const size_t smem = block * sizeof(float);
    CUDA_CHECK(cudaFuncSetAttribute(tiled_sum, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
    CUDA_CHECK(cudaFuncSetCacheConfig(tiled_sum, cudaFuncCachePreferShared));

    int blocks_per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, tiled_sum, block, smem));
    int min_grid = 0, best_block = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, tiled_sum, smem, 0));
    std::printf("occupancy: %d blocks/SM; suggested block %d, grid >= %d (tile %d)\n",
                blocks_per_sm, best_block, min_grid, kTile);

    int runtime = 0, driver = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    std::printf("runtime %d driver %d\n", runtime, driver);
    return 0;
}
