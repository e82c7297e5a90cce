// Exercises: cuRAND device API (curand_init, curandState/curandStatePhilox4_32_10_t, curand_uniform, curand_normal4) in a Monte-Carlo pi estimate and dropout mask.
#include <cstdio>

#include <cuda_runtime.h>
#include <curand_kernel.h>

__global__ void setup_states(curandState* states, unsigned long long seed) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(seed, id, 0, &states[id]);
}

__global__ void estimate_pi(curandState* states, int samples, unsigned long long* inside) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState local = states[id];
    unsigned int hits = 0;
    for (int s = 0; s < samples; ++s) {
        float x = curand_uniform(&local);
        float y = curand_uniform(&local);
        hits += (x * x + y * y <= 1.0f);
    }
    states[id] = local;
    atomicAdd(inside, static_cast<unsigned long long>(hits));
}

__global__ void dropout(const float4* in, float4* out, int n4, float keep, unsigned long long seed,
                        unsigned long long offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    curandStatePhilox4_32_10_t state;
    curand_init(seed, i, offset, &state);
    float4 r = curand_uniform4(&state);
    float4 noise = curand_normal4(&state);
    float4 v = in[i];
    float scale = 1.0f / keep;
    out[i] = make_float4(r.x < keep ? v.x * scale : 0.f, r.y < keep ? v.y * scale : 0.f,
                         r.z < keep ? v.z * scale : 0.f, r.w < keep ? v.w * scale + noise.w * 0.f : 0.f);
    unsigned int raw = curand(&state);
    (void)raw;
}

int main() {
    const int blocks = 64, threads = 128;
    curandState* states;
    unsigned long long* inside;
    cudaMalloc(&states, blocks * threads * sizeof(curandState));
    cudaMalloc(&inside, sizeof(unsigned long long));
    cudaMemset(inside, 0, sizeof(unsigned long long));
    setup_states<<<blocks, threads>>>(states, 2024ULL);
    estimate_pi<<<blocks, threads>>>(states, 1000, inside);
    unsigned long long host = 0;
    cudaMemcpy(&host, inside, sizeof(host), cudaMemcpyDeviceToHost);
    std::printf("pi ~ %f\n", 4.0 * host / (double(blocks) * threads * 1000));

    const int n4 = 1 << 18;
    float4 *in, *out;
    cudaMalloc(&in, n4 * sizeof(float4));
    cudaMalloc(&out, n4 * sizeof(float4));
    dropout<<<n4 / 256, 256>>>(in, out, n4, 0.9f, 7ULL, 0ULL);
    cudaDeviceSynchronize();
    cudaFree(states); cudaFree(inside); cudaFree(in); cudaFree(out);
    return 0;
}
