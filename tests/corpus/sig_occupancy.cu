// Exercises: driver-API occupancy queries cuOccupancyMaxPotentialBlockSize[WithFlags] with no block-size callback (0 / NULL), beside the runtime's cudaOccupancyMaxPotentialBlockSize.
#include <cstdio>

#include <cuda.h>
#include <cuda_runtime.h>

__global__ void scale(float* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

static int suggest_block(CUfunction kernel, size_t shared_bytes) {
    int min_grid = 0, block = 0;
    CUresult status = cuOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, shared_bytes, 0);
    if (status != CUDA_SUCCESS) return 256;
    int block_flags = 0;
    status = cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid, &block_flags, kernel, NULL,
                                                       shared_bytes, 1024,
                                                       CU_OCCUPANCY_DEFAULT);
    return status == CUDA_SUCCESS && block_flags < block ? block_flags : block;
}

int main() {
    cuInit(0);
    CUdevice device;
    CUcontext context;
    cuDeviceGet(&device, 0);
    cuDevicePrimaryCtxRetain(&context, device);
    cuCtxSetCurrent(context);

    CUmodule module;
    CUfunction kernel;
    if (cuModuleLoad(&module, "scale.cubin") != CUDA_SUCCESS) return 1;
    cuModuleGetFunction(&kernel, module, "scale");
    int block = suggest_block(kernel, 0);

    int runtime_grid = 0, runtime_block = 0;
    cudaOccupancyMaxPotentialBlockSize(&runtime_grid, &runtime_block, scale, 0, 0);
    std::printf("driver block %d, runtime block %d\n", block, runtime_block);

    cuModuleUnload(module);
    cuDevicePrimaryCtxRelease(device);
    return 0;
}
