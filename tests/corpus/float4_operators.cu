// Exercises: user-defined arithmetic operators and helpers on float4/float3/float2 (HIP's vector types already define them).
#include <cstdio>

#include <cuda_runtime.h>

inline __host__ __device__ float4 operator+(const float4& a, const float4& b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
inline __host__ __device__ float4 operator*(const float4& a, float s) {
    return make_float4(a.x * s, a.y * s, a.z * s, a.w * s);
}
inline __host__ __device__ void operator+=(float4& a, const float4& b) {
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
}
inline __host__ __device__ float3 operator-(const float3& a, const float3& b) {
    return make_float3(a.x - b.x, a.y - b.y, a.z - b.z);
}
inline __host__ __device__ float3 operator*(float s, const float3& v) {
    return make_float3(s * v.x, s * v.y, s * v.z);
}
inline __host__ __device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
inline __host__ __device__ float dot(const float3& a, const float3& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline __host__ __device__ float3 make_float3(const float4& v) { return make_float3(v.x, v.y, v.z); }

// RGBA blur along x with float4 loads.
__global__ void blur_rows(const float4* in, float4* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= width || y >= height) return;
    const float4* row = in + y * width;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int dx = -2; dx <= 2; ++dx) {
        int xx = min(max(x + dx, 0), width - 1);
        acc += row[xx] * 0.2f;
    }
    out[y * width + x] = acc + make_float4(0.f, 0.f, 0.f, 0.f);
}

__global__ void distances(const float4* points, const float3 origin, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 d = make_float3(points[i]) - origin;
        out[i] = sqrtf(dot(d, 0.5f * d));
    }
}

int main() {
    const int w = 640, h = 480;
    float4 *in, *out;
    float* dist;
    cudaMalloc(&in, w * h * sizeof(float4));
    cudaMalloc(&out, w * h * sizeof(float4));
    cudaMalloc(&dist, w * h * sizeof(float));
    cudaMemset(in, 0, w * h * sizeof(float4));
    blur_rows<<<dim3((w + 127) / 128, h), 128>>>(in, out, w, h);
    distances<<<(w * h + 255) / 256, 256>>>(in, make_float3(1.f, 2.f, 3.f), dist, w * h);
    float2 host = make_float2(1.f, 2.f) + make_float2(3.f, 4.f);
    std::printf("%f %s\n", host.x, cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(in);
    cudaFree(out);
    cudaFree(dist);
    return 0;
}
