// Exercises: runtime memory API (cudaMalloc/cudaMemcpy/cudaMemset/cudaMallocPitch/cudaMemcpy2D, pinned host memory) behind a CUDA_CHECK macro.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                         cudaGetErrorString(err_));                                   \
            std::exit(EXIT_FAILURE);                                                  \
        }                                                                             \
    } while (0)

__global__ void scale_rows(float* data, size_t pitch, int width, int height, float factor) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(data) + y * pitch);
        row[x] *= factor;
    }
}

int main() {
    const int width = 1000, height = 300;
    const size_t host_pitch = width * sizeof(float);

    float* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, host_pitch * height));
    for (int i = 0; i < width * height; ++i) host[i] = static_cast<float>(i % 97);

    float* dev = nullptr;
    size_t dev_pitch = 0;
    CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&dev), &dev_pitch, host_pitch, height));
    CUDA_CHECK(cudaMemset2D(dev, dev_pitch, 0, host_pitch, height));
    CUDA_CHECK(cudaMemcpy2D(dev, dev_pitch, host, host_pitch, host_pitch, height,
                            cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    scale_rows<<<grid, block>>>(dev, dev_pitch, width, height, 0.5f);
    CUDA_CHECK(cudaGetLastError());

    CUDA_CHECK(cudaMemcpy2D(host, host_pitch, dev, dev_pitch, host_pitch, height,
                            cudaMemcpyDeviceToHost));

    // A flat buffer too, copied back with the plain API.
    std::vector<int> counts(4096, 7);
    int* dev_counts = nullptr;
    CUDA_CHECK(cudaMalloc(&dev_counts, counts.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dev_counts, counts.data(), counts.size() * sizeof(int),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dev_counts, 0, 16 * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(counts.data(), dev_counts, counts.size() * sizeof(int),
                          cudaMemcpyDefault));

    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::printf("host[1]=%f counts[0]=%d free=%zu/%zu\n", host[1], counts[0], free_bytes,
                total_bytes);

    CUDA_CHECK(cudaFree(dev_counts));
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaFreeHost(host));
    return 0;
}
