// Exercises: a unit whose only GPU code is in check.h; nvcc's implicit include served it.
#include <cstdio>

#include "check.h"

int print_device_count() {
  std::printf("%d device(s)\n", device_count());
  return 0;
}
