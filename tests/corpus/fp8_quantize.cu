// Exercises: FP8 types from cuda_fp8.h (__nv_fp8_e4m3, __nv_fp8_e5m2, __nv_cvt_float_to_fp8) in a per-tensor scaled quantize/dequantize pair.
#include <cstdio>

#include <cuda_fp8.h>
#include <cuda_runtime.h>

__global__ void absmax(const float* x, int n, float* out) {
    float m = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf(x[i]));
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffff, m, off));
    if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<int*>(out), __float_as_int(m));
}

__global__ void quantize_e4m3(const float* x, int n, const float* amax, __nv_fp8_e4m3* q) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float scale = 448.0f / fmaxf(*amax, 1e-12f);
    q[i] = __nv_fp8_e4m3(x[i] * scale);
}

__global__ void dequantize_e4m3(const __nv_fp8_e4m3* q, int n, const float* amax, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float inv = fmaxf(*amax, 1e-12f) / 448.0f;
    y[i] = static_cast<float>(q[i]) * inv;
}

__global__ void raw_e5m2(const float* x, int n, __nv_fp8_storage_t* raw) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) raw[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
    if (i == 0) {
        __nv_fp8_e5m2 probe(1.5f);
        raw[0] ^= probe.__x & 0;
    }
}

int main() {
    const int n = 1 << 20;
    float *x, *y, *amax;
    __nv_fp8_e4m3* q;
    __nv_fp8_storage_t* raw;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&amax, sizeof(float));
    cudaMalloc(&q, n * sizeof(__nv_fp8_e4m3));
    cudaMalloc(&raw, n * sizeof(__nv_fp8_storage_t));
    cudaMemset(x, 0, n * sizeof(float));
    cudaMemset(amax, 0, sizeof(float));
    absmax<<<128, 256>>>(x, n, amax);
    quantize_e4m3<<<n / 256, 256>>>(x, n, amax, q);
    dequantize_e4m3<<<n / 256, 256>>>(q, n, amax, y);
    raw_e5m2<<<n / 256, 256>>>(x, n, raw);
    std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(x); cudaFree(y); cudaFree(amax); cudaFree(q); cudaFree(raw);
    return 0;
}
