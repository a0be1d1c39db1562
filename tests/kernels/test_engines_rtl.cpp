// The scalar engine and the vector engine's reductions inside the full-size core (trn2): a traced
// kernel using activation_reduce (relu, a per-partition scale and bias), activation into PSUM,
// and tensor_reduce over one and two trailing axes, run on the RTL in check mode and compared
// with the same arithmetic written out here in plain C++ floats; and the element-wise math (nl::exp,
// nl::divide, ...) of the C++ API against libm within the error bounds of docs/hardware.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "run/pipeline.hpp"
#include "ncore/presets_gen.hpp"
#include "nki/nki.hpp"
#include "ncore/numerics.hpp"

using namespace ncore;
namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;

namespace {

// fp32 arithmetic as the engines do it: one rounding per operation (no contraction).
float mul(float a, float b) {
  volatile float r = a * b;
  return r;
}
float add(float a, float b) {
  volatile float r = a + b;
  return r;
}

// A traced Program of fp32 inputs "x" and "y" [P, F] whose output "out" [K, P, F] (fp32) has in row k
// calls[k] of the two loaded into the SBUF.
using MathCall = std::function<Tensor(const Tensor& x, const Tensor& y)>;
Program trace_math(const char* name, const Preset& p, int64_t P, int64_t F, const std::vector<MathCall>& calls) {
  return nki::trace(name, p, [&](nki::Tracer& t) {
    Tensor x = t.input("x", {P, F}, nl::float32);
    Tensor y = t.input("y", {P, F}, nl::float32);
    Tensor out = nl::ndarray({static_cast<int64_t>(calls.size()), P, F}, nl::float32, nl::shared_hbm, "out");
    Tensor xs = nl::load(x);
    Tensor ys = nl::load(y);
    for (size_t k = 0; k < calls.size(); ++k) nl::store(out(static_cast<int64_t>(k)), calls[k](xs, ys));
    t.output(out);
  });
}

// trace_math's Program run on the RTL (one thread, check mode); (k, i) is element i of row k of
// the output "out".
struct MathRun {
  run::Result r;
  int64_t n;
  float operator()(int64_t k, int64_t i) const {
    float v;
    std::memcpy(&v, r.outputs.at("out").bytes.data() + (k * n + i) * 4, 4);
    return v;
  }
};
MathRun run_math(const Program& prog, const Preset& p, int64_t P, int64_t F, const std::vector<float>& x,
                 const std::vector<float>& y) {
  run::Arrays in{{"x", {{P, F}, isa::Dtype::fp32, std::vector<uint8_t>(P * F * 4), ""}},
                 {"y", {{P, F}, isa::Dtype::fp32, std::vector<uint8_t>(P * F * 4), ""}}};
  std::memcpy(in.at("x").bytes.data(), x.data(), P * F * 4);
  std::memcpy(in.at("y").bytes.data(), y.data(), P * F * 4);
  run::Options opt;
  opt.threads = 1;
  opt.sim.check = true;
  return {run::run_program(prog, p, in, opt), P * F};
}

// |g - want| in ulps of the exact value as an fp32 result.
double ulps(float g, double want) {
  int e;
  std::frexp(want, &e);
  return std::fabs(double(g) - want) / std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

// The largest error in ulps of row k of a run's output against want(i), over the elements i whose
// want(i) is a number (NaN: no bound there).
double worst_ulps(const MathRun& got, int64_t k, const std::function<double(int64_t i)>& want) {
  double worst = 0;
  for (int64_t i = 0; i < got.n; ++i) {
    const double w = want(i);
    if (!std::isnan(w)) worst = std::max(worst, ulps(got(k, i), w));
  }
  return worst;
}

}  // namespace

TEST_CASE("scalar engine and tensor_reduce in the core: activation_reduce, PSUM, trailing axes", "[kernels][act]") {
  constexpr int64_t P = 128, F = 300;
  const Preset& p = *find_preset("trn2");
  // out columns: [0, F) relu(x * s + b) in bf16 widened, F the add-reduce, F+1..F+3 the max of
  // each 100 of x, F+4 the min over all of x, F+5..: x * 0.5 through PSUM
  const int64_t OUT = F + 5 + F;
  const Program prog = nki::trace("engines", p, [&](nki::Tracer& t) {
    Tensor x = t.input("x", {P, F}, nl::float32);
    Tensor s = t.input("s", {P, 1}, nl::float32);
    Tensor b = t.input("b", {P, 1}, nl::bfloat16);
    Tensor out = nl::ndarray({P, OUT}, nl::float32, nl::shared_hbm, "out");
    Tensor xs = nl::ndarray({P, F}, nl::float32, nl::sbuf, "xs");
    Tensor ss = nl::ndarray({P, 1}, nl::float32, nl::sbuf, "ss");
    Tensor bs = nl::ndarray({P, 1}, nl::bfloat16, nl::sbuf, "bs");
    nisa::dma_copy(xs, x);
    nisa::dma_copy(ss, s);
    nisa::dma_copy(bs, b);
    Tensor y = nl::ndarray({P, F}, nl::bfloat16, nl::sbuf, "y");
    Tensor r = nl::ndarray({P, 1}, nl::float32, nl::sbuf, "r");
    nisa::activation_reduce(y, nl::relu, xs, nl::add, r, bs, ss);
    Tensor m = nisa::tensor_reduce(nl::maximum, xs.reshape({P, 3, 100}), 2);
    Tensor mn = nisa::tensor_reduce(nl::minimum, xs.reshape({P, 3, 100}), {1, 2});
    Tensor h = nl::ndarray({P, F}, nl::float32, nl::psum, "h");
    nisa::activation(h, nl::identity, xs, {}, 0.5f);
    Tensor hs = nl::copy(h, nl::float32);
    nisa::dma_copy(out(nl::all, nl::ds(0, F)), y);
    nisa::dma_copy(out(nl::all, nl::ds(F, 1)), r);
    nisa::dma_copy(out(nl::all, nl::ds(F + 1, 3)), m);
    nisa::dma_copy(out(nl::all, nl::ds(F + 4, 1)), mn);
    nisa::dma_copy(out(nl::all, nl::ds(F + 5, F)), hs);
    t.output(out);
  });

  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(P * F), s(P), b(P);
  run::Arrays in{{"x", {{P, F}, isa::Dtype::fp32, std::vector<uint8_t>(P * F * 4), ""}},
                 {"s", {{P, 1}, isa::Dtype::fp32, std::vector<uint8_t>(P * 4), ""}},
                 {"b", {{P, 1}, isa::Dtype::bf16, std::vector<uint8_t>(P * 2), ""}}};
  auto put = [&](const char* name, uint64_t i, uint32_t bits, unsigned esz) {
    std::memcpy(in.at(name).bytes.data() + i * esz, &bits, esz);
  };
  for (int64_t i = 0; i < P * F; ++i) {
    x[i] = u(rng);
    put("x", i, num::float_to_bits(x[i]), 4);
  }
  for (int64_t i = 0; i < P; ++i) {
    s[i] = u(rng);
    put("s", i, num::float_to_bits(s[i]), 4);
    const uint32_t bb = num::from_float(u(rng), isa::Dtype::bf16);
    b[i] = num::bits_to_float(num::to_f32_bits(bb, isa::Dtype::bf16));
    put("b", i, bb, 2);
  }
  run::Options opt;
  opt.threads = 1;
  opt.sim.check = true;
  const run::Result r = run::run_program(prog, p, in, opt);
  CHECK(r.stats.checked_instructions >= 6);

  const std::vector<uint8_t>& out = r.outputs.at("out").bytes;
  auto got = [&](int64_t row, int64_t col) {
    uint32_t v;
    std::memcpy(&v, out.data() + (row * OUT + col) * 4, 4);
    return v;
  };
  uint64_t bad = 0;
  for (int64_t q = 0; q < P; ++q) {
    float acc = 0.0f;
    for (int64_t i = 0; i < F; ++i) {
      const float z = std::max(add(mul(x[q * F + i], s[q]), b[q]), 0.0f);
      acc = add(acc, z);
      const uint32_t want = num::to_f32_bits(num::from_float(z, isa::Dtype::bf16), isa::Dtype::bf16);
      bad += got(q, i) != want;
      bad += got(q, F + 5 + i) != num::float_to_bits(mul(x[q * F + i], 0.5f));
    }
    bad += got(q, F) != num::float_to_bits(acc);
    float mn = x[q * F];
    for (int64_t g = 0; g < 3; ++g) {
      float mx = x[q * F + g * 100];
      for (int64_t i = 0; i < 100; ++i) {
        mx = std::max(mx, x[q * F + g * 100 + i]);
        mn = std::min(mn, x[q * F + g * 100 + i]);
      }
      bad += got(q, F + 1 + g) != num::float_to_bits(mx);
    }
    bad += got(q, F + 4) != num::float_to_bits(mn);
  }
  CHECK(bad == 0);
}

TEST_CASE("element-wise math in the core: nl::exp, tanh, sqrt, divide, greater through the C++ API", "[kernels][act]") {
  constexpr int64_t P = 128, F = 64;
  const Preset& p = *find_preset("trn2");
  // out[k] for k = exp(x), tanh(x), sqrt(|x|), x / y, x > y, gelu(x)
  const Program prog = trace_math("math", p, P, F,
                                  {[](const Tensor& x, const Tensor&) { return nl::exp(x); },
                                   [](const Tensor& x, const Tensor&) { return nl::tanh(x); },
                                   [](const Tensor& x, const Tensor&) { return nl::sqrt(nl::abs(x)); },
                                   [](const Tensor& x, const Tensor& y) { return nl::divide(x, y); },
                                   [](const Tensor& x, const Tensor& y) { return nl::greater(x, y); },
                                   [](const Tensor& x, const Tensor&) { return nisa::activation(nl::gelu, x); }});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  std::vector<float> x(P * F), y(P * F);
  for (int64_t i = 0; i < P * F; ++i) {
    x[i] = u(rng);
    y[i] = i % 7 ? u(rng) : x[i];
  }
  const MathRun got = run_math(prog, p, P, F, x, y);
  CHECK(got.r.stats.checked_instructions >= 7);
  uint64_t bad = 0;
  for (int64_t i = 0; i < P * F; ++i) {
    bad += got(2, i) != std::sqrt(std::fabs(x[i]));
    bad += got(3, i) != x[i] / y[i];
    bad += got(4, i) != (x[i] > y[i] ? 1.0f : 0.0f);
  }
  CHECK(bad == 0);
  // docs/hardware.md's bounds
  CHECK(worst_ulps(got, 0, [&](int64_t i) { return std::exp(double(x[i])); }) <= 1.0);
  CHECK(worst_ulps(got, 1, [&](int64_t i) { return std::tanh(double(x[i])); }) <= 2.0);
  CHECK(worst_ulps(got, 5, [&](int64_t i) { return 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0)); }) <= 6.0);
}

TEST_CASE("trigonometric, rounding, power, mod and logical ops in the core through the C++ API", "[kernels][act]") {
  constexpr int64_t P = 128, F = 32;
  const Preset& p = *find_preset("trn2");
  // out[k] for k = sin(x), arctan(x), floor(x), x ** y, x mod y (NumPy's), fmod(x, y), logical_not(x),
  // logical_and(x, y)
  const Program prog = trace_math("math2", p, P, F,
                                  {[](const Tensor& x, const Tensor&) { return nl::sin(x); },
                                   [](const Tensor& x, const Tensor&) { return nisa::activation(nl::arctan, x); },
                                   [](const Tensor& x, const Tensor&) { return nl::floor(x); },
                                   [](const Tensor& x, const Tensor& y) { return nl::power(x, y); },
                                   [](const Tensor& x, const Tensor& y) { return nl::mod(x, y); },
                                   [](const Tensor& x, const Tensor& y) { return nl::fmod(x, y); },
                                   [](const Tensor& x, const Tensor&) { return nl::logical_not(x); },
                                   [](const Tensor& x, const Tensor& y) { return nl::logical_and(x, y); }});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  std::vector<float> x(P * F), y(P * F);
  for (int64_t i = 0; i < P * F; ++i) {
    x[i] = i % 11 ? u(rng) : 0.0f;
    y[i] = i % 5 ? u(rng) : std::round(u(rng));  // integer exponents of negative bases
  }
  const MathRun got = run_math(prog, p, P, F, x, y);
  CHECK(got.r.stats.checked_instructions >= 8);
  uint64_t bad = 0;
  for (int64_t i = 0; i < P * F; ++i) {
    bad += std::isnan(std::pow(double(x[i]), double(y[i]))) && !std::isnan(got(3, i));
    bad += got(2, i) != std::floor(x[i]);
    float m = std::fmod(x[i], y[i]);  // NumPy's mod: the divisor's sign
    if (m != 0 && ((m < 0) != (y[i] < 0))) m += y[i];
    if (m == 0) m = std::copysign(0.0f, y[i]);
    bad += std::isnan(m) ? !std::isnan(got(4, i)) : num::float_to_bits(got(4, i)) != num::float_to_bits(m);
    const float fm = std::fmod(x[i], y[i]);
    bad += std::isnan(fm) ? !std::isnan(got(5, i)) : num::float_to_bits(got(5, i)) != num::float_to_bits(fm);
    bad += got(6, i) != (x[i] == 0 ? 1.0f : 0.0f);
    bad += got(7, i) != (x[i] != 0 && y[i] != 0 ? 1.0f : 0.0f);
  }
  CHECK(bad == 0);
  // docs/hardware.md's bounds; power's where x ** y is finite in fp32
  CHECK(worst_ulps(got, 0, [&](int64_t i) { return std::sin(double(x[i])); }) <= 2.0);
  CHECK(worst_ulps(got, 1, [&](int64_t i) { return std::atan(double(x[i])); }) <= 1.5);
  CHECK(worst_ulps(got, 3, [&](int64_t i) {
          const double pw = std::pow(double(x[i]), double(y[i]));
          return std::isfinite(pw) && std::fabs(pw) < 3.4e38 ? pw : std::nan("");
        }) <= 0.501);
}
