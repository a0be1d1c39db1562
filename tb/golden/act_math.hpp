// The scalar engine's activation functions and the ALU's divide and comparisons in C++, on host
// floats: the golden model's side of the contract that rtl/ncore_fp_pkg.sv implements in
// SystemVerilog (f32_div, f32_sqrt, act_exp, act_log, ...).
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
// bounds against double-precision libm, measured by tb/golden/test_act_math.cpp, are in the
// README (Numerics). Written once; change this file and ncore_fp_pkg.sv together.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ncore::num::am {

inline float fb(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline uint32_t bf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

inline constexpr uint32_t kNan = 0x7FC00000u;
inline constexpr uint32_t kInf = 0x7F800000u;
inline constexpr uint32_t kOne = 0x3F800000u;

// Constants, as fp32 bit patterns (the RTL uses the same ones).
inline constexpr uint32_t kLog2e = 0x3FB8AA3Bu;   // log2(e)
inline constexpr uint32_t kMagic = 0x4B400000u;   // 1.5 * 2^23: t + kMagic rounds t to an integer
inline constexpr uint32_t kLn2Hi = 0x3F317200u;   // ln 2, high 15 bits: k * kLn2Hi is exact for |k| < 512
inline constexpr uint32_t kLn2Lo = 0x35BFBE8Eu;   // ln 2 - kLn2Hi
inline constexpr uint32_t kExpHi = 0x42B20000u;   // 89: exp(x > 89) = +inf
inline constexpr uint32_t kExpLo = 0xC2D00000u;   // -104: exp(x < -104) = +0
// exp: p(r) = 1 + r + r^2 q(r) on |r| <= ln2 / 2, q fitted to (e^r - 1 - r) / r^2 (relative
// error 1.2e-8).
inline constexpr uint32_t kExpQ[6] = {0x3F000000u, 0x3E2AAAABu, 0x3D2AAA6Eu, 0x3C0888B8u, 0x3AB6AA1Fu, 0x39502470u};
// log: log(1 + f) = f - (f^2 / 2 - s (f^2 / 2 + R(s^2))), s = f / (2 + f), R fitted (fdlibm's logf
// coefficients).
inline constexpr uint32_t kLg[4] = {0x3F2AAAAAu, 0x3ECCCE13u, 0x3E91E9EEu, 0x3E789E26u};
inline constexpr uint32_t kSqrt2 = 0x3FB504F3u;    // m above sqrt(2) (as bits) is halved
inline constexpr uint32_t kTwo25 = 0x4C000000u;    // 2^25: scales a subnormal log input to normal
// tanh: tanh(a) = a + a (z q(z)), z = a^2, for a < 0.625, q fitted to (tanh(a) / a - 1) / a^2
// (relative error 4.6e-8).
inline constexpr uint32_t kTanhSmall = 0x3F200000u;  // 0.625
inline constexpr uint32_t kTanhQ[6] = {0xBEAAAAABu, 0x3E088874u, 0xBD5D043Cu, 0x3CB25297u, 0xBC08A8A0u, 0x3B160F61u};
// gelu_apprx_tanh: x * sigmoid(x (kG0 + kG1 x^2)), kG0 = 2 sqrt(2 / pi), kG1 = kG0 * 0.044715.
inline constexpr uint32_t kG0 = 0x3FCC422Au;
inline constexpr uint32_t kG1 = 0x3D922279u;

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
inline constexpr uint32_t kErfP[7] = {0x3E0375D4u, 0xBEC093A3u, 0x3DE71761u, 0xBCDC0FBEu,
                                      0x3BAABDC3u, 0xBA588C0Bu, 0x38BAECB3u};
inline constexpr uint32_t kErfSmall = 0x3F580000u;  // 0.84375
inline constexpr uint32_t kErfOne = 0x40800000u;    // 4: erf(|x| >= 4) = +-1 (erfc(4) < 2^-25)
inline constexpr uint32_t kErfcZero = 0x41280000u;  // 10.5: erfc(z >= 10.5) = +0
inline constexpr uint32_t kErfcBreak[4] = {0x3FA00000u, 0x3FE00000u, 0x40200000u, 0x40800000u};  // 1.25 1.75 2.5 4
// Per interval: c (the center of t), then G's coefficients from degree 0.
inline constexpr uint32_t kErfcG[5][9] = {
    {0x3F74898Du, 0x3ED48908u, 0x3E91784Au, 0xBDFFA6F5u, 0x3D3A36CEu, 0xBC1AD16Du, 0xBB8F4078u, 0x3BFF1347u, 0xBBB8EC91u},
    {0x3F2AAAABu, 0x3EA4A6D8u, 0x3EBC7E5Cu, 0xBE2AB6BCu, 0x3D401B0Cu, 0x3C6F134Bu, 0xBD181F96u, 0x3D149180u, 0xBCB5FEDBu},
    {0x3EF0F0F1u, 0x3E787E95u, 0x3EE05569u, 0xBE3FAD8Cu, 0x3C6CEB40u, 0x3DA050B1u, 0xBDCA136Eu, 0x3D819E20u, 0xBB81016Du},
    {0x3E9D89D9u, 0x3E2A53D1u, 0x3EFF411Eu, 0xBE352542u, 0xBD8A6C98u, 0x3E36E2F3u, 0xBE0641D9u, 0xBD33F0EFu, 0x3E52995Du},
    {0x3E0D3DCBu, 0x3D9DE62Du, 0x3F0C7EABu, 0xBDDA5CA2u, 0xBE5A45CBu, 0x3E5AD918u, 0x3E030DA7u, 0xBEF8F0A1u, 0x3EBC79CCu}};
inline constexpr uint32_t kInvSqrt2 = 0x3F3504F3u;  // 1 / sqrt(2)

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

}  // namespace ncore::num::am
