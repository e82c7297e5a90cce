// Exercises: single/double math functions and fast intrinsics (__expf, __fdividef, rsqrtf, sincosf, __saturatef, rounding-mode intrinsics, bit casts).
#include <cmath>
#include <cstdio>

#include <cuda_runtime.h>

__device__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    return 0.5f * x * (1.f + tanhf(k0 * (x + k1 * x * x * x)));
}

__device__ float fast_sigmoid(float x) { return __fdividef(1.f, 1.f + __expf(-x)); }

__global__ void activations(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float s, c;
    sincosf(v, &s, &c);
    float a = gelu_tanh(v) + fast_sigmoid(v) + __logf(1.f + fabsf(v)) + __powf(fabsf(v), 0.5f);
    float b = rsqrtf(1.f + v * v) + __saturatef(v) + fmaf(s, c, 1.f) + exp2f(v) + log1pf(fabsf(v));
    float r = __fadd_rn(__fmul_rz(a, b), __fsqrt_rn(fabsf(v)));
    y[i] = r + erff(v) + erfcinvf(0.5f) + norm3df(v, s, c) + copysignf(1.f, v) + truncf(v);
}

__global__ void doubles(const double* x, double* y, long long* rounded, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    double s, c;
    sincospi(v, &s, &c);
    y[i] = fma(exp(v), log(fabs(v) + 1.0), rsqrt(v * v + 1.0)) + hypot(s, c) + cbrt(v) +
           __dadd_rn(v, 1.0) + lgamma(fabs(v) + 1.0);
    rounded[i] = __double2ll_rn(v) + llround(v);
}

__global__ void conversions(const float* x, int* as_int, unsigned int* bits, float* back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    as_int[i] = __float2int_rn(x[i]) + __float2int_rz(x[i]) + __float2int_ru(x[i]) +
                __float2int_rd(x[i]);
    bits[i] = __float_as_uint(x[i]);
    back[i] = __int_as_float(__float_as_int(x[i])) + __int2float_rn(i) + __uint2float_rn(bits[i]);
}

int main() {
    const int n = 4096;
    float *x, *y, *back;
    double *dx, *dy;
    long long* r;
    int* ai;
    unsigned int* bits;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&back, n * sizeof(float));
    cudaMalloc(&dx, n * sizeof(double));
    cudaMalloc(&dy, n * sizeof(double));
    cudaMalloc(&r, n * sizeof(long long));
    cudaMalloc(&ai, n * sizeof(int));
    cudaMalloc(&bits, n * sizeof(unsigned int));
    activations<<<n / 256, 256>>>(x, y, n);
    doubles<<<n / 256, 256>>>(dx, dy, r, n);
    conversions<<<n / 256, 256>>>(x, ai, bits, back, n);
    std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(x); cudaFree(y); cudaFree(back); cudaFree(dx); cudaFree(dy);
    cudaFree(r); cudaFree(ai); cudaFree(bits);
    return 0;
}
