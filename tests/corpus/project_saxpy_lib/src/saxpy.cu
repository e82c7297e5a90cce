// Exercises: library translation unit of a multi-file project (kernel + launchers, relative include of a .cuh header).
#include "../include/saxpy.cuh"

namespace saxpy {

__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = fused(a, x[i], y[i]);
}

cudaError_t run(float a, const float* x, float* y, int n, cudaStream_t stream) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int blocks = min((n + 255) / 256, sms * 8);
    saxpy_kernel<<<blocks, 256, 0, stream>>>(a, x, y, n);
    return cudaGetLastError();
}

cudaError_t run_batched(float a, const float* x, float* y, int n, int batches,
                        const cudaStream_t* streams) {
    for (int b = 0; b < batches; ++b) {
        cudaError_t e = run(a, x + static_cast<size_t>(b) * n, y + static_cast<size_t>(b) * n, n,
                            streams[b]);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

}  // namespace saxpy
