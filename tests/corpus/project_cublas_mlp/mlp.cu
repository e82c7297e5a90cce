// Exercises: cuBLAS GEMMs inside a C++ class spread over files (handle lifetime, stream binding, column-major GEMM chain).
#include <cstdio>
#include <stdexcept>

#include "mlp.h"

#define CUBLAS_THROW(call)                                                       \
    do {                                                                         \
        cublasStatus_t st = (call);                                              \
        if (st != CUBLAS_STATUS_SUCCESS)                                         \
            throw std::runtime_error(std::string(#call) + ": " +                 \
                                     cublasGetStatusString(st));                 \
    } while (0)

Mlp::Mlp(int in_features, int hidden, int out_features, cudaStream_t stream)
    : in_(in_features), hidden_(hidden), out_(out_features), stream_(stream) {
    CUBLAS_THROW(cublasCreate(&handle_));
    CUBLAS_THROW(cublasSetStream(handle_, stream_));
    cudaMalloc(&w1_, sizeof(float) * hidden_ * in_);
    cudaMalloc(&b1_, sizeof(float) * hidden_);
    cudaMalloc(&w2_, sizeof(float) * out_ * hidden_);
    cudaMalloc(&b2_, sizeof(float) * out_);
}

Mlp::~Mlp() {
    cublasDestroy(handle_);
    cudaFree(w1_); cudaFree(b1_); cudaFree(w2_); cudaFree(b2_); cudaFree(h_);
}

void Mlp::forward(const float* x, float* y, int batch) {
    if (batch > capacity_) {
        cudaFree(h_);
        cudaMalloc(&h_, sizeof(float) * hidden_ * batch);
        capacity_ = batch;
    }
    const float one = 1.f, zero = 0.f;
    CUBLAS_THROW(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, hidden_, batch, in_, &one, w1_,
                             hidden_, x, in_, &zero, h_, hidden_));
    add_bias_relu(h_, b1_, hidden_, batch, true, stream_);
    CUBLAS_THROW(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, out_, batch, hidden_, &one, w2_,
                             out_, h_, hidden_, &zero, y, out_));
    add_bias_relu(y, b2_, out_, batch, false, stream_);
}
