// Exercises: __nv_bfloat16 / __nv_bfloat162 (cuda_bf16.h): conversions, arithmetic, fused ops and a bf16 RMSNorm kernel with float accumulation.
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void rmsnorm_bf16(const __nv_bfloat16* x, const __nv_bfloat16* gamma, __nv_bfloat16* y,
                             int hidden, float eps) {
    __shared__ float shared_sum[32];
    const __nv_bfloat16* row = x + static_cast<size_t>(blockIdx.x) * hidden;
    float sum_sq = 0.f;
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
        float v = __bfloat162float(row[i]);
        sum_sq += v * v;
    }
    for (int off = 16; off > 0; off >>= 1) sum_sq += __shfl_xor_sync(0xffffffff, sum_sq, off);
    if ((threadIdx.x & 31) == 0) shared_sum[threadIdx.x >> 5] = sum_sq;
    __syncthreads();
    if (threadIdx.x < 32) {
        float s = threadIdx.x < blockDim.x / 32 ? shared_sum[threadIdx.x] : 0.f;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
        if (threadIdx.x == 0) shared_sum[0] = rsqrtf(s / hidden + eps);
    }
    __syncthreads();
    const float inv = shared_sum[0];
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
        float v = __bfloat162float(row[i]) * inv;
        y[static_cast<size_t>(blockIdx.x) * hidden + i] = __hmul(__float2bfloat16(v), gamma[i]);
    }
}

__global__ void bf16x2_ops(int n2, const __nv_bfloat162* a, const __nv_bfloat162* b,
                           __nv_bfloat162* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __nv_bfloat162 s = __hadd2(a[i], b[i]);
    __nv_bfloat162 f = __hadd2(__hmul2(a[i], b[i]), s);
    float2 as_float = __bfloat1622float2(f);
    out[i] = __float22bfloat162_rn(make_float2(as_float.x * 0.5f, as_float.y * 2.0f));
}

__global__ void bf16_scalar(int n, const __nv_bfloat16* a, __nv_bfloat16* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 v = a[i];
    __nv_bfloat16 one = __float2bfloat16_rn(1.0f);
    __nv_bfloat16 r = __hgt(v, one) ? __hsub(v, one) : __hneg(v);
    out[i] = __hadd(r, __float2bfloat16(static_cast<float>(i & 7)));
}

int main() {
    const int rows = 32, hidden = 4096;
    __nv_bfloat16 *x, *gamma, *y;
    cudaMalloc(&x, rows * hidden * sizeof(__nv_bfloat16));
    cudaMalloc(&gamma, hidden * sizeof(__nv_bfloat16));
    cudaMalloc(&y, rows * hidden * sizeof(__nv_bfloat16));
    cudaMemset(x, 0, rows * hidden * sizeof(__nv_bfloat16));
    cudaMemset(gamma, 0, hidden * sizeof(__nv_bfloat16));
    rmsnorm_bf16<<<rows, 256>>>(x, gamma, y, hidden, 1e-6f);
    bf16x2_ops<<<hidden / 256, 128>>>(hidden / 2, reinterpret_cast<__nv_bfloat162*>(x),
                                      reinterpret_cast<__nv_bfloat162*>(gamma),
                                      reinterpret_cast<__nv_bfloat162*>(y));
    bf16_scalar<<<hidden / 256, 256>>>(hidden, x, y);
    __nv_bfloat16 first;
    cudaMemcpy(&first, y, sizeof(first), cudaMemcpyDeviceToHost);
    std::printf("y[0] = %f\n", __bfloat162float(first));
    cudaFree(x); cudaFree(gamma); cudaFree(y);
    return 0;
}
