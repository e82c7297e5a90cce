// Exercises: NCCL collectives in a single process over all GPUs (ncclCommInitAll, ncclGroupStart/End, ncclAllReduce, ncclBroadcast, per-device streams).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#define NCCL_CHECK(cmd)                                                                 \
    do {                                                                                \
        ncclResult_t r = cmd;                                                           \
        if (r != ncclSuccess) {                                                         \
            printf("NCCL failure %s:%d '%s'\n", __FILE__, __LINE__, ncclGetErrorString(r)); \
            exit(EXIT_FAILURE);                                                         \
        }                                                                               \
    } while (0)

#define CUDA_CHECK(cmd)                                                                 \
    do {                                                                                \
        cudaError_t e = cmd;                                                            \
        if (e != cudaSuccess) {                                                         \
            printf("CUDA failure %s:%d '%s'\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            exit(EXIT_FAILURE);                                                         \
        }                                                                               \
    } while (0)

int main() {
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (devices < 1) return 0;
    const size_t count = 32 * 1024 * 1024;
    std::vector<int> device_list(devices);
    std::vector<float*> send(devices), recv(devices);
    std::vector<cudaStream_t> streams(devices);
    for (int d = 0; d < devices; ++d) {
        device_list[d] = d;
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMalloc(&send[d], count * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&recv[d], count * sizeof(float)));
        CUDA_CHECK(cudaMemset(send[d], 1, count * sizeof(float)));
        CUDA_CHECK(cudaStreamCreate(&streams[d]));
    }
    std::vector<ncclComm_t> comms(devices);
    NCCL_CHECK(ncclCommInitAll(comms.data(), devices, device_list.data()));

    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < devices; ++d)
        NCCL_CHECK(ncclAllReduce(send[d], recv[d], count, ncclFloat, ncclSum, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());

    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < devices; ++d)
        NCCL_CHECK(ncclBroadcast(recv[d], recv[d], count, ncclFloat, 0, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());

    for (int d = 0; d < devices; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaStreamSynchronize(streams[d]));
    }
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    printf("NCCL %d all-reduce over %d devices done\n", version, devices);
    for (int d = 0; d < devices; ++d) {
        CUDA_CHECK(cudaFree(send[d]));
        CUDA_CHECK(cudaFree(recv[d]));
        NCCL_CHECK(ncclCommDestroy(comms[d]));
    }
    return 0;
}
