// Exercises: thrust execution policies on a CUDA stream (thrust::cuda::par.on(stream)), thrust::device_ptr wrapping of cudaMalloc memory, copy_if and unique.
#include <cstdio>

#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/sort.h>
#include <thrust/unique.h>

struct is_even {
    __host__ __device__ bool operator()(int v) const { return (v & 1) == 0; }
};

int main() {
    const int n = 100000;
    int *raw_in, *raw_out;
    cudaMalloc(&raw_in, n * sizeof(int));
    cudaMalloc(&raw_out, n * sizeof(int));
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

    thrust::device_ptr<int> in(raw_in), out(raw_out);
    auto policy = thrust::cuda::par.on(stream);
    thrust::fill(policy, in, in + n, 3);
    thrust::fill(policy, in, in + n / 2, 4);
    auto end = thrust::copy_if(policy, in, in + n, out, is_even());
    int kept = static_cast<int>(end - out);
    thrust::sort(policy, out, out + kept);
    auto unique_end = thrust::unique(policy, out, out + kept);
    long evens = thrust::count_if(thrust::device, in, in + n, is_even());
    cudaStreamSynchronize(stream);
    std::printf("kept %d, %ld unique, %ld evens\n", kept, static_cast<long>(unique_end - out), evens);
    cudaFree(raw_in);
    cudaFree(raw_out);
    cudaStreamDestroy(stream);
    return 0;
}
