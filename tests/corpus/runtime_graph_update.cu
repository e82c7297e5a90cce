// Exercises: updating an instantiated CUDA graph in place (cudaGraphExecUpdate with the CUDA 12 cudaGraphExecUpdateResultInfo, fallback re-instantiation with cudaGraphInstantiateWithFlags).
#include <cstdio>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t rc = call;                                                          \
        if (rc != cudaSuccess) {                                                        \
            std::fprintf(stderr, "%s -> %s\n", #call, cudaGetErrorString(rc));          \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

__global__ void decay(float* v, int n, float rate) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= rate;
}

static cudaError_t capture(cudaStream_t stream, float* v, int n, float rate, cudaGraph_t* graph) {
    cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return e;
    for (int k = 0; k < 4; ++k) decay<<<(n + 255) / 256, 256, 0, stream>>>(v, n, rate);
    return cudaStreamEndCapture(stream, graph);
}

int main() {
    const int n = 1 << 18;
    float* v;
    CUDA_CHECK(cudaMalloc(&v, n * sizeof(float)));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    cudaGraph_t graph;
    CUDA_CHECK(capture(stream, v, n, 0.99f, &graph));
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));

    for (int round = 0; round < 10; ++round) {
        cudaGraph_t next;
        CUDA_CHECK(capture(stream, v, n, 0.99f - 0.01f * round, &next));
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(exec, next, &info) != cudaSuccess ||
            info.result != cudaGraphExecUpdateSuccess) {
            cudaGetLastError();
            CUDA_CHECK(cudaGraphExecDestroy(exec));
            CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, next, 0));
        }
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaGraphDestroy(next));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::printf("done\n");
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(v));
    return 0;
}
