// Exercises: cuOccupancyMaxPotentialBlockSize with a CUoccupancyB2DSize callback (shared memory that grows with the block), which HIP's occupancy API cannot take.
#include <cstdio>

#include <cuda.h>

static size_t shared_for_block(int block_size) { return block_size * sizeof(float); }

int main() {
    cuInit(0);
    CUdevice device;
    CUcontext context;
    cuDeviceGet(&device, 0);
    cuDevicePrimaryCtxRetain(&context, device);
    cuCtxSetCurrent(context);
    CUmodule module;
    CUfunction kernel;
    if (cuModuleLoad(&module, "reduce.cubin") != CUDA_SUCCESS) return 1;
    cuModuleGetFunction(&kernel, module, "block_reduce");
    int min_grid = 0, block = 0;
    cuOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, shared_for_block, 0, 0);
    std::printf("block %d, grid %d\n", block, min_grid);
    cuModuleUnload(module);
    cuDevicePrimaryCtxRelease(device);
    return 0;
}
