// Exercises: user operators on double2/int4/float2 that HIP's vector types define too (vector-vector, vector-scalar, compound), beside ones HIP lacks (mixed types, a namespace-scope dot).
#include <cstdio>

#include <cuda_runtime.h>

__host__ __device__ inline double2 operator+(double2 a, double2 b) {
    return make_double2(a.x + b.x, a.y + b.y);
}
__host__ __device__ inline double2 operator*(double2 a, double s) {
    return make_double2(a.x * s, a.y * s);
}
__host__ __device__ inline void operator-=(int4& a, const int4& b) {
    a.x -= b.x;
    a.y -= b.y;
    a.z -= b.z;
    a.w -= b.w;
}
__host__ __device__ inline float2 operator/(const float2& a, float s) {
    return make_float2(a.x / s, a.y / s);
}
// HIP has no float2 * float3: this one stays for both.
__host__ __device__ inline float3 operator*(const float2& a, const float3& b) {
    return make_float3(a.x * b.x, a.y * b.y, b.z);
}
__host__ __device__ inline float dot2(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }

__global__ void step(double2* pos, const double2* vel, int4* counts, float2* uv, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pos[i] = pos[i] + vel[i] * 0.01;
    counts[i] -= make_int4(1, 1, 1, 1);
    uv[i] = uv[i] / 2.f;
    float3 scaled = uv[i] * make_float3(1.f, 2.f, 3.f);
    uv[i].x = dot2(uv[i], uv[i]) + scaled.z;
}

int main() {
    const int n = 256;
    double2 *pos, *vel;
    int4* counts;
    float2* uv;
    cudaMalloc(&pos, n * sizeof(double2));
    cudaMalloc(&vel, n * sizeof(double2));
    cudaMalloc(&counts, n * sizeof(int4));
    cudaMalloc(&uv, n * sizeof(float2));
    step<<<1, n>>>(pos, vel, counts, uv, n);
    cudaDeviceSynchronize();
    double2 h = make_double2(1.0, 2.0) + make_double2(3.0, 4.0);
    std::printf("%g %g\n", h.x, h.y);
    cudaFree(pos);
    cudaFree(vel);
    cudaFree(counts);
    cudaFree(uv);
    return 0;
}
