// Exercises: multi-GPU peer access (cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess, cudaMemcpyPeerAsync) and per-device streams.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t error = call;                                                        \
        if (error != cudaSuccess) {                                                      \
            fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\"\n", __FILE__,         \
                    __LINE__, static_cast<int>(error), cudaGetErrorName(error), #call);  \
            return EXIT_FAILURE;                                                         \
        }                                                                                \
    } while (0)

__global__ void add_remote(float* local, const float* remote, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) local[i] += remote[i];
}

int main() {
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (devices < 2) {
        std::printf("needs two GPUs, found %d\n", devices);
        return 0;
    }
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    std::vector<float*> buffers(2, nullptr);
    std::vector<cudaStream_t> streams(2);
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMalloc(&buffers[d], bytes));
        CUDA_CHECK(cudaMemset(buffers[d], 0, bytes));
        CUDA_CHECK(cudaStreamCreate(&streams[d]));
    }

    int can01 = 0, can10 = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    if (can01 && can10) {
        CUDA_CHECK(cudaSetDevice(0));
        cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // clear it
        else CUDA_CHECK(e);
        CUDA_CHECK(cudaSetDevice(1));
        CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));

        // Direct load over the link: device 0's kernel reads device 1's memory.
        CUDA_CHECK(cudaSetDevice(0));
        add_remote<<<(n + 255) / 256, 256, 0, streams[0]>>>(buffers[0], buffers[1], n);
        CUDA_CHECK(cudaGetLastError());
    }
    // Works with or without peer access (staged through the host when disabled).
    CUDA_CHECK(cudaMemcpyPeerAsync(buffers[1], 1, buffers[0], 0, bytes, streams[0]));
    CUDA_CHECK(cudaStreamSynchronize(streams[0]));

    int attr = 0;
    CUDA_CHECK(cudaDeviceGetP2PAttribute(&attr, cudaDevP2PAttrPerformanceRank, 0, 1));
    std::printf("p2p performance rank: %d\n", attr);

    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        if (can01 && can10) CUDA_CHECK(cudaDeviceDisablePeerAccess(1 - d));
        CUDA_CHECK(cudaStreamDestroy(streams[d]));
        CUDA_CHECK(cudaFree(buffers[d]));
    }
    return 0;
}
