// The project's own constants header, with the name of CUDA's.
#pragma once

namespace proj {
constexpr float kHalf = 0.5f;
constexpr float kGain = 1.25f;
}  // namespace proj
