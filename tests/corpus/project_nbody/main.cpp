// Exercises: a host-only .cpp file of a CUDA project that uses the runtime API through cuda_runtime_api.h.
#include <cstdio>

#include <cuda_runtime_api.h>

#include "body.h"

int main() {
    SimulationParams params{4096, 0.01f, 1e-3f};
    Body* bodies = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&bodies), params.count * sizeof(Body)) != cudaSuccess) {
        std::fprintf(stderr, "allocation failed\n");
        return 1;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    launch_init(bodies, params.count, 42ULL);
    for (int step = 0; step < 100; ++step) launch_integrate(bodies, params, stream);
    cudaError_t err = cudaStreamSynchronize(stream);
    std::printf("simulation: %s\n", cudaGetErrorString(err));
    cudaStreamDestroy(stream);
    cudaFree(bodies);
    return err == cudaSuccess ? 0 : 1;
}
