// FP unit bench: rtl/ncore_fp_pkg.sv (through the ncore_fp_tb wrapper) against the C++ reference
// firmware/include/ncore/numerics.hpp, bit for bit.
//
//   - special-value classes: every pair of classes for every op, every class through every
//     conversion;
//   - all 65536 bf16 and fp16 patterns to fp32 and back, and fp32 -> bf16/fp16 on a dense sweep
//     that holds every tie (every exponent x every 10 leading mantissa bits x the low patterns
//     around each rounding point) plus a strided walk over all 2^32 patterns;
//   - random operand pairs from a generator that favours the hard cases (close exponents and
//     cancellation, subnormals, products near underflow and overflow): NCORE_FP_PAIRS pairs per op
//     (default 200000) in the default run, NCORE_FP_LONG_PAIRS (default 10 million) in the hidden
//     "[.long]" test that the benchmark runs: `test_fp_unit "[.long]"`.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vncore_fp_tb.h"
#include "ncore/numerics.hpp"
#include "verilated.h"

using ncore::isa::AluOp;
using ncore::isa::Dtype;
namespace num = ncore::num;

namespace {

using ncore::isa::ActFunc;
constexpr auto kOps = ncore::isa::kAluOpValues;
constexpr auto kFuncs = ncore::isa::kActFuncValues;
constexpr auto kDtypes = ncore::isa::kDtypeValues;
constexpr Dtype kFp8Dtypes[] = {Dtype::fp8_e4m3, Dtype::fp8_e5m2};
constexpr Dtype kIntDtypes[] = {Dtype::int8, Dtype::uint8, Dtype::int16, Dtype::uint16, Dtype::int32, Dtype::uint32};

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

uint64_t env_count(const char* name, uint64_t dflt) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : dflt;
}

// The Verilated wrapper, and a log of the first few mismatches.
class Bench {
 public:
  Bench() : ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<Vncore_fp_tb>(ctx_.get())) {}

  // Drives one operand pair (and raw = a) and checks every ALU output; op_i is `op`.
  void check_pair(uint32_t a, uint32_t b, AluOp op) {
    dut_->a_i = a;
    dut_->b_i = b;
    dut_->op_i = static_cast<uint8_t>(op);
    dut_->eval();
    expect("add", a, b, dut_->add_o, num::alu(AluOp::add, a, b));
    expect("subtract", a, b, dut_->sub_o, num::alu(AluOp::subtract, a, b));
    expect("multiply", a, b, dut_->mul_o, num::alu(AluOp::multiply, a, b));
    expect("max", a, b, dut_->max_o, num::alu(AluOp::max, a, b));
    expect("min", a, b, dut_->min_o, num::alu(AluOp::min, a, b));
    expect("divide", a, b, dut_->div_o, num::alu(AluOp::divide, a, b));
    expect(ncore::isa::to_string(op), a, b, dut_->alu_o, num::alu(op, a, b));
    ++pairs_;
  }

  // fp_act(fn, x) against num::act, and f32_sqrt(x) against the host's sqrtf.
  void check_act(uint32_t x, ActFunc fn) {
    dut_->a_i = x;
    dut_->fn_i = static_cast<uint8_t>(fn);
    dut_->eval();
    expect(std::string("act ") + ncore::isa::to_string(fn), x, 0, dut_->act_o, num::act(fn, x));
    expect("sqrt", x, 0, dut_->sqrt_o, num::act(ActFunc::sqrt, x));
    ++acts_;
  }

  // fp_to_f32(raw, dt) and fp_from_f32(f, dt).
  void check_to_f32(uint32_t raw, Dtype dt) {
    check_conversion("to_f32 ", dut_->raw_i, raw, dt, dut_->to_f32_o, num::to_f32_bits(raw, dt));
  }
  void check_from_f32(uint32_t f, Dtype dt) {
    check_conversion("from_f32 ", dut_->a_i, f, dt, dut_->from_f32_o, num::from_f32_bits(f, dt));
  }
  // raw -> fp32 -> raw in the RTL; non-NaN 16-bit patterns must come back unchanged.
  void check_round_trip(uint16_t raw, Dtype dt) {
    check_to_f32(raw, dt);
    const uint32_t f = dut_->to_f32_o;
    check_from_f32(f, dt);
    const bool nan = num::to_f32_bits(raw, dt) == num::kF32CanonNan;  // only NaNs widen to it
    const uint32_t want = nan ? num::from_f32_bits(num::kF32CanonNan, dt) : raw;
    expect(std::string("round trip ") + ncore::isa::to_string(dt), raw, 0, dut_->from_f32_o, want);
  }

  uint32_t last_to_f32() const { return dut_->to_f32_o; }
  uint32_t last_from_f32() const { return dut_->from_f32_o; }
  uint64_t failures() const { return failures_; }
  uint64_t pairs() const { return pairs_; }
  uint64_t conversions() const { return conversions_; }
  uint64_t acts() const { return acts_; }
  std::string report() const { return log_.str(); }

 private:
  // A conversion: x driven on the input port `in`, dt on dt_i, the output port `out` (read once the
  // model has evaluated) checked against `want`.
  template <class In, class Out>
  void check_conversion(const char* what, In& in, uint32_t x, Dtype dt, const Out& out, uint32_t want) {
    in = x;
    dut_->dt_i = static_cast<uint8_t>(dt);
    dut_->eval();
    expect(what + std::string(ncore::isa::to_string(dt)), x, 0, out, want);
    ++conversions_;
  }

  void expect(const std::string& what, uint32_t a, uint32_t b, uint32_t got, uint32_t want) {
    if (got == want) return;
    if (++failures_ <= 20)
      log_ << what << "(" << hex(a) << ", " << hex(b) << "): rtl " << hex(got) << ", reference " << hex(want) << "\n";
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vncore_fp_tb> dut_;
  uint64_t failures_ = 0, pairs_ = 0, conversions_ = 0, acts_ = 0;
  std::ostringstream log_;
};

// fp32 values of every special class, both signs.
std::vector<uint32_t> special_values() {
  std::vector<uint32_t> mags = {
      0x00000000,  // 0
      0x00000001,  // min subnormal
      0x00000002, 0x00000003,
      0x007FFFFF,  // max subnormal
      0x00400000, 0x00123456, 0x0000FFFF, 0x00008000, 0x00018000,  // subnormals (bf16 ties)
      0x00800000,  // min normal
      0x00800001, 0x00FFFFFF, 0x01000000,
      0x7F7FFFFF,  // max normal
      0x7F7FFFFE, 0x7F000000, 0x7EFFFFFF, 0x7F7F8000, 0x7F7F7FFF,  // near overflow (bf16 too)
      0x3F800000,  // 1
      0x3F800001, 0x3F7FFFFF, 0x3FFFFFFF, 0x40000000, 0x3F000000, 0x3FC00000,
      0x33800000, 0x33000000, 0x34000000, 0x34400000, 0x4B800000, 0x4B7FFFFF,  // 2^-24, 2^-25, 2^-23, 2^24
      0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,  // bf16 ties
      0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF,  // fp16 ties
      0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000,  // fp16 max, overflow threshold
      0x38800000, 0x387FC000, 0x387FE000, 0x387FDFFF, 0x33000001, 0x33C00000, 0x33A00000,  // fp16 subnormal edges
      0x1F800000, 0x20000000, 0x5F000000, 0x5F800000,  // products at the underflow / overflow edges
      0x7F800000,  // inf
      0x7FC00000,  // qNaN
      0x7FC00001, 0x7FFFFFFF,
      0x7F800001,  // sNaN
      0x7FBFFFFF,
  };
  std::mt19937 rng(7);
  for (int k = 0; k < 6; ++k) mags.push_back(rng() & 0x007FFFFF);                           // random subnormals
  for (int k = 0; k < 10; ++k) mags.push_back(((rng() % 254 + 1) << 23) | (rng() & 0x7FFFFF));  // random normals
  std::vector<uint32_t> all;
  for (uint32_t m : mags) {
    all.push_back(m);
    all.push_back(m | 0x80000000u);
  }
  return all;
}

// Random fp32 operand pairs, biased to the cases where adders and multipliers go wrong.
class PairGen {
 public:
  explicit PairGen(uint64_t seed) : rng_(seed), specials_(special_values()) {}

  std::pair<uint32_t, uint32_t> next() {
    const uint32_t a = operand();
    uint32_t b;
    const uint32_t ea = (a >> 23) & 0xFF;
    switch (rng_() % 8) {
      case 0:
      case 1:
        b = operand();
        break;
      case 2:  // close exponents: alignment with guard/round/sticky
        b = with_exp(rng_(), clamp_exp(int(ea) + int(rng_() % 53) - 26));
        break;
      case 3:  // near-cancellation: a few ulps off, either sign
        b = (a + (rng_() % 64) - 32) ^ ((rng_() & 1) << 31);
        break;
      case 4:  // same magnitude bits, long carries and borrows
        b = (a & 0xFF800000u) | ((rng_() & 1) ? 0x7FFFFFu & ~(rng_() & 0xFF) : rng_() & 0xFF) | ((rng_() & 1) << 31);
        break;
      case 5:  // product near the subnormal range or below it
        b = with_exp(rng_(), clamp_exp(127 - int(ea) + 1 - int(rng_() % 40)));
        break;
      case 6:  // product near overflow
        b = with_exp(rng_(), clamp_exp(127 + 254 - int(ea) - int(rng_() % 4)));
        break;
      default:
        b = specials_[rng_() % specials_.size()];
        break;
    }
    return (rng_() & 1) ? std::make_pair(a, b) : std::make_pair(b, a);
  }

 private:
  static int clamp_exp(int e) { return e < 0 ? 0 : e > 255 ? 255 : e; }
  static uint32_t with_exp(uint32_t r, int e) { return (r & 0x807FFFFFu) | uint32_t(e) << 23; }

  uint32_t operand() {
    const uint32_t r = rng_();
    switch (rng_() % 8) {
      case 0:
      case 1:
        return r;  // uniform bits
      case 2:
        return r & 0x807FFFFFu;  // subnormal (or zero)
      case 3:
        return with_exp(r, 97 + int(rng_() % 60));  // around 1
      case 4:
        return with_exp(r, int(rng_() % 24) + 1);  // small normals
      case 5:
        return with_exp(r, 254 - int(rng_() % 24));  // large normals
      case 6:
        return with_exp(r & 0xFFFF0000u | ((rng_() & 1) ? 0xFFFF : 0), int(rng_() % 256));  // runs of ones/zeros
      default:
        return specials_[rng_() % specials_.size()];
    }
  }

  std::mt19937_64 rng_;
  std::vector<uint32_t> specials_;

 public:
  // An activation input: an operand as above, or a value where the functions change regime (a
  // uniform float in [-110, 110] or [-2, 2], or near a branch point of act_math.hpp).
  uint32_t act_input() {
    std::uniform_real_distribution<float> wide(-110.0f, 110.0f), narrow(-2.0f, 2.0f);
    static constexpr uint32_t kEdges[] = {0x42B20000u, 0xC2D00000u, 0x42B17218u, 0xC2AEAC50u, 0x3F200000u,
                                          0x3FB504F3u, 0x3F3504F3u, 0x3F800000u, 0x41100000u, 0xC1100000u};
    switch (rng_() % 6) {
      case 0:
        return operand();
      case 1:
        return num::float_to_bits(wide(rng_));
      case 2:
        return num::float_to_bits(narrow(rng_));
      case 3:
        return (kEdges[rng_() % std::size(kEdges)] + uint32_t(rng_() % 64) - 32u) ^ uint32_t(rng_() & 1) << 31;
      default:
        return static_cast<uint32_t>(rng_());
    }
  }
};

void random_pairs(uint64_t n, uint64_t seed) {
  Bench bench;
  PairGen gen(seed);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < n; ++k) {
    const auto [a, b] = gen.next();
    bench.check_pair(a, b, kOps[k % kOps.size()]);
    if (bench.failures() > 1000) break;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fp unit: %llu random pairs, each through add, subtract, multiply, max, min, divide and fp_alu: %.2f s (%.2f M pairs/s)\n",
              static_cast<unsigned long long>(bench.pairs()), s, bench.pairs() / s / 1e6);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.pairs() == n);
}

}  // namespace

TEST_CASE("fp_alu: every pair of special-value classes, every op", "[fp]") {
  Bench bench;
  const auto vals = special_values();
  for (uint32_t a : vals)
    for (uint32_t b : vals)
      for (AluOp op : kOps) bench.check_pair(a, b, op);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.pairs() == vals.size() * vals.size() * kOps.size());
}

TEST_CASE("fp_to_f32 / fp_from_f32: every special class, every dtype", "[fp]") {
  Bench bench;
  std::mt19937 rng(3);
  for (uint32_t v : special_values())
    for (Dtype dt : kDtypes) {
      bench.check_from_f32(v, dt);
      bench.check_to_f32(v, dt);                       // fp32 view; 16-bit dtypes take the LSBs
      bench.check_to_f32(v >> 16, dt);                 // the bf16 pattern of v
      bench.check_to_f32((rng() << 16) | (v >> 16), dt);  // junk above a 16-bit element is ignored
    }
  INFO(bench.report());
  CHECK(bench.failures() == 0);
}

TEST_CASE("all bf16 and fp16 patterns to fp32 and back", "[fp]") {
  Bench bench;
  for (Dtype dt : {Dtype::bf16, Dtype::fp16})
    for (uint32_t raw = 0; raw < 0x10000; ++raw) bench.check_round_trip(static_cast<uint16_t>(raw), dt);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.conversions() == 2 * 2 * 0x10000);
}

TEST_CASE("all fp8 patterns to fp32 and back, fp32 to fp8 over every rounding point and tie", "[fp]") {
  Bench bench;
  for (Dtype dt : kFp8Dtypes)
    for (uint32_t raw = 0; raw < 0x100; ++raw) bench.check_round_trip(static_cast<uint16_t>(raw), dt);
  // fp8_e4m3 rounds at mantissa bit 20 (normal results), fp8_e5m2 at bit 21, subnormal results
  // higher: the 6 leading mantissa bits are all enumerated, with the low patterns around bit 17.
  std::mt19937 rng(13);
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t hi = 0; hi < 64; ++hi)
      for (uint32_t lo : {0x0u, 0x1u, 0xFFFFu, 0x10000u, 0x10001u, 0x1FFFFu, uint32_t(rng() & 0x1FFFF)})
        for (Dtype dt : kFp8Dtypes) {
          const uint32_t f = e << 23 | hi << 17 | lo;
          bench.check_from_f32(f, dt);
          bench.check_from_f32(f | 0x80000000u, dt);
        }
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.conversions() == 2 * 2 * 0x100 + 256 * 64 * 7 * 2 * 2);
}

TEST_CASE("tf32: every rounding point and tie, low bits ignored on the way in", "[fp]") {
  Bench bench;
  std::mt19937 rng(17);
  // tf32 rounds at mantissa bit 13: the 10 kept bits all enumerated, the low patterns around it
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t hi = 0; hi < 1024; ++hi)
      for (uint32_t lo : {0x0u, 0x1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu, uint32_t(rng() & 0x1FFF)}) {
        const uint32_t f = e << 23 | hi << 13 | lo;
        bench.check_from_f32(f, Dtype::tf32);
        bench.check_from_f32(f | 0x80000000u, Dtype::tf32);
        bench.check_to_f32(f, Dtype::tf32);
      }
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.conversions() == 256 * 1024 * 7 * 3);
}

TEST_CASE("integer dtypes: every 8- and 16-bit pattern to fp32 and back, 32-bit walks", "[fp]") {
  Bench bench;
  uint64_t not_exact = 0;
  for (Dtype dt : kIntDtypes) {
    const uint32_t n = num::dtype_bytes(dt) == 4 ? 0 : 1u << (8 * num::dtype_bytes(dt));
    for (uint32_t raw = 0; raw < n; ++raw) {
      bench.check_to_f32(raw, dt);
      bench.check_from_f32(bench.last_to_f32(), dt);
      not_exact += bench.last_from_f32() != raw;  // exact both ways
    }
  }
  CHECK(not_exact == 0);
  // 32-bit: a strided walk (values beyond 2^24 round on the way to fp32) and the extremes.
  for (uint64_t raw = 0; raw < (1ull << 32); raw += 65521)
    for (Dtype dt : {Dtype::int32, Dtype::uint32}) bench.check_to_f32(static_cast<uint32_t>(raw), dt);
  for (uint32_t raw : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFFu, 0x00FFFFFFu, 0x01000001u,
                       0x01000003u, 0xFEFFFFFFu})
    for (Dtype dt : {Dtype::int32, Dtype::uint32}) bench.check_to_f32(raw, dt);
  // fp32 to every integer dtype: each k + {0, 0.25, 0.5, 0.75} for k across and beyond every
  // range (ties to even, saturation), and every fp32 exponent with random mantissas.
  std::mt19937 rng(5);
  for (int64_t k = -70000; k <= 70000; ++k)
    for (float frac : {0.0f, 0.25f, 0.5f, 0.75f})
      for (Dtype dt : kIntDtypes) bench.check_from_f32(num::float_to_bits(static_cast<float>(k) + frac), dt);
  for (uint32_t e = 0; e < 256; ++e)
    for (int i = 0; i < 64; ++i) {
      const uint32_t f = (rng() & 0x80000000u) | e << 23 | (rng() & 0x7FFFFFu);
      for (Dtype dt : kIntDtypes) bench.check_from_f32(f, dt);
    }
  INFO(bench.report());
  CHECK(bench.failures() == 0);
}

TEST_CASE("fp32 to bf16/fp16: dense sweep over every rounding point and tie", "[fp]") {
  Bench bench;
  std::mt19937 rng(11);
  // fp16 rounds at mantissa bit 13 (normal) or higher (subnormal: the 10 leading bits are all
  // enumerated, so each tie, tie-1 and tie+1 pattern is here); bf16 rounds at bit 16.
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t hi = 0; hi < 1024; ++hi) {
      for (uint32_t lo : {0x0u, 0x1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu, uint32_t(rng() & 0x1FFF)}) {
        const uint32_t f = e << 23 | hi << 13 | lo;
        bench.check_from_f32(f, Dtype::fp16);
        bench.check_from_f32(f | 0x80000000u, Dtype::fp16);
      }
      if (hi < 128)
        for (uint32_t lo : {0x0u, 0x1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, uint32_t(rng() & 0xFFFF)}) {
          const uint32_t f = e << 23 | hi << 16 | lo;
          bench.check_from_f32(f, Dtype::bf16);
          bench.check_from_f32(f | 0x80000000u, Dtype::bf16);
        }
    }
  // A strided walk over all 2^32 patterns, every dtype.
  for (uint64_t f = 0; f < (1ull << 32); f += 4099)
    for (Dtype dt : kDtypes) bench.check_from_f32(static_cast<uint32_t>(f), dt);
  std::printf("fp unit: %llu conversions in the dense sweep\n", static_cast<unsigned long long>(bench.conversions()));
  INFO(bench.report());
  CHECK(bench.failures() == 0);
}

TEST_CASE("fp_alu: random operand pairs (NCORE_FP_PAIRS, default 200000)", "[fp]") {
  random_pairs(env_count("NCORE_FP_PAIRS", 200000), 1);
}

TEST_CASE("fp_alu: long random run (NCORE_FP_LONG_PAIRS, default 10 million)", "[fp][.long]") {
  random_pairs(env_count("NCORE_FP_LONG_PAIRS", 10000000), 2);
}

TEST_CASE("fp_act: every special value through every activation function", "[fp]") {
  Bench bench;
  const auto vals = special_values();
  for (uint32_t x : vals)
    for (ActFunc fn : kFuncs) bench.check_act(x, fn);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.acts() == vals.size() * kFuncs.size());
}

TEST_CASE("fp_act: random inputs, every function (NCORE_FP_ACT_VALUES per function, default 20000)", "[fp]") {
  Bench bench;
  PairGen gen(5);
  const uint64_t n = env_count("NCORE_FP_ACT_VALUES", 20000);
  for (uint64_t k = 0; k < n && bench.failures() <= 1000; ++k)
    for (ActFunc fn : kFuncs) bench.check_act(gen.act_input(), fn);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
  CHECK(bench.acts() == n * kFuncs.size());
}

TEST_CASE("fp_alu power, mod, fmod: operands in their working range", "[fp]") {
  // The random pairs above mostly overflow or underflow power; here bases over the positive and
  // negative floats and near 1, exponents small, integral and large, dividends and divisors of
  // every exponent distance.
  Bench bench;
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<float> small(-12.0f, 12.0f);
  for (int i = 0; i < 100000 && bench.failures() <= 1000; ++i) {
    const uint32_t r = static_cast<uint32_t>(rng());
    uint32_t a = num::float_to_bits(std::ldexp(small(rng), static_cast<int>(rng() % 40) - 20));
    if (i % 3 == 1) a = 0x3F800000u + (r % 0x20000u) - 0x10000u;  // near 1
    if (i % 3 == 2) a = r;                                          // any pattern
    uint32_t b = num::float_to_bits(small(rng));
    if (i % 4 == 1) b = num::float_to_bits(float(static_cast<int>(rng() % 41) - 20));  // integers
    if (i % 4 == 2) b = num::float_to_bits(std::ldexp(small(rng), static_cast<int>(rng() % 30)));
    if (i % 4 == 3) b = static_cast<uint32_t>(rng() >> 32);
    bench.check_pair(a, b, AluOp::power);
    bench.check_pair(a, b, AluOp::mod);
    bench.check_pair(a, b, AluOp::fmod);
  }
  INFO(bench.report());
  CHECK(bench.failures() == 0);
}

TEST_CASE("f32_sqrt, f32_div and the trigonometric reduction: strided walk over all fp32 patterns", "[fp]") {
  Bench bench;
  std::mt19937 rng(13);
  for (uint64_t f = 0; f < (1ull << 32); f += 8191) {
    bench.check_act(static_cast<uint32_t>(f), ActFunc::reciprocal);  // also checks f32_sqrt
    bench.check_pair(static_cast<uint32_t>(f), rng(), AluOp::divide);
  }
  // The exact reduction of sin, cos and tan on every exponent.
  for (uint64_t f = 0; f < (1ull << 32); f += 65537)
    for (ActFunc fn : {ActFunc::sin, ActFunc::cos, ActFunc::tan}) bench.check_act(static_cast<uint32_t>(f), fn);
  INFO(bench.report());
  CHECK(bench.failures() == 0);
}
