// Exercises: CUDA graphs built by stream capture (cudaStreamBeginCapture/EndCapture, cudaStreamIsCapturing, cudaGraphInstantiate with the CUDA 12 flags signature, cudaGraphLaunch replay).
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t rc = call;                                                          \
        if (rc != cudaSuccess) {                                                        \
            std::fprintf(stderr, "[%s:%d] %s\n", __FILE__, __LINE__,                    \
                         cudaGetErrorString(rc));                                       \
            std::abort();                                                               \
        }                                                                               \
    } while (0)

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void clamp(float* y, int n, float lo, float hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(y[i], lo), hi);
}

int main() {
    const int n = 1 << 16;
    float *x, *y;
    CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&y, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(x, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(y, 0, n * sizeof(float)));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int step = 0; step < 8; ++step) {
        axpy<<<(n + 255) / 256, 256, 0, stream>>>(0.5f, x, y, n);
        clamp<<<(n + 255) / 256, 256, 0, stream>>>(y, n, -1.0f, 1.0f);
    }
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));

    cudaStreamCaptureStatus status;
    CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status != cudaStreamCaptureStatusNone) std::printf("still capturing?\n");

    size_t node_count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
    std::printf("captured %zu nodes\n", node_count);

    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int iter = 0; iter < 100; ++iter) CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    return 0;
}
