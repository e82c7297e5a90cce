// Exercises: streams with priorities and flags, events for timing and cross-stream waits, cudaLaunchHostFunc and stream queries.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(expr)                                                                  \
    do {                                                                                  \
        const cudaError_t e = (expr);                                                     \
        if (e != cudaSuccess) {                                                           \
            fprintf(stderr, "%s failed (%s)\n", #expr, cudaGetErrorString(e));            \
            return -1;                                                                    \
        }                                                                                 \
    } while (0)

__global__ void busy_add(float* v, int n, float amount, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i];
    for (int r = 0; r < rounds; ++r) x = x * 0.999f + amount;
    v[i] = x;
}

static void CUDART_CB report_done(void* user_data) {
    const char* name = static_cast<const char*>(user_data);
    std::printf("host callback: %s finished\n", name);
}

int main() {
    const int n = 1 << 20;
    const int chunks = 4;
    const int chunk = n / chunks;

    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));

    std::vector<cudaStream_t> streams(chunks);
    for (int s = 0; s < chunks; ++s) {
        int priority = (s == 0) ? greatest : least;
        CUDA_CHECK(cudaStreamCreateWithPriority(&streams[s], cudaStreamNonBlocking, priority));
    }

    float* host = nullptr;
    float* dev = nullptr;
    CUDA_CHECK(cudaHostAlloc(&host, n * sizeof(float), cudaHostAllocDefault));
    CUDA_CHECK(cudaMalloc(&dev, n * sizeof(float)));
    for (int i = 0; i < n; ++i) host[i] = 1.0f;

    cudaEvent_t start, stop, first_done;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventCreateWithFlags(&first_done, cudaEventDisableTiming));

    CUDA_CHECK(cudaEventRecord(start, streams[0]));
    for (int s = 0; s < chunks; ++s) {
        float* h = host + s * chunk;
        float* d = dev + s * chunk;
        CUDA_CHECK(cudaMemcpyAsync(d, h, chunk * sizeof(float), cudaMemcpyHostToDevice,
                                   streams[s]));
        busy_add<<<(chunk + 255) / 256, 256, 0, streams[s]>>>(d, chunk, 0.25f, 64);
        CUDA_CHECK(cudaMemcpyAsync(h, d, chunk * sizeof(float), cudaMemcpyDeviceToHost,
                                   streams[s]));
        if (s == 0) CUDA_CHECK(cudaEventRecord(first_done, streams[0]));
    }
    // The last stream must not finish before the first chunk is back.
    CUDA_CHECK(cudaStreamWaitEvent(streams[chunks - 1], first_done, 0));
    static char label[] = "last chunk";
    CUDA_CHECK(cudaLaunchHostFunc(streams[chunks - 1], report_done, label));
    CUDA_CHECK(cudaEventRecord(stop, streams[chunks - 1]));

    if (cudaStreamQuery(streams[1]) == cudaErrorNotReady) std::printf("stream 1 still busy\n");
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("pipeline took %.3f ms, host[0]=%f\n", ms, host[0]);

    CUDA_CHECK(cudaDeviceSynchronize());
    for (cudaStream_t s : streams) CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaEventDestroy(first_done));
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaFreeHost(host));
    return 0;
}
