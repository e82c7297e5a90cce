// Exercises: a warp-size macro that is warpSize where only ROCm looks (32 for CUDA), sizing shared arrays and a constexpr: no longer compile-time constants from ROCm 7.0.
#include <cstdio>

#include <cuda_runtime.h>

#if defined(__HIP_PLATFORM_AMD__)
#define WARP_SIZE warpSize
#else
#define WARP_SIZE 32
#endif
#define WARPS_PER_BLOCK (256 / WARP_SIZE)

__global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[WARPS_PER_BLOCK];
    __shared__ float lane_scratch[WARP_SIZE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    int lane = threadIdx.x % WARP_SIZE;
    int warp = threadIdx.x / WARP_SIZE;
    lane_scratch[lane] = v;
    if (lane == 0) partial[warp] = 0.0f;
    __syncthreads();
    atomicAdd(&partial[warp], v);
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < WARPS_PER_BLOCK; ++w) total += partial[w];
        atomicAdd(out, total + 0.0f * lane_scratch[0]);
    }
}

int main() {
    const int n = 4096;
    float *in = nullptr, *out = nullptr;
    cudaMallocManaged(&in, n * sizeof(float));
    cudaMallocManaged(&out, sizeof(float));
    for (int i = 0; i < n; ++i) in[i] = 1.0f;
    *out = 0.0f;
    block_sum<<<n / 256, 256>>>(in, out, n);
    cudaDeviceSynchronize();
    std::printf("sum %f\n", *out);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
