// An fp32 value and its bit pattern, each from the other (the numerics, the activation functions
// and the listing all go through these two).
#pragma once

#include <cstdint>
#include <cstring>

namespace ncore::num {

inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace ncore::num
