// Error bounds of the scalar engine's functions (num::act, act_math.hpp) against double-precision
// libm: every function is swept over a strided walk of all fp32 patterns in its domain and the
// largest error, in units in the last place of the fp32 result (ulp of the exact value; below
// 2^-126 the subnormal ulp 2^-149), is asserted against the bound docs/hardware.md documents
// (Numerics). NCORE_ACT_STRIDE sets the walk's stride (default 331; 1 is every pattern). The
// special values (NaN, infinities, zeros, overflow and underflow) are checked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>

#include "ncore/numerics.hpp"

using ncore::isa::ActFunc;
using ncore::isa::AluOp;
namespace num = ncore::num;

namespace {

uint64_t stride() {
  const char* s = std::getenv("NCORE_ACT_STRIDE");
  return s && *s ? std::max<uint64_t>(1, std::strtoull(s, nullptr, 0)) : 331;
}

double ulp_of(double r) {
  int e = -200;
  if (r != 0) std::frexp(std::fabs(r), &e);
  return std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

float act(ActFunc f, float x) { return num::bits_to_float(num::act(f, num::float_to_bits(x))); }

struct Worst {
  double ulp = 0;
  float at = 0;
  uint64_t count = 0;
};

// The largest error of f against ref over the fp32 values in [lo, hi] whose exact result is finite
// and representable (|ref| <= FLT_MAX), in ulps of the exact result or, where that is smaller than
// `floor` (near a zero of a function whose value there comes from a cancellation), of `floor`.
Worst sweep(ActFunc f, const std::function<double(double)>& ref, float lo, float hi, double floor = 0) {
  Worst w;
  for (uint64_t b = 0; b < (1ull << 32); b += stride()) {
    const float x = num::bits_to_float(static_cast<uint32_t>(b));
    if (!(x >= lo && x <= hi)) continue;
    const double r = ref(x);
    if (!std::isfinite(r) || std::fabs(r) > 3.4028234663852886e38) continue;
    const double e = std::fabs(double(act(f, x)) - r) / ulp_of(std::max(std::fabs(r), floor));
    ++w.count;
    if (e > w.ulp) {
      w.ulp = e;
      w.at = x;
    }
  }
  std::printf("act %-16s [%g, %g]: %llu inputs, max error %.3f ulp at %.9g\n", ncore::isa::to_string(f), lo, hi,
              static_cast<unsigned long long>(w.count), w.ulp, w.at);
  return w;
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu_tanh_arg(double x) { return 2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x); }

}  // namespace

TEST_CASE("act error bounds against libm", "[act_math]") {
  CHECK(sweep(ActFunc::exp, [](double x) { return std::exp(x); }, -104.0f, 89.0f).ulp <= 1.0);
  CHECK(sweep(ActFunc::log, [](double x) { return std::log(x); }, 0.0f, 3.4e38f).ulp <= 1.0);
  CHECK(sweep(ActFunc::tanh, [](double x) { return std::tanh(x); }, -3.4e38f, 3.4e38f).ulp <= 2.0);
  CHECK(sweep(ActFunc::sigmoid, sigmoid_ref, -3.4e38f, 3.4e38f).ulp <= 3.0);
  CHECK(sweep(ActFunc::softplus, [](double x) { return x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x)); },
              -3.4e38f, 3.4e38f)
            .ulp <= 3.0);
  // x * sigmoid(x): within 4 ulp while sigmoid(x) is a normal number (x >= -87.3); below, the
  // subnormal sigmoid carries an absolute error of about 2^-150, times |x|.
  CHECK(sweep(ActFunc::silu, [](double x) { return x * sigmoid_ref(x); }, -87.3f, 3.4e38f).ulp <= 4.0);
  for (float x = -104.0f; x < -87.3f; x += 0.0137f)
    CHECK(std::fabs(double(act(ActFunc::silu, x)) - x * sigmoid_ref(x)) <= std::fabs(x) * std::ldexp(1.0, -149));
  // gelu_apprx_tanh = x sigmoid(u), u = 2 sqrt(2/pi) (x + 0.044715 x^3): within 7 ulp for
  // x >= -2; for x < -2 rounding u (a relative 2^-23 or so) is amplified by sigmoid's condition
  // number |u| (1 - sigmoid(u)) ~ |u|: the error stays within 4 + 2.5 |u| ulp.
  const auto gelu_ref = [](double x) { return x * sigmoid_ref(gelu_tanh_arg(x)); };
  CHECK(sweep(ActFunc::gelu_apprx_tanh, gelu_ref, -2.0f, 3.4e38f).ulp <= 7.0);
  for (uint64_t b = 0xC0000000u; b < 0xC1080000u; b += stride()) {  // x in [-8.5, -2]
    const float x = num::bits_to_float(static_cast<uint32_t>(b));
    const double r = gelu_ref(x);
    INFO("gelu_apprx_tanh(" << x << ")");
    CHECK(std::fabs(double(act(ActFunc::gelu_apprx_tanh, x)) - r) / ulp_of(r) <= 4.0 + 2.5 * std::fabs(gelu_tanh_arg(x)));
  }
  CHECK(sweep(ActFunc::erf, [](double x) { return std::erf(x); }, -3.4e38f, 3.4e38f).ulp <= 1.5);
  // gelu = x Phi(x): the subnormal results (x < -13.3) included.
  CHECK(sweep(ActFunc::gelu, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, -3.4e38f, 3.4e38f)
            .ulp <= 6.0);
  // 1 / sqrt(x): two correctly rounded steps.
  CHECK(sweep(ActFunc::rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 0.0f, 3.4e38f).ulp <= 1.5);
}

TEST_CASE("act error bounds against libm: trigonometric functions, mish, the derivatives", "[act_math]") {
  // sin, cos, tan over the whole fp32 range (the reduction is exact everywhere), and within
  // |x| <= 1e4 on their own.
  CHECK(sweep(ActFunc::sin, [](double x) { return std::sin(x); }, -3.4e38f, 3.4e38f).ulp <= 2.0);
  CHECK(sweep(ActFunc::cos, [](double x) { return std::cos(x); }, -3.4e38f, 3.4e38f).ulp <= 2.0);
  CHECK(sweep(ActFunc::tan, [](double x) { return std::tan(x); }, -3.4e38f, 3.4e38f).ulp <= 3.5);
  CHECK(sweep(ActFunc::sin, [](double x) { return std::sin(x); }, -1e4f, 1e4f).ulp <= 2.0);
  CHECK(sweep(ActFunc::cos, [](double x) { return std::cos(x); }, -1e4f, 1e4f).ulp <= 2.0);
  CHECK(sweep(ActFunc::arctan, [](double x) { return std::atan(x); }, -3.4e38f, 3.4e38f).ulp <= 1.5);
  // mish = x tanh(softplus(x)): within its bound while e^x is normal (x >= -87.3); below, an
  // absolute error under |x| 2^-149 (as silu).
  const auto mish_ref = [](double x) { return x * std::tanh(std::log1p(std::exp(x))); };
  CHECK(sweep(ActFunc::mish, mish_ref, -87.3f, 3.4e38f).ulp <= 4.5);
  for (float x = -104.0f; x < -87.3f; x += 0.0137f)
    CHECK(std::fabs(double(act(ActFunc::mish, x)) - mish_ref(x)) <= std::fabs(x) * std::ldexp(1.0, -149));
  // gelu_apprx_sigmoid = x sigmoid(1.702 x): rounding u = 1.702 x is amplified by sigmoid's
  // condition number |u| for x < 0, as in gelu_apprx_tanh.
  const auto gs_ref = [](double x) { return x * sigmoid_ref(1.702 * x); };
  CHECK(sweep(ActFunc::gelu_apprx_sigmoid, gs_ref, -2.0f, 3.4e38f).ulp <= 5.0);
  for (uint64_t b = 0xC0000000u; b < 0xC2A00000u; b += stride()) {  // x in [-80, -2]
    const float x = num::bits_to_float(static_cast<uint32_t>(b));
    INFO("gelu_apprx_sigmoid(" << x << ")");
    CHECK(std::fabs(double(act(ActFunc::gelu_apprx_sigmoid, x)) - gs_ref(x)) / ulp_of(gs_ref(x)) <=
          4.0 + 2.5 * 1.702 * std::fabs(x));
  }
  // The derivatives. silu_dx and gelu_dx cross zero (at x = -1.2785 and -0.7518), where their value
  // is a difference of two terms: there the error is counted in ulps of 2^-4 (an absolute error
  // of 2^-27 per ulp).
  const auto silu_dx_ref = [](double x) { return sigmoid_ref(x) * (1.0 + x * sigmoid_ref(-x)); };
  CHECK(sweep(ActFunc::silu_dx, silu_dx_ref, -87.3f, 3.4e38f, 0.0625).ulp <= 6.0);
  const auto gelu_dx_ref = [](double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  };
  CHECK(sweep(ActFunc::gelu_dx, gelu_dx_ref, -3.4e38f, 3.4e38f, 0.0625).ulp <= 12.0);
  CHECK(sweep(ActFunc::erf_dx, [](double x) { return 2.0 / std::sqrt(M_PI) * std::exp(-x * x); }, -3.4e38f, 3.4e38f)
            .ulp <= 4.0);
}

TEST_CASE("alu power: error bound against libm, C99 special values", "[act_math]") {
  // Random pairs: bases over all positive finite floats and near 1, exponents small and large;
  // the largest error in ulps of the exact (double) result, over results in the fp32 range.
  std::mt19937_64 rng(17);
  double worst = 0;
  float wa = 0, wb = 0;
  uint64_t n = 0;
  const uint64_t pairs = std::max<uint64_t>(20000, (uint64_t{1} << 32) / stride() / 8);
  for (uint64_t i = 0; i < pairs; ++i) {
    float a, b;
    switch (i % 4) {
      case 0:  // any positive base, exponent in [-4, 4]
        a = num::bits_to_float(static_cast<uint32_t>(rng() % 0x7F800000u));
        b = std::ldexp(float(rng() % 0x1000000u), -21) - 4.0f;
        break;
      case 1:  // base near 1, large exponents
        a = num::bits_to_float(0x3F800000u + static_cast<uint32_t>(rng() % 0x10000u) - 0x8000u);
        b = std::ldexp(float(rng() % 0x1000000u), static_cast<int>(rng() % 24)) * (rng() & 1 ? 1.0f : -1.0f);
        break;
      case 2:  // integer exponents, negative bases
        a = -std::ldexp(float(rng() % 0x1000000u + 1), static_cast<int>(rng() % 40) - 44);
        b = float(static_cast<int>(rng() % 61) - 30);
        break;
      default:  // any finite pair
        a = num::bits_to_float(static_cast<uint32_t>(rng()) & 0x7F7FFFFFu);
        b = num::bits_to_float(static_cast<uint32_t>(rng()) & 0xC27FFFFFu);  // |b| < 64
        break;
    }
    const double r = std::pow(double(a), double(b));
    if (!std::isfinite(r) || std::fabs(r) > 3.4028234663852886e38 || std::isnan(r)) continue;
    const float got = num::bits_to_float(num::alu(AluOp::power, num::float_to_bits(a), num::float_to_bits(b)));
    const double e = std::fabs(double(got) - r) / ulp_of(r);
    ++n;
    if (e > worst) {
      worst = e;
      wa = a;
      wb = b;
    }
  }
  std::printf("alu power: %llu pairs, max error %.4f ulp at (%.9g, %.9g)\n", static_cast<unsigned long long>(n), worst,
              wa, wb);
  CHECK(n > 10000);
  CHECK(worst <= 0.501);
  // Special values: the host's powf (C99 Annex F) on every pair of special classes.
  const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f, 2.5f, -2.5f,
                        INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f, 16777216.0f, -16777217.0f};
  for (float a : vals)
    for (float b : vals) {
      const uint32_t got = num::alu(AluOp::power, num::float_to_bits(a), num::float_to_bits(b));
      const float want = std::pow(a, b);
      INFO("power(" << a << ", " << b << ")");
      if (std::isnan(want)) CHECK(got == num::kF32CanonNan);
      else CHECK(num::bits_to_float(got) == want);
      if (!std::isnan(want)) CHECK(std::signbit(num::bits_to_float(got)) == std::signbit(want));
    }
}

TEST_CASE("alu mod, fmod and the logical ops", "[act_math]") {
  using num::alu;
  const auto f = [](float v) { return num::float_to_bits(v); };
  const auto mod = [&](float a, float b) { return num::bits_to_float(alu(AluOp::mod, f(a), f(b))); };
  CHECK(mod(-1.0f, 3.0f) == 2.0f);
  CHECK(mod(1.0f, -3.0f) == -2.0f);
  CHECK(mod(7.5f, 2.0f) == 1.5f);
  CHECK(mod(-1e-30f, 1.0f) == 1.0f);  // -1e-30 + 1 rounds to 1, as NumPy
  CHECK(f(mod(3.0f, -3.0f)) == 0x80000000u);  // a zero takes the divisor's sign
  CHECK(f(mod(-3.0f, 3.0f)) == 0u);
  CHECK(mod(-1.0f, INFINITY) == INFINITY);  // fmod = -1, then -1 + inf (Python: -1.0 % inf = inf)
  CHECK(alu(AluOp::mod, f(1.0f), 0u) == num::kF32CanonNan);
  CHECK(alu(AluOp::fmod, f(-7.5f), f(2.0f)) == f(-1.5f));
  CHECK(alu(AluOp::fmod, f(INFINITY), f(2.0f)) == num::kF32CanonNan);
  CHECK(alu(AluOp::fmod, f(5.0f), f(INFINITY)) == f(5.0f));
  constexpr uint32_t one = 0x3F800000u, nan = 0x7FC00000u;
  CHECK(alu(AluOp::logical_and, nan, f(2.0f)) == one);  // NaN is nonzero
  CHECK(alu(AluOp::logical_and, 0x80000000u, one) == 0u);
  CHECK(alu(AluOp::logical_or, 0u, 0x80000000u) == 0u);
  CHECK(alu(AluOp::logical_or, 0u, f(-3.0f)) == one);
  CHECK(alu(AluOp::logical_xor, one, f(5.0f)) == 0u);
  CHECK(alu(AluOp::logical_xor, one, 0u) == one);
  CHECK(alu(AluOp::logical_not, 0x80000000u, one) == one);
  CHECK(alu(AluOp::logical_not, nan, 0u) == 0u);
}

TEST_CASE("act: correctly rounded and exact functions", "[act_math]") {
  // sqrt, reciprocal, square and divide are IEEE operations: the fp32 result is the exact value
  // rounded once (double rounding through double is innocuous for these operations).
  uint64_t n = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += stride()) {
    const float x = num::bits_to_float(static_cast<uint32_t>(b));
    if (std::isnan(x)) continue;
    const float y = num::bits_to_float(static_cast<uint32_t>(b * 2654435761u));
    CHECK(num::act(ActFunc::sqrt, static_cast<uint32_t>(b)) ==
          (x < 0 ? num::kF32CanonNan : num::float_to_bits(float(std::sqrt(double(x))))));
    if (x != 0) CHECK(act(ActFunc::reciprocal, x) == float(1.0 / double(x)));
    CHECK(act(ActFunc::square, x) == float(double(x) * double(x)));
    if (y != 0 && !std::isnan(y))
      CHECK(num::bits_to_float(num::alu(AluOp::divide, num::float_to_bits(x), num::float_to_bits(y))) ==
            float(double(x) / double(y)));
    CHECK(act(ActFunc::abs, x) == std::fabs(x));
    CHECK(act(ActFunc::negative, x) == -x);
    CHECK(act(ActFunc::sign, x) == (x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f));
    CHECK(num::act(ActFunc::floor, static_cast<uint32_t>(b)) == num::float_to_bits(std::floor(x)));
    CHECK(num::act(ActFunc::ceil, static_cast<uint32_t>(b)) == num::float_to_bits(std::ceil(x)));
    CHECK(num::act(ActFunc::trunc, static_cast<uint32_t>(b)) == num::float_to_bits(std::trunc(x)));
    ++n;
  }
  CHECK(n > 1000);
}

TEST_CASE("act: special values", "[act_math]") {
  using num::act;
  constexpr uint32_t nan = 0x7FC00000u, inf = 0x7F800000u, ninf = 0xFF800000u, one = 0x3F800000u;
  for (ActFunc f : ncore::isa::kActFuncValues)
    if (f != ActFunc::copy) CHECK(act(f, 0x7F800001u) == nan);  // any NaN in: the canonical NaN out
  CHECK(act(ActFunc::exp, inf) == inf);
  CHECK(act(ActFunc::exp, ninf) == 0u);
  CHECK(act(ActFunc::exp, 0x42B17217u) == 0x7F7FFF84u);  // exp(88.72283) = 3.40275e38 (libm: 0x7F7FFF84)
  CHECK(act(ActFunc::exp, 0x42B17218u) == inf);          // 88.72284 is above ln(FLT_MAX): overflow
  CHECK(act(ActFunc::exp, 0xC2CE0000u) == 0x00000001u);  // exp(-103) = 1.4e-45 = 2^-149 rounded
  CHECK(act(ActFunc::exp, 0xC2D00000u) == 0u);           // exp(-104) = 6.8e-46 < 2^-150: +0
  CHECK(act(ActFunc::exp, 0u) == one);
  CHECK(act(ActFunc::exp, 0x80000000u) == one);
  CHECK(act(ActFunc::log, 0u) == ninf);
  CHECK(act(ActFunc::log, 0x80000000u) == ninf);
  CHECK(act(ActFunc::log, 0xBF800000u) == nan);
  CHECK(act(ActFunc::log, inf) == inf);
  CHECK(act(ActFunc::log, one) == 0u);
  CHECK(act(ActFunc::log, 0x00000001u) == 0xC2CE8ED0u);  // log(2^-149) = -103.27893
  CHECK(act(ActFunc::tanh, inf) == one);
  CHECK(act(ActFunc::tanh, ninf) == 0xBF800000u);
  CHECK(act(ActFunc::tanh, 0x80000000u) == 0x80000000u);
  CHECK(act(ActFunc::tanh, 0x00000001u) == 0x00000001u);
  CHECK(act(ActFunc::sigmoid, inf) == one);
  CHECK(act(ActFunc::sigmoid, ninf) == 0u);
  CHECK(act(ActFunc::sigmoid, 0x80000000u) == 0x3F000000u);
  CHECK(act(ActFunc::silu, ninf) == nan);  // -inf * 0, as x * sigmoid(x) in NumPy
  CHECK(act(ActFunc::gelu, ninf) == nan);  // the same for x Phi(x)
  CHECK(act(ActFunc::gelu, inf) == inf);
  CHECK(act(ActFunc::gelu, 0x80000000u) == 0x80000000u);
  CHECK(act(ActFunc::erf, inf) == one);
  CHECK(act(ActFunc::erf, ninf) == 0xBF800000u);
  CHECK(act(ActFunc::erf, 0x80000000u) == 0x80000000u);
  CHECK(act(ActFunc::erf, 0x00000001u) == 0x00000001u);  // erf(x) = 2x / sqrt(pi) = 1.128 x: one subnormal ulp
  CHECK(act(ActFunc::silu, inf) == inf);
  CHECK(act(ActFunc::softplus, inf) == inf);
  CHECK(act(ActFunc::softplus, ninf) == 0u);
  CHECK(act(ActFunc::softplus, 0u) == 0x3F317218u);  // ln 2
  CHECK(act(ActFunc::sqrt, 0x80000000u) == 0x80000000u);
  CHECK(act(ActFunc::sqrt, 0xBF800000u) == nan);
  CHECK(act(ActFunc::sqrt, 0x00000001u) == 0x1A3504F3u);  // sqrt(2^-149) = 2^-74.5
  CHECK(act(ActFunc::rsqrt, 0u) == inf);
  CHECK(act(ActFunc::rsqrt, 0x80000000u) == ninf);
  CHECK(act(ActFunc::rsqrt, inf) == 0u);
  CHECK(act(ActFunc::reciprocal, 0x80000000u) == ninf);
  CHECK(act(ActFunc::reciprocal, 0x00000001u) == inf);  // 1 / 2^-149 overflows
  CHECK(act(ActFunc::sign, 0x80000000u) == 0u);
  CHECK(act(ActFunc::sign, 0x00000001u) == one);
  CHECK(act(ActFunc::negative, 0u) == 0x80000000u);
  CHECK(act(ActFunc::abs, ninf) == inf);
  // The ALU's comparisons: 1.0 / 0.0, -0 == +0, NaN unordered.
  using num::alu;
  CHECK(alu(AluOp::equal, 0x80000000u, 0u) == one);
  CHECK(alu(AluOp::not_equal, nan, nan) == one);
  CHECK(alu(AluOp::equal, nan, nan) == 0u);
  CHECK(alu(AluOp::greater, 0x40000000u, one) == one);
  CHECK(alu(AluOp::greater_equal, one, one) == one);
  CHECK(alu(AluOp::less, one, 0x40000000u) == one);
  CHECK(alu(AluOp::less_equal, 0x40000000u, one) == 0u);
  CHECK(alu(AluOp::less, nan, one) == 0u);
  CHECK(alu(AluOp::divide, one, 0u) == inf);
  CHECK(alu(AluOp::divide, 0u, 0u) == nan);
  CHECK(alu(AluOp::divide, inf, inf) == nan);
  CHECK(alu(AluOp::divide, 0x00000001u, 0x40000000u) == 0u);  // 2^-150: tie to even, +0
}
