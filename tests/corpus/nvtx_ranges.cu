// Exercises: NVTX profiling ranges and markers (nvtx3/nvToolsExt.h: nvtxRangePushA/Pop, nvtxMarkA, nvtxRangeStartA/End) around kernel launches.
#include <cstdio>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

struct ScopedRange {
    explicit ScopedRange(const char* name) { nvtxRangePushA(name); }
    ~ScopedRange() { nvtxRangePop(); }
};

__global__ void step(float* state, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) state[i] = state[i] * 0.9f + 0.1f;
}

int main() {
    const int n = 1 << 20;
    float* state;
    cudaMalloc(&state, n * sizeof(float));
    cudaMemset(state, 0, n * sizeof(float));
    nvtxRangeId_t whole = nvtxRangeStartA("simulation");
    for (int iteration = 0; iteration < 10; ++iteration) {
        ScopedRange range("iteration");
        step<<<n / 256, 256>>>(state, n);
        if (iteration == 5) nvtxMarkA("halfway");
    }
    cudaDeviceSynchronize();
    nvtxRangeEnd(whole);
    std::printf("done\n");
    cudaFree(state);
    return 0;
}
