// Exercises: cuRAND host API (generator creation, seeding, offsets, uniform/normal/log-normal/Poisson generation on a stream).
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <curand.h>

#define CURAND_CALL(x)                                                       \
    do {                                                                     \
        if ((x) != CURAND_STATUS_SUCCESS) {                                  \
            printf("cuRAND error at %s:%d\n", __FILE__, __LINE__);           \
            return EXIT_FAILURE;                                             \
        }                                                                    \
    } while (0)

#define CUDA_CALL(x)                                                         \
    do {                                                                     \
        if ((x) != cudaSuccess) {                                            \
            printf("CUDA error at %s:%d\n", __FILE__, __LINE__);             \
            return EXIT_FAILURE;                                             \
        }                                                                    \
    } while (0)

int main() {
    const size_t n = 1 << 20;
    float *uniform, *normal, *lognormal;
    unsigned int* counts;
    CUDA_CALL(cudaMalloc(&uniform, n * sizeof(float)));
    CUDA_CALL(cudaMalloc(&normal, n * sizeof(float)));
    CUDA_CALL(cudaMalloc(&lognormal, n * sizeof(float)));
    CUDA_CALL(cudaMalloc(&counts, n * sizeof(unsigned int)));

    cudaStream_t stream;
    CUDA_CALL(cudaStreamCreate(&stream));
    curandGenerator_t gen;
    CURAND_CALL(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CALL(curandSetStream(gen, stream));
    CURAND_CALL(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
    CURAND_CALL(curandSetGeneratorOffset(gen, 0ULL));
    CURAND_CALL(curandGenerateUniform(gen, uniform, n));
    CURAND_CALL(curandGenerateNormal(gen, normal, n, 0.0f, 1.0f));
    CURAND_CALL(curandGenerateLogNormal(gen, lognormal, n, 0.0f, 0.5f));
    CURAND_CALL(curandGeneratePoisson(gen, counts, n, 4.0));
    CURAND_CALL(curandDestroyGenerator(gen));

    // A quasi-random generator as well.
    curandGenerator_t sobol;
    CURAND_CALL(curandCreateGenerator(&sobol, CURAND_RNG_QUASI_SOBOL32));
    CURAND_CALL(curandSetQuasiRandomGeneratorDimensions(sobol, 2));
    CURAND_CALL(curandGenerateUniform(sobol, uniform, n));
    CURAND_CALL(curandDestroyGenerator(sobol));

    CUDA_CALL(cudaStreamSynchronize(stream));
    float first = 0.f;
    CUDA_CALL(cudaMemcpy(&first, normal, sizeof(float), cudaMemcpyDeviceToHost));
    int version = 0;
    CURAND_CALL(curandGetVersion(&version));
    printf("cuRAND %d: first normal %f\n", version, first);
    CUDA_CALL(cudaStreamDestroy(stream));
    CUDA_CALL(cudaFree(uniform)); CUDA_CALL(cudaFree(normal));
    CUDA_CALL(cudaFree(lognormal)); CUDA_CALL(cudaFree(counts));
    return 0;
}
