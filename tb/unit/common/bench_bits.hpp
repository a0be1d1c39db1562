// Helpers shared by the unit benches: bit fields of Verilated ports, and (random_bits.hpp) random
// bit patterns for the floating-point paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "random_bits.hpp"
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

}  // namespace ncore::tb
