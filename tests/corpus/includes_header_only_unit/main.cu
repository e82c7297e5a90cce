// Exercises: a unit that names nothing of CUDA itself; everything comes from its headers.
#include "buffer.h"
#include "scale.h"

int run(int n) {
  DeviceBuffer<float> buffer(n);
  return scale(buffer.get(), n, 0.5f) == 0 ? 0 : 1;
}

int main() { return run(1024); }
