// Plain host/device data layout of a body; uses CUDA's float3 through vector_types.h only.
#pragma once

#include <vector_types.h>

struct Body {
    float3 position;
    float3 velocity;
    float mass;
};

struct SimulationParams {
    int count;
    float dt;
    float softening;
};

void launch_integrate(Body* bodies, const SimulationParams& params, void* stream);
void launch_init(Body* bodies, int count, unsigned long long seed);
