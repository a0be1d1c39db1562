// The scalar engine's activation functions and the ALU's divide, comparisons, power and mod in C++,
// on host floats (and, for the trigonometric reduction and power, in integer arithmetic): the
// golden model's side of the contract that rtl/ncore_fp_pkg.sv implements in SystemVerilog
// (f32_div, f32_sqrt, act_exp, act_log, act_trig, f32_pow, ...).
//
// sqrt, reciprocal, rsqrt (1 / sqrt), square and divide are IEEE operations: here the host's
// correctly rounded sqrtf and division, in the RTL integer arithmetic of its own, so the two are
// independent. abs, negative and sign are exact.
//
// The transcendental functions are the model's own algorithms (the chip's table-based
// approximations are not published): each is one fixed sequence of fp32 additions,
// multiplications and divisions, each rounded to nearest even, and of exact bit operations
// (exponent extraction, scaling by powers of two, comparisons). The RTL performs the same
// sequence with f32_add / f32_mul / f32_div, so the two agree bit for bit (tb/unit/fp checks
// it); the build's -ffp-contract=off keeps the compiler from fusing a * b + c here. The error
// bounds against double-precision libm, measured by tb/golden/test_act_math.cpp, are in
// docs/hardware.md (Numerics). The algorithms are written twice (here and in ncore_fp_pkg.sv, change
// them together), their constants once (act_consts_gen.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "ncore/act_consts_gen.hpp"
#include "ncore/float_bits.hpp"

namespace ncore::num::am {

inline float fb(uint32_t b) { return bits_to_float(b); }
inline uint32_t bf(float f) { return float_to_bits(f); }

inline constexpr uint32_t kNan = 0x7FC00000u;
inline constexpr uint32_t kInf = 0x7F800000u;
inline constexpr uint32_t kOne = 0x3F800000u;

// The constants of the sequences below (kLog2e, kExpQ, kErfP, ...) are generated from the ISA
// description (firmware/isa/ncore_isa.json, act_constants) into act_consts_gen.hpp, and into
// ncore_isa_pkg.sv for the RTL.
// exp: p(r) = 1 + r + r^2 q(r) on |r| <= ln2 / 2, q fitted to (e^r - 1 - r) / r^2 (relative
// error 1.2e-8).
// log: log(1 + f) = f - (f^2 / 2 - s (f^2 / 2 + R(s^2))), s = f / (2 + f), R fitted (fdlibm's logf
// coefficients).
// tanh: tanh(a) = a + a (z q(z)), z = a^2, for a < 0.625, q fitted to (tanh(a) / a - 1) / a^2
// (relative error 4.6e-8).
// gelu_apprx_tanh: x * sigmoid(x (kG0 + kG1 x^2)), kG0 = 2 sqrt(2 / pi), kG1 = kG0 * 0.044715.

inline bool is_nan(float x) { return (bf(x) & 0x7FFFFFFFu) > kInf; }
inline float with_sign_of(float mag, float s) { return fb(bf(mag) | (bf(s) & 0x80000000u)); }

// e^x.
//   k = round(x log2 e) (RNE, through kMagic), r = (x - k ln2_hi) - k ln2_lo (the first
//   difference exact), q(r) by Horner from the highest coefficient, p = 1 + (r + (r r) q),
//   e^x = (p 2^(k >> 1)) 2^(k - (k >> 1)): the first product exact, the second rounds once,
//   into the subnormals when e^x is that small.
inline float exp(float x) {
  if (is_nan(x)) return fb(kNan);
  if (x > fb(kExpHi)) return fb(kInf);
  if (x < fb(kExpLo)) return 0.0f;
  const float s = x * fb(kLog2e) + fb(kMagic);
  const int k = static_cast<int>(bf(s)) - static_cast<int>(kMagic);
  const float kf = s - fb(kMagic);
  const float r = (x - kf * fb(kLn2Hi)) - kf * fb(kLn2Lo);
  float q = fb(kExpQ[5]);
  for (int i = 4; i >= 0; --i) q = q * r + fb(kExpQ[i]);
  const float p = 1.0f + (r + (r * r) * q);
  const int k1 = k >> 1;  // arithmetic shift: floor(k / 2)
  const int k2 = k - k1;
  return (p * fb(static_cast<uint32_t>(k1 + 127) << 23)) * fb(static_cast<uint32_t>(k2 + 127) << 23);
}

// Natural log.
//   x = 2^k m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^25 first), f = m - 1
//   (exact), s = f / (2 + f), z = s s, w = z z, R = z (Lg1 + w Lg3) + w (Lg2 + w Lg4),
//   h = (0.5 f) f, log x = k ln2_hi - ((h - (s (h + R) + k ln2_lo)) - f).
inline float log(float x) {
  uint32_t ix = bf(x);
  if (is_nan(x)) return fb(kNan);
  if ((ix & 0x7FFFFFFFu) == 0) return fb(kInf | 0x80000000u);
  if (ix >> 31) return fb(kNan);
  if (ix == kInf) return x;
  int k = 0;
  if (ix < 0x00800000u) {
    ix = bf(x * fb(kTwo25));
    k = -25;
  }
  k += static_cast<int>(ix >> 23) - 127;
  uint32_t mb = (ix & 0x007FFFFFu) | kOne;
  if (mb > kSqrt2) {
    mb -= 0x00800000u;  // m / 2
    k += 1;
  }
  const float f = fb(mb) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float w = z * z;
  const float R = z * (fb(kLg[0]) + w * fb(kLg[2])) + w * (fb(kLg[1]) + w * fb(kLg[3]));
  const float h = (0.5f * f) * f;
  const float dk = static_cast<float>(k);
  return dk * fb(kLn2Hi) - ((h - (s * (h + R) + dk * fb(kLn2Lo))) - f);
}

// tanh: a = |x|; a < 0.625: a + a (z q(z)) with z = a a; else 1 - 2 / (exp(a + a) + 1); the
// sign of x.
inline float tanh(float x) {
  if (is_nan(x)) return fb(kNan);
  const float a = fb(bf(x) & 0x7FFFFFFFu);
  float r;
  if (a < fb(kTanhSmall)) {
    const float z = a * a;
    float q = fb(kTanhQ[5]);
    for (int i = 4; i >= 0; --i) q = q * z + fb(kTanhQ[i]);
    r = a + a * (z * q);
  } else {
    r = 1.0f - 2.0f / (exp(a + a) + 1.0f);
  }
  return with_sign_of(r, x);
}

// sigmoid: sign bit clear 1 / (1 + exp(-x)); set (-0 included) e / (1 + e) with e = exp(x).
inline float sigmoid(float x) {
  if (is_nan(x)) return fb(kNan);
  if (bf(x) >> 31) {
    const float e = exp(x);
    return e / (1.0f + e);
  }
  return 1.0f / (1.0f + exp(-x));
}

// softplus: a = |x|, e = exp(-a), w = 1 + e, l = log1p(e) = (w == 1 ? e : log(w) * (e / (w - 1))),
// max(x, +0) + l (max with the ALU's rule).
inline float softplus(float x) {
  if (is_nan(x)) return fb(kNan);
  const float e = exp(fb(bf(x) | 0x80000000u));
  const float w = 1.0f + e;
  const float l = bf(w) == kOne ? e : log(w) * (e / (w - 1.0f));
  const float m = x > 0.0f ? x : 0.0f;
  return m + l;
}

inline float silu(float x) { return x * sigmoid(x); }

inline float gelu_apprx_tanh(float x) { return x * sigmoid(x * (fb(kG0) + fb(kG1) * (x * x))); }

// erf and the erf-based gelu, through erfc on z >= 0:
//   z < 0.84375:  erfc(z) = 1 - erf(z), erf(z) = z + z P(z z), P a fitted degree-6 polynomial;
//   z >= 10.5:    +0;
//   otherwise:    erfc(z) = (exp(-qh) exp(-ql)) G(z), z^2 = qh + ql split exactly enough, G
//                 (= erfc(z) exp(z^2)) a fitted degree-7 polynomial in t = 1/z - c on five
//                 intervals (kErfcBreak), Horner from the highest coefficient.
// Per interval: c (the center of t), then G's coefficients from degree 0.

// z + z P(z z) for 0 <= z < 0.84375.
inline float erf_small(float z) {
  const float s = z * z;
  float p = fb(kErfP[6]);
  for (int i = 5; i >= 0; --i) p = p * s + fb(kErfP[i]);
  return z + z * p;
}

// The high part of x: its 12 leading significand bits (hi * hi is exact).
inline float split_hi(float x) { return fb(bf(x) & 0xFFFFF000u); }

// erfc(z) for z >= 0 (not NaN), with exp(-z^2) taken as exp(-qh) exp(-ql).
inline float erfc_pos(float z, float qh, float ql) {
  if (z < fb(kErfSmall)) return 1.0f - erf_small(z);
  if (z >= fb(kErfcZero)) return 0.0f;
  int k = 0;
  while (k < 4 && z >= fb(kErfcBreak[k])) ++k;
  const uint32_t* c = kErfcG[k];
  const float t = 1.0f / z - fb(c[0]);
  float g = fb(c[8]);
  for (int i = 7; i >= 1; --i) g = g * t + fb(c[i]);
  return (exp(-qh) * exp(-ql)) * g;
}

// erf: a = |x|; a < 0.84375: erf_small(a); a >= 4: 1; else 1 - erfc_pos(a) with
// z^2 = h h + (a - h) (a + h), h = split_hi(a); the sign of x.
inline float erf(float x) {
  if (is_nan(x)) return fb(kNan);
  const float a = fb(bf(x) & 0x7FFFFFFFu);
  float r;
  if (a < fb(kErfSmall)) {
    r = erf_small(a);
  } else if (a >= fb(kErfOne)) {
    r = 1.0f;
  } else {
    const float h = split_hi(a);
    r = 1.0f - erfc_pos(a, h * h, (a - h) * (a + h));
  }
  return with_sign_of(r, x);
}

// gelu(x) = x Phi(x) = 0.5 x erfc(-x / sqrt(2)): z = |x| (1/sqrt 2), e = erfc_pos(z) with
// z^2 = x^2 / 2 = 0.5 (h h) + 0.5 ((x - h) (x + h)), h = split_hi(x); sign bit clear:
// x (1 - 0.5 e), set: (0.5 x) e. gelu(-inf) = NaN (-inf * 0, as the formula in NumPy).
inline float gelu(float x) {
  if (is_nan(x)) return fb(kNan);
  const float z = fb(bf(x) & 0x7FFFFFFFu) * fb(kInvSqrt2);
  const float h = split_hi(x);
  const float e = erfc_pos(z, 0.5f * (h * h), 0.5f * ((x - h) * (x + h)));
  if (bf(x) >> 31) return (0.5f * x) * e;
  return x * (1.0f - 0.5f * e);
}

inline float sign(float x) {
  if (is_nan(x)) return fb(kNan);
  if ((bf(x) & 0x7FFFFFFFu) == 0) return 0.0f;
  return with_sign_of(1.0f, x);
}

// trunc, floor, ceil: exact. |x| >= 2^23 (and the infinities) are integers already; |x| < 1
// truncates to a zero of x's sign; otherwise the fraction bits are cleared. floor steps a
// truncated negative non-integer down by one, ceil a positive one up (exact: |t| < 2^23), so
// floor(-0.5) = -1, ceil(-0.5) = -0, as NumPy.
inline float trunc(float x) {
  if (is_nan(x)) return fb(kNan);
  const uint32_t b = bf(x);
  const int e = static_cast<int>((b >> 23) & 0xFFu) - 127;
  if (e >= 23) return x;
  if (e < 0) return fb(b & 0x80000000u);
  return fb(b & ~(0x007FFFFFu >> e));
}
inline float floor(float x) {
  const float t = trunc(x);
  return x < t ? t - 1.0f : t;
}
inline float ceil(float x) {
  const float t = trunc(x);
  return x > t ? t + 1.0f : t;
}

// Rounds sig * 2^e2 (sig != 0) to fp32, to nearest even, into the subnormals, overflow to
// +inf: the integer parts of the trigonometric reduction and of power end here (the RTL's
// f32_round).
inline float round_scaled(uint64_t sig, int e2) {
  const int lz = __builtin_clzll(sig);
  sig <<= lz;
  const int be = e2 - lz + 63 + 127;  // biased exponent of sig's leading bit
  if (be >= 255) return fb(kInf);
  int drop = 40;                      // bits below the 24 that are kept
  if (be < 1) drop += 1 - be;
  if (drop > 64) return 0.0f;         // below 2^-150: rounds to +0
  const uint64_t keep = drop == 64 ? 0 : sig >> drop;
  const uint64_t rem = drop == 64 ? sig : sig & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  const uint32_t up = rem > half || (rem == half && (keep & 1));
  const uint32_t bits = (be < 1 ? 0u : static_cast<uint32_t>(be - 1) << 23) + static_cast<uint32_t>(keep) + up;
  return fb(bits >= kInf ? kInf : bits);
}

// sin, cos, tan. |x| < pi/4 (below fp32 pi/4, 0x3F490FDB) is used as it is (k = 0); otherwise
// it is reduced exactly, in integer arithmetic, over the whole fp32 range (Payne-Hanek):
// |x| = m 2^E with m the 24-bit significand, and 96 bits of 2/pi from the bit of weight 2^(1-E)
// (kTwoOverPi: 32 zero bits, then the first 224 bits of 2/pi) give P = m * window, whose bits
// 95:94 are k mod 4 and 93:0 the fraction f of |x| 2/pi (the bits of 2/pi above the window
// only add multiples of 4; those below it, less than 2^-70). f >= 1/2 steps k and takes f - 1.
// r = f pi/2 from the top 32 bits of |f| times pi/2 in 32 bits (pi/2 2^31), rounded once to
// fp32: |r| <= pi/4, within 0.51 ulp. Then sin r = r + r (z S(z)), cos r = w + (((1 - w) - z/2)
// + z^2 C(z)) with z = r^2, w = 1 - z/2 (the first two steps exact), S and C fitted degree-3
// polynomials; the quadrant k picks +-sin r or +-cos r, and tan = sin / cos (k even) or
// -cos / sin (k odd). sin and tan take x's sign; inf and NaN give NaN.

using u128 = unsigned __int128;

// Bits [j, j + 96) of kTwoOverPi (bit 0 the most significant), as an integer.
inline u128 two_over_pi_window(int j) {
  u128 w = 0;
  for (int b = 0; b < 96; ++b) {
    const int i = j + b;
    w = (w << 1) | ((kTwoOverPi[i >> 5] >> (31 - (i & 31))) & 1u);
  }
  return w;
}

// a = |x| finite, a >= kPio4: r and k with |x| = k pi/2 + r (mod 2 pi).
inline float trig_reduce(float a, int& k) {
  const uint32_t b = bf(a);
  const uint64_t m = (b & 0x007FFFFFu) | 0x00800000u;
  const int e = static_cast<int>(b >> 23) - 150;  // a = m 2^e, e in -24..104
  const u128 p = static_cast<u128>(m) * two_over_pi_window(e + 30);
  k = static_cast<int>((p >> 94) & 3u);
  const u128 one = static_cast<u128>(1) << 94;
  u128 f = p & (one - 1);
  bool neg = false;
  if (f >> 93) {
    k = (k + 1) & 3;
    f = one - f;
    neg = true;
  }
  if (f == 0) return neg ? -0.0f : 0.0f;
  f <<= 34;  // the fraction's bit 93 at bit 127: |f| = f 2^-128
  const int lz = (f >> 64) != 0 ? __builtin_clzll(static_cast<uint64_t>(f >> 64))
                                : 64 + __builtin_clzll(static_cast<uint64_t>(f));
  f <<= lz;
  const uint64_t q = (f >> 96) * uint64_t{kPio2Fix};
  const float r = round_scaled(q, -63 - lz);
  return neg ? -r : r;
}

inline float sin_poly(float r) {
  const float z = r * r;
  float s = fb(kSinS[3]);
  for (int i = 2; i >= 0; --i) s = s * z + fb(kSinS[i]);
  return r + r * (z * s);
}
inline float cos_poly(float r) {
  const float z = r * r;
  float c = fb(kCosC[3]);
  for (int i = 2; i >= 0; --i) c = c * z + fb(kCosC[i]);
  const float hz = 0.5f * z;
  const float w = 1.0f - hz;
  return w + (((1.0f - w) - hz) + (z * z) * c);
}

// The reduced argument of |x| (NaN and inf excluded by the callers).
inline float trig_arg(float x, int& k) {
  const float a = fb(bf(x) & 0x7FFFFFFFu);
  k = 0;
  return a < fb(kPio4) ? a : trig_reduce(a, k);
}
inline float flip_sign(float v, bool neg) { return neg ? fb(bf(v) ^ 0x80000000u) : v; }
inline bool not_finite(float x) { return (bf(x) & 0x7FFFFFFFu) >= kInf; }

inline float sin(float x) {
  if (not_finite(x)) return fb(kNan);
  int k;
  const float r = trig_arg(x, k);
  const float v = (k & 1) ? cos_poly(r) : sin_poly(r);
  return flip_sign(v, ((k & 2) != 0) != ((bf(x) >> 31) != 0));
}
inline float cos(float x) {
  if (not_finite(x)) return fb(kNan);
  int k;
  const float r = trig_arg(x, k);
  const float v = (k & 1) ? sin_poly(r) : cos_poly(r);
  return flip_sign(v, ((k + 1) & 2) != 0);
}
inline float tan(float x) {
  if (not_finite(x)) return fb(kNan);
  int k;
  const float r = trig_arg(x, k);
  const float s = sin_poly(r), c = cos_poly(r);
  const float v = (k & 1) ? -c / s : s / c;
  return flip_sign(v, (bf(x) >> 31) != 0);
}

// arctan: a = |x|; a < 7/16: a - a z P(z), z = a^2, P a fitted degree-6 polynomial; otherwise
// atan(a) = atan(c) + atan(t) with (c, t) = (1/2, (2a - 1) / (2 + a)) below 11/16, (1, (a - 1) /
// (a + 1)) below 19/16, (3/2, (a - 3/2) / (1 + 3/2 a)) below 39/16, else (inf, -1/a), atan(c) as
// hi + lo: hi - ((t z P(z) - lo) - t); the sign of x. atan(+-inf) = +-pi/2 (fp32).

inline float atan_tail(float t) {  // t - atan(t) = t z P(z)
  const float z = t * t;
  float p = fb(kAtanP[6]);
  for (int i = 5; i >= 0; --i) p = p * z + fb(kAtanP[i]);
  return t * (z * p);
}
inline float arctan(float x) {
  if (is_nan(x)) return fb(kNan);
  const float a = fb(bf(x) & 0x7FFFFFFFu);
  float r;
  if (a < fb(kAtanBreak[0])) {
    r = a - atan_tail(a);
  } else {
    int i;
    float t;
    if (a < fb(kAtanBreak[1])) {
      i = 0;
      t = (2.0f * a - 1.0f) / (2.0f + a);
    } else if (a < fb(kAtanBreak[2])) {
      i = 1;
      t = (a - 1.0f) / (a + 1.0f);
    } else if (a < fb(kAtanBreak[3])) {
      i = 2;
      t = (a - 1.5f) / (1.0f + 1.5f * a);
    } else {
      i = 3;
      t = -1.0f / a;
    }
    r = fb(kAtanHi[i]) - ((atan_tail(t) - fb(kAtanLo[i])) - t);
  }
  return with_sign_of(r, x);
}

// mish(x) = x tanh(softplus(x)) = x n / (n + 2), n = e (e + 2), e = exp(x) (tanh(log(1 + e)) =
// ((1 + e)^2 - 1) / ((1 + e)^2 + 1)); x > 44: x (the factor rounds to 1 from x = 9, and n would
// overflow above 44.3). mish(-inf) = NaN (-inf * 0, as the formula in NumPy).
inline float mish(float x) {
  if (is_nan(x)) return fb(kNan);
  if (x > fb(kMishBig)) return x;
  const float e = exp(x);
  const float n = e * (e + 2.0f);
  return x * (n / (n + 2.0f));
}

// gelu_apprx_sigmoid(x) = x sigmoid(1.702 x) (the sigmoid approximation of GELU).
inline float gelu_apprx_sigmoid(float x) { return x * sigmoid(fb(kGeluSig) * x); }

// silu_dx = d/dx x sigmoid(x) = s (1 + x (1 - s)), with 1 - s taken as sigmoid(-x) (accurate where
// s is near 1). At +-inf NaN (inf * 0, as the formula in NumPy).
inline float silu_dx(float x) {
  if (is_nan(x)) return fb(kNan);
  return sigmoid(x) * (1.0f + x * sigmoid(fb(bf(x) ^ 0x80000000u)));
}

// erf_dx = 2/sqrt(pi) exp(-x^2): exp(-x^2) as exp(-h h) exp(-(a - h)(a + h)), h = a's 12 leading
// bits (h h exact); a >= 10.5: +0.
inline float erf_dx(float x) {
  if (is_nan(x)) return fb(kNan);
  const float a = fb(bf(x) & 0x7FFFFFFFu);
  if (a >= fb(kErfcZero)) return 0.0f;
  const float h = split_hi(a);
  return (exp(-(h * h)) * fb(k2SqrtPi)) * exp(-((a - h) * (a + h)));
}

// gelu_dx = d/dx x Phi(x) = Phi(x) + x phi(x): Phi from erfc_pos as in gelu, phi(x) =
// exp(-x^2 / 2) / sqrt(2 pi) with x^2 / 2 split as there. At +-inf NaN (inf * 0, as the formula).
inline float gelu_dx(float x) {
  if (is_nan(x)) return fb(kNan);
  const float z = fb(bf(x) & 0x7FFFFFFFu) * fb(kInvSqrt2);
  const float h = split_hi(x);
  const float qh = 0.5f * (h * h), ql = 0.5f * ((x - h) * (x + h));
  const float e = erfc_pos(z, qh, ql);
  const float phi = (exp(-qh) * fb(kInvSqrt2Pi)) * exp(-ql);
  const float cdf = (bf(x) >> 31) ? 0.5f * e : 1.0f - 0.5f * e;
  return cdf + x * phi;
}

// The ALU's mod (NumPy's, the sign of the divisor): m = fmod(a, b) (exact); m == 0: a zero with
// b's sign; m and b of different signs: m + b (rounded); NaN stays NaN.
inline float mod(float a, float b) {
  const float m = std::fmod(a, b);
  if (is_nan(m)) return fb(kNan);
  if (m == 0.0f) return with_sign_of(0.0f, b);
  if ((b < 0.0f) != (m < 0.0f)) return m + b;
  return m;
}

// power(a, b): C99 / NumPy pow special values, and for a > 0 finite, b finite nonzero, a
// fixed-point sequence in integer arithmetic (the RTL's act_pow_pos step for step):
//   a = m 2^k, m in [sqrt(1/2), sqrt(2)) (Q.62); t = (m - 1) / (m + 1) (Q.64, truncated);
//   log2 m = (2 / ln 2) t (1 + t^2/3 + ... + t^24/25) (Horner in Q.63 on s = t^2, Q.64);
//   y = b (k + log2 m) exactly (Q.64, truncated); |y| >= 256 (and y >= 128 / y <= -151 after the
//   shift): +inf or +0; n = floor(y), v = (y - n) ln 2 (Q.64); 2^y = e^v 2^n with e^v = sum of
//   v^j / j!, j <= 19 (Horner in Q.62), rounded once to fp32 (nearest even, subnormals kept).
// Every step truncates at 2^-62 or below: the result is within 0.5 + 2^-20 ulp.

// A finite nonzero magnitude as m 2^(e - 150), m in [2^23, 2^24) (subnormals normalised).
inline uint32_t norm_sig(uint32_t mag, int& e) {
  if (mag >> 23) {
    e = static_cast<int>(mag >> 23);
    return (mag & 0x007FFFFFu) | 0x00800000u;
  }
  const int lz = __builtin_clz(mag) - 8;
  e = 1 - lz;
  return mag << lz;
}

inline float pow_pos(uint32_t a, uint32_t b) {
  using i128 = __int128;
  if (a == kOne) return 1.0f;  // y = 0
  int ea, eb;
  const uint64_t ma = norm_sig(a, ea);
  const uint64_t mb = norm_sig(b & 0x7FFFFFFFu, eb);
  int k = ea - 127;
  uint64_t m = ma << 39;  // Q.62 in [1, 2)
  if (ma > 0xB504F3u) {   // above sqrt(2): halve
    m >>= 1;
    k += 1;
  }
  const uint64_t one = uint64_t{1} << 62;
  const bool tneg = m < one;
  const uint64_t num = tneg ? one - m : m - one;
  const uint64_t t = static_cast<uint64_t>((static_cast<u128>(num) << 64) / (m + one));
  const uint64_t s = static_cast<uint64_t>((static_cast<u128>(t) * t) >> 64);
  uint64_t h = kPowLogC[12];
  for (int j = 11; j >= 0; --j) h = kPowLogC[j] + static_cast<uint64_t>((static_cast<u128>(h) * s) >> 64);
  const uint64_t g = static_cast<uint64_t>((static_cast<u128>(t) * h) >> 63);
  const uint64_t l = static_cast<uint64_t>((static_cast<u128>(g) * kPowK) >> 62);
  // k 2^64 as a product: k is negative for a below 1, and a negative value shifted left is undefined
  const i128 y0 = static_cast<i128>(k) * (i128{1} << 64) + (tneg ? -static_cast<i128>(l) : static_cast<i128>(l));
  const bool yneg = (y0 < 0) != ((b >> 31) != 0);
  const u128 p = static_cast<u128>(y0 < 0 ? -y0 : y0) * mb;  // |y| = p 2^(eb - 150 - 64)
  const int hi_bit = 127 - ((p >> 64) != 0 ? __builtin_clzll(static_cast<uint64_t>(p >> 64))
                                           : 64 + __builtin_clzll(static_cast<uint64_t>(p)));
  const int sh = eb - 150;
  if (hi_bit + sh - 64 >= 8) return yneg ? 0.0f : fb(kInf);  // |y| >= 256
  const u128 ym = sh >= 0 ? p << sh : (sh <= -127 ? 0 : p >> -sh);
  const i128 y = yneg ? -static_cast<i128>(ym) : static_cast<i128>(ym);
  const int64_t n = static_cast<int64_t>(y >> 64);
  if (n >= 128) return fb(kInf);
  if (n < -151) return 0.0f;
  const uint64_t v = static_cast<uint64_t>((static_cast<u128>(static_cast<uint64_t>(y)) * kPowLn2) >> 64);
  uint64_t e = kPowExpD[19];
  for (int j = 18; j >= 0; --j) e = kPowExpD[j] + static_cast<uint64_t>((static_cast<u128>(e) * v) >> 64);
  return round_scaled(e, static_cast<int>(n) - 62);
}

// b an integer (finite), and an odd one (|b| < 2^24).
inline bool is_int(float b) { return trunc(b) == b; }
inline bool is_odd_int(float b) {
  const float a = fb(bf(b) & 0x7FFFFFFFu);
  return a < 16777216.0f && is_int(b) && (static_cast<int32_t>(a) & 1);
}

inline float power(float a, float b) {
  const uint32_t ma = bf(a) & 0x7FFFFFFFu, mb = bf(b) & 0x7FFFFFFFu;
  const bool aneg = (bf(a) >> 31) != 0, bneg = (bf(b) >> 31) != 0;
  if (mb == 0 || bf(a) == kOne) return 1.0f;  // x^0 = 1 and 1^y = 1, NaN included
  if (is_nan(a) || is_nan(b)) return fb(kNan);
  if (mb == kInf) {
    if (ma == kOne) return 1.0f;               // (-1)^+-inf
    return ((ma > kOne) != bneg) ? fb(kInf) : 0.0f;
  }
  const bool odd = is_odd_int(b);
  if (ma == 0 || ma == kInf) {                 // +-0 and +-inf: 0^b = 1/inf^b
    const bool big = (ma == kInf) != bneg;
    const float r = big ? fb(kInf) : 0.0f;
    return aneg && odd ? -r : r;
  }
  if (aneg && !is_int(b)) return fb(kNan);
  const float r = pow_pos(ma, bf(b));
  return aneg && odd ? -r : r;
}

}  // namespace ncore::num::am
