// The numerics contract in C++: dtype conversion through fp32 and the engines' fp32 ALU, on bit
// patterns. The golden model, the DMA and vector-engine benches and the checkers use it, and the FP
// unit bench (tb/unit/fp) holds rtl/ncore_fp_pkg.sv to it bit for bit.
//
// It is an independent reference for the RTL, not a transcription of it: arithmetic is the host's
// IEEE-754 float (x86-64 SSE: round to nearest even, no flush-to-zero unless someone sets MXCSR;
// the build uses -ffp-contract=off so a*b+c is never fused), fp16 conversion is GCC's _Float16, and
// only bf16 rounding and NaN canonicalisation are done on bits. The contract:
//   - to_f32_bits widens exactly; any NaN becomes the canonical fp32 NaN 0x7FC00000.
//   - from_f32_bits rounds to nearest even (bf16, fp16 and the fp8 types overflow to infinity,
//     fp16 and fp8 round into their subnormals); NaN becomes 0x7FC00000 / 0x7FC0 / 0x7E00, and
//     0x7C / 0x7E for fp8_e4m3 / fp8_e5m2. The fp8 types and tf32 are converted by value
//     (Fp8Format, tf32_from_f32_bits); a tf32 element's value is its top 19 bits. To an integer dtype: the nearest
//     integer, ties to even, saturated to the type's range; NaN becomes 0.
//   - alu: bypass returns a unchanged; add, subtract, multiply are binary32 RNE with subnormals;
//     max/min return the canonical NaN if either input is NaN, max(-0,+0) = +0, min(-0,+0) = -0;
//     any NaN result is the canonical 0x7FC00000.
//   - alu divide is binary32 RNE division; the comparisons (equal, not_equal, greater,
//     greater_equal, less, less_equal) give 1.0 or 0.0 by IEEE comparison (-0 == +0, a NaN
//     compares unequal to everything); fmod is exact (the host's fmodf), mod NumPy's (act_math.hpp),
//     power act_math.hpp's; the logical ops give 1.0 or 0.0, any nonzero (NaN too) true.
//   - act: the scalar engine's functions: copy is the identity, relu is alu(max, x, +0), so
//     relu(-0) = +0, relu(-inf) = +0 and relu(NaN) = 0x7FC00000; sqrt, rsqrt (1 / sqrt, two
//     roundings), reciprocal and square are IEEE operations, abs / negative / sign exact; the
//     transcendental ones are act_math.hpp's fixed sequences of fp32 operations.
// Codes outside the Dtype and AluOp enumerations act as fp32 and bypass, as in the RTL.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ncore/act_math.hpp"
#include "ncore/float_bits.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/isa_kinds.hpp"

#if !defined(__FLT16_MAX__)
#error "numerics.hpp needs the _Float16 type (GCC >= 12 or Clang on x86-64 / AArch64)"
#endif

namespace ncore::num {

using isa::dtype_bytes;

inline constexpr uint32_t kF32CanonNan = 0x7FC00000u;
inline constexpr uint16_t kBf16CanonNan = 0x7FC0u;
inline constexpr uint16_t kFp16CanonNan = 0x7E00u;

inline bool f32_bits_is_nan(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

// The integer dtypes: their range, and the value of an element's bits.
using isa::is_integer;
using isa::is_signed_integer;

inline std::pair<int64_t, int64_t> int_range(isa::Dtype dt) {
  const unsigned bits = 8 * dtype_bytes(dt);
  if (is_signed_integer(dt)) return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
  return {0, (int64_t{1} << bits) - 1};
}

// The low n bytes of v (n = 1, 2 or 4).
inline uint32_t low_bytes(uint32_t v, unsigned n) { return n == 4 ? v : v & ((1u << (8 * n)) - 1); }

inline int64_t int_value(uint32_t raw, isa::Dtype dt) {
  const unsigned bits = 8 * dtype_bytes(dt);
  const uint64_t u = low_bytes(raw, dtype_bytes(dt));
  if (is_signed_integer(dt) && (u >> (bits - 1)) & 1) return static_cast<int64_t>(u) - (int64_t{1} << bits);
  return static_cast<int64_t>(u);
}

// The 8-bit floats, by value rather than by bits: the 128 magnitudes of a format are decoded by
// their formula (the top exponent is infinity and NaN), and an fp32 value is encoded by searching
// the finite magnitudes for the nearest, ties to the even code, past the largest finite plus half
// its step to infinity.
struct Fp8Format {
  int ew, mw;
  int bias() const { return (1 << (ew - 1)) - 1; }
  bool is_special(unsigned code) const { return ((code & 0x7Fu) >> mw) == (1u << ew) - 1; }
  double magnitude(unsigned code) const {  // code & 0x7F, finite codes
    const unsigned e = (code & 0x7Fu) >> mw, m = code & ((1u << mw) - 1);
    return e == 0 ? std::ldexp(m, 1 - bias() - mw) : std::ldexp((1u << mw) + m, static_cast<int>(e) - bias() - mw);
  }
  unsigned nan_code() const { return (((1u << (ew + 1)) - 1) << (mw - 1)) & 0xFFu; }
  unsigned inf_code() const { return ((1u << ew) - 1) << mw; }
};

inline const Fp8Format* fp8_format(isa::Dtype dt) {
  static constexpr Fp8Format e4m3{4, 3}, e5m2{5, 2};
  if (dt == isa::Dtype::fp8_e4m3) return &e4m3;
  if (dt == isa::Dtype::fp8_e5m2) return &e5m2;
  return nullptr;
}

inline uint32_t fp8_to_f32_bits(uint32_t raw, const Fp8Format& fmt) {
  const unsigned c = raw & 0xFFu;
  const float sign = (c & 0x80u) ? -1.0f : 1.0f;
  if (fmt.is_special(c)) return (c & ((1u << fmt.mw) - 1)) ? kF32CanonNan : float_to_bits(sign * INFINITY);
  return float_to_bits(sign * static_cast<float>(fmt.magnitude(c)));  // exact: at most 4 significant bits
}

// The finite magnitudes of a format by code (they ascend with the code), listed once.
inline const std::vector<double>& fp8_magnitudes(const Fp8Format& fmt) {
  static const auto list = [](const Fp8Format& f) {
    std::vector<double> v(f.inf_code());
    for (unsigned c = 0; c < f.inf_code(); ++c) v[c] = f.magnitude(c);
    return v;
  };
  static const std::vector<double> e4m3 = list({4, 3}), e5m2 = list({5, 2});
  return fmt.ew == 4 ? e4m3 : e5m2;
}

inline uint32_t fp8_from_f32_bits(uint32_t f, const Fp8Format& fmt) {
  if (f32_bits_is_nan(f)) return fmt.nan_code();
  const unsigned sign = (f >> 31) ? 0x80u : 0u;
  const double x = std::fabs(static_cast<double>(bits_to_float(f)));
  const std::vector<double>& v = fp8_magnitudes(fmt);
  const double top = v.back(), step = top - v[v.size() - 2];
  if (x >= top + step / 2) return sign | fmt.inf_code();
  // the two neighbours of x; the nearer, ties to the even code
  const auto hi = static_cast<unsigned>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
  if (hi == v.size()) return sign | (hi - 1);  // above the largest finite, within half a step
  if (hi == 0 || v[hi] == x) return sign | hi;
  const unsigned lo = hi - 1;
  const double dl = x - v[lo], dh = v[hi] - x;
  return sign | (dl < dh ? lo : dh < dl ? hi : (lo & 1u) ? hi : lo);
}

// fp32 (not NaN) to tfloat32, by value: the significand rounded to 11 bits with the host's
// nearest-even rounding in double (a subnormal keeps its 2^-136 steps), past the largest finite to
// infinity.
inline uint32_t tf32_from_f32_bits(uint32_t f) {
  const double x = static_cast<double>(bits_to_float(f));
  if (!std::isfinite(x) || x == 0.0) return f;
  int e;
  std::frexp(x, &e);                       // |x| = m 2^e, m in [0.5, 1)
  const int q = std::max(e - 11, -136);    // the step of an 11-bit significand, or of a subnormal
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
  const double top = std::ldexp(2.0 - std::ldexp(1.0, -10), 127);
  if (std::fabs(r) > top) return (f & 0x80000000u) | 0x7F800000u;
  return float_to_bits(static_cast<float>(r));  // exact: 11 significant bits
}

// Element bits (in the low bits of raw) to fp32 bits, exactly (32-bit integers beyond 2^24 round
// to nearest even); NaN -> 0x7FC00000.
inline uint32_t to_f32_bits(uint32_t raw, isa::Dtype dt) {
  uint32_t r;
  switch (dt) {
    case isa::Dtype::bf16:
      r = (raw & 0xFFFFu) << 16;
      break;
    case isa::Dtype::fp16: {
      const uint16_t h16 = static_cast<uint16_t>(raw);
      _Float16 h;
      std::memcpy(&h, &h16, sizeof h);
      r = float_to_bits(static_cast<float>(h));
      break;
    }
    case isa::Dtype::fp32:
      r = raw;
      break;
    case isa::Dtype::tf32:
      r = raw & ~0x1FFFu;  // the element's value is its top 19 bits
      break;
    case isa::Dtype::fp8_e4m3:
    case isa::Dtype::fp8_e5m2:
      return fp8_to_f32_bits(raw, *fp8_format(dt));
    default:
      if (!is_integer(dt)) {
        r = raw;
        break;
      }
      return float_to_bits(static_cast<float>(int_value(raw, dt)));  // the host's RNE conversion
  }
  return f32_bits_is_nan(r) ? kF32CanonNan : r;
}

// fp32 bits to element bits (low bits, upper bits zero), round to nearest even.
inline uint32_t from_f32_bits(uint32_t f, isa::Dtype dt) {
  const bool nan = f32_bits_is_nan(f);
  switch (dt) {
    case isa::Dtype::bf16:
      if (nan) return kBf16CanonNan;
      // Add 0x7FFF plus the LSB that is kept, then truncate: ties go to the even neighbour. A
      // carry out of the mantissa steps the exponent; no finite input reaches the sign bit.
      return (f + 0x7FFFu + ((f >> 16) & 1u)) >> 16;
    case isa::Dtype::fp16: {
      if (nan) return kFp16CanonNan;
      const _Float16 h = static_cast<_Float16>(bits_to_float(f));
      uint16_t h16;
      std::memcpy(&h16, &h, sizeof h16);
      return h16;
    }
    case isa::Dtype::fp32:
      return nan ? kF32CanonNan : f;
    case isa::Dtype::tf32:
      return nan ? kF32CanonNan : tf32_from_f32_bits(f);
    case isa::Dtype::fp8_e4m3:
    case isa::Dtype::fp8_e5m2:
      return fp8_from_f32_bits(f, *fp8_format(dt));
    default:
      if (!is_integer(dt)) return nan ? kF32CanonNan : f;
      if (nan) return 0;
      {
        // nearbyint: to nearest, ties to even (the default rounding mode); then saturate.
        const double r = std::nearbyint(static_cast<double>(bits_to_float(f)));
        const auto [lo, hi] = int_range(dt);
        const int64_t v = r < lo ? lo : r > hi ? hi : static_cast<int64_t>(r);
        return low_bytes(static_cast<uint32_t>(v), dtype_bytes(dt));  // two's complement bits
      }
  }
}

inline float to_float(uint32_t raw, isa::Dtype dt) { return bits_to_float(to_f32_bits(raw, dt)); }
inline uint32_t from_float(float f, isa::Dtype dt) { return from_f32_bits(float_to_bits(f), dt); }

namespace detail {
inline uint32_t canon(float r) { return std::isnan(r) ? kF32CanonNan : float_to_bits(r); }
inline uint32_t truth(bool t) { return t ? 0x3F800000u : 0u; }  // a comparison's 1.0 / 0.0
}  // namespace detail

// `a op b` on fp32 bit patterns.
inline uint32_t alu(isa::AluOp op, uint32_t a, uint32_t b) {
  const float fa = bits_to_float(a), fb = bits_to_float(b);
  switch (op) {
    case isa::AluOp::add: return detail::canon(fa + fb);
    case isa::AluOp::subtract: return detail::canon(fa - fb);
    case isa::AluOp::multiply: return detail::canon(fa * fb);
    case isa::AluOp::max:
    case isa::AluOp::min: {
      if (std::isnan(fa) || std::isnan(fb)) return kF32CanonNan;
      const bool is_max = op == isa::AluOp::max;
      if (fa == fb) return is_max ? (a & b) : (a | b);  // equal values differ only in a zero's sign
      return (fa > fb) == is_max ? a : b;
    }
    case isa::AluOp::divide: return detail::canon(fa / fb);
    case isa::AluOp::equal: return detail::truth(fa == fb);
    case isa::AluOp::not_equal: return detail::truth(fa != fb);
    case isa::AluOp::greater: return detail::truth(fa > fb);
    case isa::AluOp::greater_equal: return detail::truth(fa >= fb);
    case isa::AluOp::less: return detail::truth(fa < fb);
    case isa::AluOp::less_equal: return detail::truth(fa <= fb);
    case isa::AluOp::power: return detail::canon(am::power(fa, fb));
    case isa::AluOp::mod: return detail::canon(am::mod(fa, fb));
    case isa::AluOp::fmod: return detail::canon(std::fmod(fa, fb));
    case isa::AluOp::logical_and: return detail::truth(fa != 0.0f && fb != 0.0f);  // NaN is nonzero
    case isa::AluOp::logical_or: return detail::truth(fa != 0.0f || fb != 0.0f);
    case isa::AluOp::logical_xor: return detail::truth((fa != 0.0f) != (fb != 0.0f));
    case isa::AluOp::logical_not: return detail::truth(fa == 0.0f);
    // bitvec: a and b are the elements' bits (see lane_in), not fp32
    case isa::AluOp::bitwise_and: return a & b;
    case isa::AluOp::bitwise_or: return a | b;
    case isa::AluOp::bitwise_xor: return a ^ b;
    case isa::AluOp::invert: return ~a;
    case isa::AluOp::left_shift: return b >= 32 ? 0 : a << b;
    case isa::AluOp::right_shift: return b >= 32 ? 0 : a >> b;
    default: return a;  // bypass
  }
}

// The bitvec ops take and give the elements' bits; the others fp32.
using isa::is_bitvec;

// An element as an ALU lane holds it: its bits for a bitvec instruction, else fp32; and back.
inline uint32_t lane_in(uint32_t raw, isa::Dtype dt, bool bits) { return bits ? raw : to_f32_bits(raw, dt); }
inline uint32_t lane_out(uint32_t r, isa::Dtype dt, bool bits) {
  return bits ? low_bytes(r, dtype_bytes(dt)) : from_f32_bits(r, dt);
}

// The scalar engine's activation function `f` on fp32 bits (codes outside the enumeration: copy,
// as in the RTL).
inline uint32_t act(isa::ActFunc f, uint32_t x) {
  const float v = bits_to_float(x);
  switch (f) {
    case isa::ActFunc::relu: return alu(isa::AluOp::max, x, 0u);
    case isa::ActFunc::exp: return detail::canon(am::exp(v));
    case isa::ActFunc::log: return detail::canon(am::log(v));
    case isa::ActFunc::tanh: return detail::canon(am::tanh(v));
    case isa::ActFunc::sigmoid: return detail::canon(am::sigmoid(v));
    case isa::ActFunc::sqrt: return detail::canon(std::sqrt(v));
    case isa::ActFunc::rsqrt: return detail::canon(1.0f / std::sqrt(v));
    case isa::ActFunc::reciprocal: return detail::canon(1.0f / v);
    case isa::ActFunc::square: return detail::canon(v * v);
    case isa::ActFunc::abs: return detail::canon(std::fabs(v));
    case isa::ActFunc::negative: return detail::canon(-v);
    case isa::ActFunc::sign: return detail::canon(am::sign(v));
    case isa::ActFunc::gelu_apprx_tanh: return detail::canon(am::gelu_apprx_tanh(v));
    case isa::ActFunc::silu: return detail::canon(am::silu(v));
    case isa::ActFunc::softplus: return detail::canon(am::softplus(v));
    case isa::ActFunc::gelu: return detail::canon(am::gelu(v));
    case isa::ActFunc::erf: return detail::canon(am::erf(v));
    case isa::ActFunc::sin: return detail::canon(am::sin(v));
    case isa::ActFunc::cos: return detail::canon(am::cos(v));
    case isa::ActFunc::tan: return detail::canon(am::tan(v));
    case isa::ActFunc::arctan: return detail::canon(am::arctan(v));
    case isa::ActFunc::mish: return detail::canon(am::mish(v));
    case isa::ActFunc::gelu_dx: return detail::canon(am::gelu_dx(v));
    case isa::ActFunc::gelu_apprx_sigmoid: return detail::canon(am::gelu_apprx_sigmoid(v));
    case isa::ActFunc::silu_dx: return detail::canon(am::silu_dx(v));
    case isa::ActFunc::erf_dx: return detail::canon(am::erf_dx(v));
    case isa::ActFunc::ceil: return detail::canon(am::ceil(v));
    case isa::ActFunc::floor: return detail::canon(am::floor(v));
    case isa::ActFunc::trunc: return detail::canon(am::trunc(v));
    default: return x;  // copy
  }
}

// One step of the tensor engine's column sum: acc + w * x with the product exact and one
// rounding to nearest even (a fused multiply-add; w, x, acc as fp32 bit patterns). For bf16 and
// fp16 operands widened to fp32 the product is exact in fp32 anyway (barring bf16 over- and
// underflow, which the fused form also gets right).
inline uint32_t pe_fma(uint32_t w, uint32_t x, uint32_t acc) {
  return detail::canon(std::fma(bits_to_float(w), bits_to_float(x), bits_to_float(acc)));
}

// Whether the host's float arithmetic is what alu() assumes: subnormals neither flushed nor read
// as zero (MXCSR FTZ/DAZ, set e.g. by linking with -ffast-math) and round-to-nearest-even. The
// operands are volatile so that the compiler cannot fold the sums at build time.
inline bool host_float_is_ieee() {
  volatile uint32_t min_sub = 0x00000001u, one = 0x3F800000u, tie = 0x33800000u, three_half = 0x34400000u;
  const uint32_t sub_sum = float_to_bits(bits_to_float(min_sub) + bits_to_float(min_sub));
  const uint32_t down = float_to_bits(bits_to_float(one) + bits_to_float(tie));       // 1 + 2^-24
  const uint32_t up = float_to_bits(bits_to_float(one) + bits_to_float(three_half));  // 1 + 3*2^-24
  return sub_sum == 0x00000002u && down == 0x3F800000u && up == 0x3F800002u;
}

// Element load and store, little-endian: nbytes (1, 2 or 4) at p, or dtype_bytes(dt).
inline uint32_t load_bytes(const uint8_t* p, unsigned nbytes) {
  uint32_t v = 0;
  for (unsigned i = 0; i < nbytes; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

inline void store_bytes(uint8_t* p, unsigned nbytes, uint32_t bits) {
  for (unsigned i = 0; i < nbytes; ++i) p[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// The n-byte element at byte address addr in the 32-bit memory word that holds it.
inline uint32_t elem_of_word(uint32_t word, int64_t addr, unsigned n) {
  return low_bytes(word >> (8 * (addr & 3)), n);
}

inline uint32_t load_elem(const uint8_t* p, isa::Dtype dt) { return load_bytes(p, dtype_bytes(dt)); }
inline void store_elem(uint8_t* p, isa::Dtype dt, uint32_t bits) { store_bytes(p, dtype_bytes(dt), bits); }

}  // namespace ncore::num
