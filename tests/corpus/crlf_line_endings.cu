// Exercises: a file with Windows CRLF line endings (includes, a multi-line macro with backslash-CRLF continuations, warp ballots and the runtime API).
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK_CUDA(call)                                                   \
    do {                                                                   \
        cudaError_t e_ = (call);                                           \
        if (e_ != cudaSuccess) {                                           \
            printf("CUDA: %s (%s:%d)\n", cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                              \
            return 1;                                                      \
        }                                                                  \
    } while (0)

__global__ void count_nonzero(const int* v, int n, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int mask = __ballot_sync(0xFFFFFFFFu, i < n && v[i] != 0);
    if ((threadIdx.x % 32) == 0) atomicAdd(count, __popc(mask));
}

int main() {
    const int n = 1 << 20;
    int *v, *count;
    CHECK_CUDA(cudaMalloc(&v, n * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&count, sizeof(int)));
    CHECK_CUDA(cudaMemset(v, 0, n * sizeof(int)));
    CHECK_CUDA(cudaMemset(count, 0, sizeof(int)));
    count_nonzero<<<n / 256, 256>>>(v, n, count);
    CHECK_CUDA(cudaGetLastError());
    int host = 0;
    CHECK_CUDA(cudaMemcpy(&host, count, sizeof(int), cudaMemcpyDeviceToHost));
    printf("%d non-zero\n", host);
    CHECK_CUDA(cudaFree(v));
    CHECK_CUDA(cudaFree(count));
    return 0;
}
