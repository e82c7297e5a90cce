// A two-layer perceptron on cuBLAS: the class holds a cuBLAS handle and a stream.
#pragma once

#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

class Mlp {
public:
    Mlp(int in_features, int hidden, int out_features, cudaStream_t stream);
    ~Mlp();
    // x: [in_features x batch] column-major; returns y: [out_features x batch].
    void forward(const float* x, float* y, int batch);

private:
    int in_, hidden_, out_;
    cublasHandle_t handle_ = nullptr;
    cudaStream_t stream_;
    float *w1_ = nullptr, *b1_ = nullptr, *w2_ = nullptr, *b2_ = nullptr, *h_ = nullptr;
    int capacity_ = 0;
};

void add_bias_relu(float* m, const float* bias, int rows, int cols, bool relu, cudaStream_t s);
