// Exercises: the legacy cuBLAS (v1) API of <cublas.h>: no handle, scalars by value, cublasAlloc/cublasSetVector, which hipBLAS's handle API cannot take by renaming.
#include <cstdio>

#include <cublas.h>

int main() {
    const int n = 1024;
    float host_x[n], host_y[n];
    for (int i = 0; i < n; ++i) {
        host_x[i] = 1.f;
        host_y[i] = 2.f;
    }
    if (cublasInit() != CUBLAS_STATUS_SUCCESS) return 1;
    float *x, *y;
    cublasAlloc(n, sizeof(float), reinterpret_cast<void**>(&x));
    cublasAlloc(n, sizeof(float), reinterpret_cast<void**>(&y));
    cublasSetVector(n, sizeof(float), host_x, 1, x, 1);
    cublasSetVector(n, sizeof(float), host_y, 1, y, 1);
    cublasSaxpy(n, 3.f, x, 1, y, 1);
    float norm = cublasSnrm2(n, y, 1);
    cublasSscal(n, 0.5f, y, 1);
    cublasGetVector(n, sizeof(float), y, 1, host_y, 1);
    std::printf("norm %g, y[0] %g, status %d\n", norm, host_y[0], (int)cublasGetError());
    cublasFree(x);
    cublasFree(y);
    cublasShutdown();
    return 0;
}
