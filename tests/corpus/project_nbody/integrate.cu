// Exercises: an n-body step split across files (shared-memory tiles, user float3 operators from vec_math.cuh, a host-callable launcher declared in body.h).
#include "body.h"
#include "vec_math.cuh"

constexpr int kTile = 128;

__global__ void integrate(Body* bodies, SimulationParams p) {
    __shared__ float4 tile[kTile];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Body self = i < p.count ? bodies[i] : Body{};
    float3 accel = make_float3(0.f, 0.f, 0.f);
    for (int start = 0; start < p.count; start += kTile) {
        int j = start + threadIdx.x;
        if (j < p.count) {
            Body other = bodies[j];
            tile[threadIdx.x] = make_float4(other.position.x, other.position.y, other.position.z, other.mass);
        } else {
            tile[threadIdx.x] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        __syncthreads();
        for (int k = 0; k < kTile; ++k) {
            float3 d = make_float3(tile[k].x, tile[k].y, tile[k].z) - self.position;
            float inv = rsqrtf(dot(d, d) + p.softening);
            accel += d * (tile[k].w * inv * inv * inv);
        }
        __syncthreads();
    }
    if (i < p.count) {
        self.velocity += accel * p.dt;
        self.position += self.velocity * p.dt;
        bodies[i] = self;
    }
}

void launch_integrate(Body* bodies, const SimulationParams& params, void* stream) {
    integrate<<<(params.count + kTile - 1) / kTile, kTile, 0, static_cast<cudaStream_t>(stream)>>>(bodies, params);
}
