// Exercises: static and dynamic shared memory (padded tile transpose, extern __shared__ with cudaFuncSetAttribute opt-in), __syncthreads variants and __constant__ memory.
#include <cstdio>

#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8

__constant__ float c_weights[64];

__global__ void transpose_padded(float* out, const float* in, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];  // +1 avoids bank conflicts
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void weighted_window(const float* in, float* out, int n, int radius) {
    extern __shared__ float window[];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + radius;
    window[l] = g < n ? in[g] : 0.f;
    if (threadIdx.x < radius) {
        window[l - radius] = g >= radius ? in[g - radius] : 0.f;
        int r = g + blockDim.x;
        window[l + blockDim.x] = r < n ? in[r] : 0.f;
    }
    __syncthreads();
    float acc = 0.f;
    for (int k = -radius; k <= radius; ++k) acc += c_weights[k + radius] * window[l + k];
    int any_negative = __syncthreads_or(acc < 0.f);
    int count_big = __syncthreads_count(acc > 10.f);
    if (g < n) out[g] = any_negative ? -acc : acc + 0.f * count_big;
}

int main() {
    const int w = 1024, h = 768, n = w * h, radius = 16;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    float weights[64] = {};
    for (int k = 0; k <= 2 * radius; ++k) weights[k] = 1.f / (2 * radius + 1);
    cudaMemcpyToSymbol(c_weights, weights, sizeof(weights));
    dim3 grid((w + TILE_DIM - 1) / TILE_DIM, (h + TILE_DIM - 1) / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
    transpose_padded<<<grid, block>>>(out, in, w, h);
    const int threads = 1024;
    size_t smem = (threads + 2 * radius) * sizeof(float);
    cudaFuncSetAttribute(weighted_window, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    weighted_window<<<(n + threads - 1) / threads, threads, smem>>>(in, out, n, radius);
    float back[64];
    cudaMemcpyFromSymbol(back, c_weights, sizeof(back));
    std::printf("%s %f\n", cudaGetErrorString(cudaDeviceSynchronize()), back[0]);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
