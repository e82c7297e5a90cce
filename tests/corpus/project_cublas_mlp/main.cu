// Exercises: the driver of the cuBLAS project (a class from mlp.h used with a stream).
#include <cstdio>

#include "mlp.h"

int main() {
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    const int batch = 64;
    Mlp net(784, 256, 10, stream);
    float *x, *y;
    cudaMalloc(&x, sizeof(float) * 784 * batch);
    cudaMalloc(&y, sizeof(float) * 10 * batch);
    cudaMemsetAsync(x, 0, sizeof(float) * 784 * batch, stream);
    net.forward(x, y, batch);
    cudaStreamSynchronize(stream);
    std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(x);
    cudaFree(y);
    cudaStreamDestroy(stream);
    return 0;
}
