// The references' own conversions between the three dtypes' bits and host floats. They are
// written here again on purpose, not taken from the golden model's numerics
// (tb/golden/include/ncore/golden/numerics.hpp): see reference.hpp for why.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ncore/isa_gen.hpp"

namespace kernels::ref {

inline float bf16_to_float(uint16_t h) {
  const uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x0040u);  // quiet NaN
  const uint32_t lsb = (b >> 16) & 1u;
  return static_cast<uint16_t>((b + 0x7fffu + lsb) >> 16);  // round to nearest, ties to even
}

// The element at p as a float (exact for every dtype).
inline float load(const uint8_t* p, ncore::isa::Dtype dt) {
  switch (dt) {
    case ncore::isa::Dtype::fp32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ncore::isa::Dtype::bf16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_float(h);
    }
    case ncore::isa::Dtype::fp16: {
      _Float16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
  }
  return 0;
}

// A double rounded once to the dtype, to nearest even. fp32 and fp16: the host's conversion
// (one rounding). bf16: through fp32 rounded to odd, which is exact for a second rounding to
// the 8-bit significand (fp32 carries more than 2 extra bits).
inline void store_double(uint8_t* p, ncore::isa::Dtype dt, double v) {
  switch (dt) {
    case ncore::isa::Dtype::fp32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case ncore::isa::Dtype::fp16: {
      const _Float16 h = static_cast<_Float16>(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case ncore::isa::Dtype::bf16: {
      float f = static_cast<float>(v);
      if (!std::isnan(v) && static_cast<double>(f) != v) {
        // Round to odd: truncate toward zero, then set the last bit.
        if (std::isinf(f) || std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        b |= 1u;
        std::memcpy(&f, &b, 4);
      }
      const uint16_t h = float_to_bf16(f);
      std::memcpy(p, &h, 2);
      break;
    }
  }
}

// A float rounded once to the dtype (to nearest even) and stored at p: fp32 bit for bit (a
// signalling NaN too), the others as store_double of the same value, which a double holds exactly.
inline void store(uint8_t* p, ncore::isa::Dtype dt, float v) {
  if (dt == ncore::isa::Dtype::fp32)
    std::memcpy(p, &v, 4);
  else
    store_double(p, dt, static_cast<double>(v));
}

}  // namespace kernels::ref
