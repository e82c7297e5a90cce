// Exercises: thrust containers and algorithms (device_vector, transform, reduce, sort_by_key, transform_reduce with functors, counting iterators, raw_pointer_cast).
#include <cstdio>

#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

struct saxpy_functor {
    float a;
    explicit saxpy_functor(float a_) : a(a_) {}
    __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

struct square {
    __host__ __device__ float operator()(float x) const { return x * x; }
};

__global__ void touch(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0f;
}

int main() {
    const int n = 1 << 16;
    thrust::device_vector<float> x(n), y(n, 1.0f);
    thrust::sequence(x.begin(), x.end(), 0.0f, 0.001f);
    thrust::transform(x.begin(), x.end(), y.begin(), y.begin(), saxpy_functor(2.0f));
    float norm2 = thrust::transform_reduce(y.begin(), y.end(), square(), 0.0f, thrust::plus<float>());

    thrust::device_vector<int> keys(n);
    thrust::transform(thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n),
                      keys.begin(), [] __host__ __device__(int i) { return (i * 7919) % 1000; });
    thrust::sort_by_key(keys.begin(), keys.end(), y.begin());
    int key_sum = thrust::reduce(keys.begin(), keys.end(), 0, thrust::plus<int>());
    float largest = thrust::reduce(y.begin(), y.end(), -1e30f, thrust::maximum<float>());

    // Hand-written kernels still work on thrust's storage.
    touch<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(y.data()), n);
    cudaDeviceSynchronize();

    thrust::host_vector<float> host = y;
    std::printf("norm2=%f keys=%d max=%f first=%f\n", norm2, key_sum, largest, host[0]);
    return 0;
}
