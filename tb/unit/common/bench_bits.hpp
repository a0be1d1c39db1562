// Helpers shared by the unit benches: bit fields of Verilated ports, and random bit patterns
// that make the floating-point paths meet NaN, infinities, subnormals, rounding ties and
// carries more often than uniform bits would.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "verilated.h"

namespace ncore::tb {

// ---- bit fields of Verilated ports (element 0 of a packed array in the low bits) ---------------------------------------------------------
inline uint64_t low_mask(unsigned w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }
template <class T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
uint64_t get_bits(const T& p, unsigned lsb, unsigned w) {
  return (static_cast<uint64_t>(p) >> lsb) & low_mask(w);
}
template <class T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
void put_bits(T& p, unsigned lsb, unsigned w, uint64_t v) {
  const uint64_t m = low_mask(w) << lsb;
  p = static_cast<T>((static_cast<uint64_t>(p) & ~m) | ((v << lsb) & m));
}
// A field of a wide port wider than 64 bits reads as its low 64 bits, and is written with v
// zero-extended (a shift of a uint64_t by 64 or more is undefined: those bits are 0 here).
template <std::size_t N>
uint64_t get_bits(const VlWide<N>& p, unsigned lsb, unsigned w) {
  uint64_t v = 0;
  if (w > 64) w = 64;
  for (unsigned i = 0; i < w;) {
    const unsigned b = lsb + i, word = b / 32, sh = b % 32, take = std::min(32 - sh, w - i);
    v |= ((static_cast<uint64_t>(p.m_storage[word]) >> sh) & low_mask(take)) << i;
    i += take;
  }
  return v;
}
template <std::size_t N>
void put_bits(VlWide<N>& p, unsigned lsb, unsigned w, uint64_t v) {
  for (unsigned i = 0; i < w;) {
    const unsigned b = lsb + i, word = b / 32, sh = b % 32, take = std::min(32 - sh, w - i);
    const uint32_t m = static_cast<uint32_t>(low_mask(take) << sh);
    const uint64_t part = i < 64 ? v >> i : 0;
    p.m_storage[word] = (p.m_storage[word] & ~m) | (static_cast<uint32_t>(part << sh) & m);
    i += take;
  }
}

// ---- bit patterns ------------------------------------------------------------------------------
inline uint32_t random_f32(std::mt19937_64& rng) {
  static constexpr uint32_t kSpecial[] = {
      0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFC00001,
      0x7FBFFFFF, 0x7FFFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000, 0x00000001, 0x807FFFFF,
      0x3F800000, 0xBF800000, 0x3F808000, 0x3F818000, 0x3F801000, 0x3F803000, 0x477FF000, 0x477FE000,
      0x38800000, 0x33800000, 0x7F7F8000, 0x387FE000,
  };
  const uint32_t r = static_cast<uint32_t>(rng());
  switch (rng() % 8) {
    case 0: return r;                                               // uniform bits
    case 1: return r & 0x807FFFFFu;                                 // subnormal or zero
    case 2: return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
    case 3: return (r & 0x807FFFFFu) | uint32_t(113 + rng() % 30) << 23;  // fp16 range
    case 4: return (r & 0x807F0000u) | (rng() % 2 ? 0x8000u : 0x1000u) | uint32_t(120 + rng() % 16) << 23;  // ties
    default: return (r & 0x807FFFFFu) | uint32_t(120 + rng() % 16) << 23;  // near 1
  }
}

inline uint16_t random_h16(std::mt19937_64& rng) {
  static constexpr uint16_t kSpecial[] = {
      0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x7FFF, 0x7BFF, 0xFBFF, 0x0400, 0x0001, 0x83FF,
      0x3C00, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC1, 0x7F7F, 0x0080, 0x007F, 0x8001, 0x3F80, 0xBF80,
  };
  const uint16_t r = static_cast<uint16_t>(rng());
  switch (rng() % 6) {
    case 0: return r;
    case 1: return static_cast<uint16_t>(r & (rng() % 2 ? 0x83FFu : 0x807Fu));  // fp16 / bf16 subnormal
    case 2: return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
    case 3: return static_cast<uint16_t>((r & 0x83FFu) | uint32_t(12 + rng() % 7) << 10);  // fp16 near 1
    default: return static_cast<uint16_t>((r & 0x807Fu) | uint32_t(123 + rng() % 9) << 7);  // bf16 near 1
  }
}

// `partitions` x `bytes` of SBUF contents.
// Bytes whose 32-bit words are random fp32 patterns or pairs of random 16-bit patterns.
inline std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> img(n);
  for (size_t w = 0; w < n / 4; ++w) {
    const uint32_t v = (rng() % 2) ? random_f32(rng) : (uint32_t{random_h16(rng)} | uint32_t{random_h16(rng)} << 16);
    for (int b = 0; b < 4; ++b) img[4 * w + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return img;
}

}  // namespace ncore::tb
