// Exercises: two-argument cudaEventCreate(&e, flags) (the C++ overload), the one-argument form, and the symbol API on scalars, arrays and structs.
#include <cstdio>

#include <cuda_runtime.h>

struct Params {
    float scale;
    int steps;
};

__constant__ float weights[8];
__constant__ Params params;
__device__ int hits;

__global__ void weigh(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * weights[i % 8] * params.scale;
        atomicAdd(&hits, 1);
    }
}

int main() {
    const int n = 1 << 16;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));

    float host_weights[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    Params host_params{0.5f, 3};
    int zero = 0;
    cudaMemcpyToSymbol(weights, host_weights, sizeof(host_weights));
    cudaMemcpyToSymbol(params, &host_params, sizeof(host_params));
    cudaMemcpyToSymbolAsync(hits, &zero, sizeof(zero), 0, cudaMemcpyHostToDevice, 0);

    cudaEvent_t start, stop, marker;
    cudaEventCreate(&start);
    cudaEventCreate(&stop, cudaEventDefault);
    cudaEventCreate(&marker, cudaEventDisableTiming | cudaEventBlockingSync);

    cudaEventRecord(start);
    weigh<<<(n + 255) / 256, 256>>>(in, out, n);
    cudaEventRecord(marker);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);

    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    int host_hits = 0;
    cudaMemcpyFromSymbol(&host_hits, hits, sizeof(host_hits));
    void* hits_address = nullptr;
    size_t weights_size = 0;
    cudaGetSymbolAddress(&hits_address, hits);
    cudaGetSymbolSize(&weights_size, weights);
    std::printf("%d hits in %.3f ms (%zu bytes of weights at %p)\n", host_hits, ms, weights_size,
                hits_address);

    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaEventDestroy(marker);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
