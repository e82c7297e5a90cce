// Exercises: __half and __half2 arithmetic (cuda_fp16.h): conversions, __hadd/__hmul/__hfma, half2 vector math, hexp/hsqrt, comparisons and a mixed-precision dot product.
#include <cstdio>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void half_axpy(int n, __half a, const __half* x, __half* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

// Two elements per thread with __half2.
__global__ void half2_scale_bias(int n2, const __half2* x, __half2* y, float scale, float bias) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 s = __float2half2_rn(scale);
    __half2 b = __floats2half2_rn(bias, bias);
    __half2 v = __hfma2(x[i], s, b);
    v = __hmul2(v, h2exp(__hneg2(__habs2(v))));
    y[i] = __hadd2(v, __halves2half2(__low2half(v), __high2half(v)));
}

__global__ void dot_half_accumulate_float(int n, const __half* a, const __half* b, float* out) {
    __shared__ float partial[256];
    float sum = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += __half2float(a[i]) * __half2float(b[i]);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

__global__ void half_misc(int n, const __half* x, __half* y, int* nan_count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half v = x[i];
    if (__hisnan(v)) atomicAdd(nan_count, 1);
    __half r = __hgt(v, __float2half(0.f)) ? hsqrt(v) : __hneg(v);
    r = __hmax(r, __ushort_as_half(0x3c00));  // at least 1.0
    y[i] = __hdiv(r, __int2half_rn(3)) + __float2half(0.5f) * v;
}

int main() {
    const int n = 1 << 16;
    __half *x, *y;
    float* out;
    int* nans;
    cudaMalloc(&x, n * sizeof(__half));
    cudaMalloc(&y, n * sizeof(__half));
    cudaMalloc(&out, sizeof(float));
    cudaMalloc(&nans, sizeof(int));
    cudaMemset(x, 0, n * sizeof(__half));
    cudaMemset(out, 0, sizeof(float));
    half_axpy<<<n / 256, 256>>>(n, __float2half(2.0f), x, y);
    half2_scale_bias<<<n / 512, 256>>>(n / 2, reinterpret_cast<const __half2*>(x),
                                       reinterpret_cast<__half2*>(y), 0.5f, 0.1f);
    dot_half_accumulate_float<<<64, 256>>>(n, x, y, out);
    half_misc<<<n / 256, 256>>>(n, x, y, nans);
    float dot = 0.f;
    cudaMemcpy(&dot, out, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("dot = %f\n", dot);
    cudaFree(x); cudaFree(y); cudaFree(out); cudaFree(nans);
    return 0;
}
