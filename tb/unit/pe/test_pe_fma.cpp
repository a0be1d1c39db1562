// PE multiply-add (rtl/ncore_fp_pkg.sv pe_unpack + pe_fma after fp_to_f32, through the wrapper
// ncore_pe_fma_tb) against pe_fma of firmware/include/ncore/numerics.hpp (std::fma on the host),
// bit for bit:
//
//   - every special-value class of w, x and acc: zero, subnormal, normal, infinity, NaN (quiet,
//     signalling, with payload), both signs, several values per class, all combinations, for
//     each input dtype (w and x in the dtype, acc fp32);
//   - random triples per input dtype from generators that favour the hard cases: uniform bits,
//     special patterns, near-cancellation (acc within a few ulps of -w*x), products near the
//     subnormal range and near overflow: NCORE_PE_FMA_TRIPLES per dtype (default 100000) in the
//     default run, NCORE_PE_FMA_LONG_TRIPLES (default 10 million) in the hidden "[.long]" test:
//     `test_pe_unit "[.long]"`.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vncore_pe_fma_tb.h"
#include "bench_bits.hpp"
#include "ncore/numerics.hpp"
#include "verilated.h"

using ncore::isa::Dtype;
namespace num = ncore::num;

namespace {

constexpr Dtype kDtypes[] = {Dtype::fp32, Dtype::bf16, Dtype::fp16};

uint64_t env_count(const char* name, uint64_t dflt) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : dflt;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

// One value of a class, as element bits of a dtype.
struct Special {
  const char* cls;
  uint32_t bits;
};

// Positive representatives of every class; the tests add the negative ones.
std::vector<Special> specials(Dtype dt) {
  switch (dt) {
    case Dtype::bf16:
      return {{"zero", 0x0000},      {"subnormal", 0x0001}, {"subnormal", 0x007F}, {"subnormal", 0x0041},
              {"normal", 0x0080},    {"normal", 0x3F80},    {"normal", 0x7F7F},    {"normal", 0x40C9},
              {"normal", 0x3F81},    {"inf", 0x7F80},       {"nan", 0x7FC0},       {"nan", 0x7F81},
              {"nan", 0x7FFF}};
    case Dtype::fp16:
      return {{"zero", 0x0000},      {"subnormal", 0x0001}, {"subnormal", 0x03FF}, {"subnormal", 0x0155},
              {"normal", 0x0400},    {"normal", 0x3C00},    {"normal", 0x7BFF},    {"normal", 0x4248},
              {"normal", 0x3C01},    {"inf", 0x7C00},       {"nan", 0x7E00},       {"nan", 0x7C01},
              {"nan", 0x7FFF}};
    default:
      return {{"zero", 0x00000000},   {"subnormal", 0x00000001}, {"subnormal", 0x007FFFFF},
              {"subnormal", 0x00012345}, {"normal", 0x00800000}, {"normal", 0x3F800000},
              {"normal", 0x7F7FFFFF}, {"normal", 0x40490FDB},    {"normal", 0x3F800001},
              {"inf", 0x7F800000},    {"nan", 0x7FC00000},       {"nan", 0x7F800001},
              {"nan", 0x7FFFFFFF}};
  }
}

uint32_t sign_bit(Dtype dt) { return ncore::isa::dtype_bytes(dt) == 2 ? 0x8000u : 0x80000000u; }

class FmaBench {
 public:
  FmaBench() : ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<Vncore_pe_fma_tb>(ctx_.get())) {}

  // Checks one triple; false (and a log line for the first few) on a mismatch.
  bool check(Dtype dt, uint32_t w, uint32_t x, uint32_t acc) {
    dut_->dt_i = static_cast<uint8_t>(dt);
    dut_->w_i = w;
    dut_->x_i = x;
    dut_->acc_i = acc;
    dut_->eval();
    const uint32_t want = num::pe_fma(num::to_f32_bits(w, dt), num::to_f32_bits(x, dt), acc);
    ++count_;
    if (dut_->r_o == want) return true;
    if (++mismatches_ <= 10) {
      std::ostringstream s;
      s << ncore::isa::to_string(dt) << " w=" << hex(w) << " x=" << hex(x) << " acc=" << hex(acc) << ": RTL "
        << hex(dut_->r_o) << ", fma " << hex(want);
      log_.push_back(s.str());
    }
    return false;
  }
  uint64_t count() const { return count_; }
  uint64_t mismatches() const { return mismatches_; }
  std::string log() const {
    std::string s;
    for (const auto& l : log_) s += "\n  " + l;
    return s;
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vncore_pe_fma_tb> dut_;
  uint64_t count_ = 0, mismatches_ = 0;
  std::vector<std::string> log_;
};

// Random element bits of a dtype and fp32 accumulators, favouring the hard cases.
class TripleGen {
 public:
  explicit TripleGen(uint64_t seed) : rng_(seed) {}

  void next(Dtype dt, uint32_t& w, uint32_t& x, uint32_t& acc) {
    w = elem(dt);
    x = elem(dt);
    switch (rng_() % 8) {
      case 0:
      case 1: {  // near-cancellation: acc within a few ulps of -(w * x)
        const double p = double(num::to_float(w, dt)) * double(num::to_float(x, dt));
        const uint32_t b = num::float_to_bits(static_cast<float>(-p));
        acc = std::isfinite(p) ? b + static_cast<uint32_t>(static_cast<int>(rng_() % 7) - 3) : ncore::tb::random_f32(rng_);
        break;
      }
      case 2: {  // accumulator near the product's magnitude (close exponents, either sign)
        const double p = double(num::to_float(w, dt)) * double(num::to_float(x, dt));
        const uint32_t b = num::float_to_bits(static_cast<float>(p));
        acc = (b ^ (rng_() % 2 ? 0x80000000u : 0u)) ^ static_cast<uint32_t>(rng_() & 0x00FFFFFFu);
        break;
      }
      default:
        acc = ncore::tb::random_f32(rng_);
        break;
    }
  }

 private:
  uint32_t elem(Dtype dt) {
    if (dt == Dtype::fp32) {
      const uint32_t r = static_cast<uint32_t>(rng_());
      switch (rng_() % 6) {
        case 0: return (r & 0x807FFFFFu) | uint32_t(rng_() % 30) << 23;         // products near underflow
        case 1: return (r & 0x807FFFFFu) | uint32_t(200 + rng_() % 55) << 23;   // products near overflow
        case 2: return (r & 0x807FFFFFu) | uint32_t(100 + rng_() % 56) << 23;   // moderate
        default: return ncore::tb::random_f32(rng_);
      }
    }
    const uint32_t h = ncore::tb::random_h16(rng_);
    if (rng_() % 4 == 0) {  // bf16 extremes: exponents near both ends
      const uint32_t r = static_cast<uint32_t>(rng_());
      return (r & 0x807Fu) | (rng_() % 2 ? uint32_t(rng_() % 20) : uint32_t(235 + rng_() % 20)) << 7;
    }
    return h;
  }

  std::mt19937_64 rng_;
};

void run_random(uint64_t per_dtype, uint64_t seed) {
  FmaBench bench;
  TripleGen gen(seed);
  const auto t0 = std::chrono::steady_clock::now();
  for (Dtype dt : kDtypes) {
    for (uint64_t n = 0; n < per_dtype; ++n) {
      uint32_t w, x, acc;
      gen.next(dt, w, x, acc);
      bench.check(dt, w, x, acc);
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("mismatches:" << bench.log());
  CHECK(bench.mismatches() == 0);
  WARN("PE multiply-add: " << bench.count() << " random triples (" << per_dtype << " per dtype fp32, bf16, fp16), "
                           << bench.mismatches() << " mismatches, " << s << " s");
}

}  // namespace

TEST_CASE("PE multiply-add: every special-value class of w and x and acc in every dtype", "[pe_fma]") {
  FmaBench bench;
  const std::vector<Special> accs = specials(Dtype::fp32);
  uint64_t combos = 0;
  for (Dtype dt : kDtypes) {
    const std::vector<Special> ops = specials(dt);
    for (const auto& w : ops)
      for (const auto& x : ops)
        for (const auto& a : accs)
          for (unsigned sg = 0; sg < 8; ++sg) {
            bench.check(dt, w.bits | ((sg & 1) ? sign_bit(dt) : 0u), x.bits | ((sg & 2) ? sign_bit(dt) : 0u),
                        a.bits | ((sg & 4) ? 0x80000000u : 0u));
            ++combos;
          }
  }
  INFO("mismatches:" << bench.log());
  CHECK(bench.mismatches() == 0);
  WARN("PE multiply-add: " << combos << " special-class triples (5 classes x 2 signs for w, x and acc, 13 values "
                                        "per sign and dtype), "
                           << bench.mismatches() << " mismatches");
}

TEST_CASE("PE multiply-add: random triples per dtype", "[pe_fma]") {
  run_random(env_count("NCORE_PE_FMA_TRIPLES", 100000), 0x5EED0001);
}

TEST_CASE("PE multiply-add: 10 million random triples per dtype", "[.long][pe_fma_long]") {
  run_random(env_count("NCORE_PE_FMA_LONG_TRIPLES", 10000000), 0x5EED0002);
}
