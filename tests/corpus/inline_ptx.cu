// Exercises: inline PTX assembly (lane id, global timer, cache-hinted loads) that has no HIP translation.
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

__device__ __forceinline__ unsigned int lane_id() {
    unsigned int id;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
}

__device__ __forceinline__ uint64_t global_timer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ float load_streaming(const float* p) {
    float v;
    asm volatile("ld.global.cs.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

__global__ void timed_copy(const float* in, float* out, int n, uint64_t* elapsed) {
    uint64_t start = global_timer_ns();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = load_streaming(in + i) + static_cast<float>(lane_id() == 0);
    if (threadIdx.x == 0) atomicAdd(reinterpret_cast<unsigned long long*>(elapsed),
                                    static_cast<unsigned long long>(global_timer_ns() - start));
}

int main() {
    const int n = 1 << 20;
    float *in, *out;
    uint64_t* elapsed;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&elapsed, sizeof(uint64_t));
    cudaMemset(elapsed, 0, sizeof(uint64_t));
    timed_copy<<<n / 256, 256>>>(in, out, n, elapsed);
    uint64_t host = 0;
    cudaMemcpy(&host, elapsed, sizeof(host), cudaMemcpyDeviceToHost);
    std::printf("%llu ns in blocks\n", static_cast<unsigned long long>(host));
    cudaFree(in); cudaFree(out); cudaFree(elapsed);
    return 0;
}
