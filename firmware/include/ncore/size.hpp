// Overflow-checked counts. Every element and byte count the tool chain forms from sizes a user
// gives (a shape's dimensions, a command-line -n, an image's header, a .npy header) is formed
// here, so that a huge size is refused where it appears, by the caller that can name it, and
// never wraps into a small one that the rest of the chain would accept.
//
// A count is at most kMaxCount = 2^60: far beyond any memory the model has (HBM is 2^40 bytes),
// and small enough that the callers' follow-on arithmetic (times a 4-byte element, plus an
// aligned offset, as int64) cannot overflow either.
#pragma once

#include <cstdint>
#include <optional>

namespace ncore {

inline constexpr uint64_t kMaxCount = uint64_t{1} << 60;

// a * b, or nullopt when a, b or the product is above kMaxCount.
inline std::optional<uint64_t> count_mul(uint64_t a, uint64_t b) {
  if (a > kMaxCount || b > kMaxCount) return std::nullopt;
  uint64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p) || p > kMaxCount) return std::nullopt;
  return p;
}

// The product of the sizes in [first, last) (each >= 0), or nullopt above kMaxCount (or for a
// negative size). A zero size gives 0 whatever the others are.
template <class It>
std::optional<uint64_t> count_product(It first, It last) {
  uint64_t n = 1;
  bool zero = false;
  bool over = false;
  for (; first != last; ++first) {
    const auto d = *first;
    if (d < 0) return std::nullopt;
    if (d == 0) zero = true;
    if (over) continue;
    const auto p = count_mul(n, static_cast<uint64_t>(d));
    if (p) n = *p;
    else over = true;
  }
  if (zero) return 0;
  if (over) return std::nullopt;
  return n;
}

}  // namespace ncore
