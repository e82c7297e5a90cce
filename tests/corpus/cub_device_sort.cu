// Exercises: CUB device-wide algorithms with the two-phase temp-storage idiom (cub::DeviceRadixSort::SortPairs, cub::DeviceReduce::Sum, cub::DeviceScan::InclusiveSum, DoubleBuffer).
#include <cstdio>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

int main() {
    const int n = 1 << 20;
    unsigned int *keys_in, *keys_out;
    int *values_in, *values_out, *total, *prefix;
    cudaMalloc(&keys_in, n * sizeof(unsigned int));
    cudaMalloc(&keys_out, n * sizeof(unsigned int));
    cudaMalloc(&values_in, n * sizeof(int));
    cudaMalloc(&values_out, n * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaMalloc(&prefix, n * sizeof(int));
    cudaMemset(keys_in, 0, n * sizeof(unsigned int));
    cudaMemset(values_in, 0, n * sizeof(int));
    cudaStream_t stream;
    cudaStreamCreate(&stream);

    void* temp = nullptr;
    size_t temp_bytes = 0;
    cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                    0, 32, stream);
    cudaMalloc(&temp, temp_bytes);
    cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                    0, 32, stream);
    cudaFree(temp);

    // Ping-pong buffers: the sort picks which one holds the result.
    cub::DoubleBuffer<unsigned int> keys(keys_in, keys_out);
    cub::DoubleBuffer<int> values(values_in, values_out);
    temp = nullptr;
    temp_bytes = 0;
    cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, values, n);
    cudaMalloc(&temp, temp_bytes);
    cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, values, n);
    cudaFree(temp);

    temp = nullptr;
    temp_bytes = 0;
    cub::DeviceReduce::Sum(temp, temp_bytes, values.Current(), total, n, stream);
    cudaMalloc(&temp, temp_bytes);
    cub::DeviceReduce::Sum(temp, temp_bytes, values.Current(), total, n, stream);
    cudaFree(temp);

    temp = nullptr;
    temp_bytes = 0;
    cub::DeviceScan::InclusiveSum(temp, temp_bytes, values.Current(), prefix, n, stream);
    cudaMalloc(&temp, temp_bytes);
    cub::DeviceScan::InclusiveSum(temp, temp_bytes, values.Current(), prefix, n, stream);
    cudaFree(temp);

    cudaStreamSynchronize(stream);
    int host_total = 0;
    cudaMemcpy(&host_total, total, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("sum %d\n", host_total);
    cudaFree(keys_in); cudaFree(keys_out); cudaFree(values_in); cudaFree(values_out);
    cudaFree(total); cudaFree(prefix);
    cudaStreamDestroy(stream);
    return 0;
}
