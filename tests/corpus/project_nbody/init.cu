// Exercises: cuRAND device API in one file of a multi-file project (random initial bodies).
#include <curand_kernel.h>

#include "body.h"
#include "vec_math.cuh"

__global__ void init_bodies(Body* bodies, int count, unsigned long long seed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    curandStatePhilox4_32_10_t rng;
    curand_init(seed, i, 0, &rng);
    float4 u = curand_uniform4(&rng);
    float3 p = make_float3(u.x, u.y, u.z) * 2.0f - make_float3(1.f, 1.f, 1.f);
    bodies[i].position = p;
    bodies[i].velocity = make_float3(0.f, 0.f, 0.f);
    bodies[i].mass = 0.5f + u.w + 0.01f * length(p);
}

void launch_init(Body* bodies, int count, unsigned long long seed) {
    init_bodies<<<(count + 255) / 256, 256>>>(bodies, count, seed);
}
