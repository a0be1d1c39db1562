// The simulation-only PE array (rtl/sim/ncore_pe_array.sv + sim/core/fast_pe.cpp) against
// the RTL array (rtl/ncore_pe_array.sv), cycle by cycle, on the same random columns: every cycle
// busy_o, out_valid_o and out_tag_o of every column, and out_data_o of every valid column, must
// be equal. The RTL array's PEs are the reference (its pe_fma is tested against std::fma in
// tb/unit/pe); nothing here is computed by the fast array's own arithmetic.
//
// Stimulus: loads of M consecutive stationary columns (random M, set, the last column marked)
// and moving columns (random set, row mask, tag) presented in any interleaving, a load and a
// multiply in the same cycle included, and idle stretches long enough for busy_o to fall. The
// values come in kinds chosen per column: small integers and signed zeros (sums that cancel
// exactly, to +0 or -0), wide exponents (products in the subnormal range and beyond the largest
// float: subnormal sums, infinities, inf - inf), and special values sprinkled in (subnormal,
// +-0, +-inf, NaNs with payloads). The test asserts that the compared results cover each class.
// Both the vectorised and the scalar kernel of fast_pe.cpp are run (NCORE_FASTPE_SCALAR).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vpe_array_fast_p0.h"
#include "Vpe_array_fast_p2.h"
#include "Vpe_array_rtl_p0.h"
#include "Vpe_array_rtl_p2.h"
#include "core/fast_pe.hpp"
#include "met_cases.hpp"
#include "verilated.h"

namespace {

using Words = std::vector<uint32_t>;

template <std::size_t N>
void put(VlWide<N>& s, const Words& w) {
  for (std::size_t i = 0; i < N; ++i) s[i] = i < w.size() ? w[i] : 0;
}
template <class T>
void put(T& s, const Words& w) {
  uint64_t v = w.empty() ? 0 : w[0];
  if (w.size() > 1) v |= uint64_t(w[1]) << 32;
  s = static_cast<T>(v);
}
template <std::size_t N>
uint32_t word(const VlWide<N>& s, unsigned i) {
  return s[i];
}
template <class T>
uint32_t word(const T& s, unsigned i) {
  return static_cast<uint32_t>(uint64_t(s) >> (32 * i));
}
template <class T>
bool bit(const T& s, unsigned b) {
  return (word(s, b / 32) >> (b % 32)) & 1u;
}
template <class T>
uint32_t tag(const T& s, unsigned j) {  // 8-bit tags
  return (word(s, j / 4) >> (8 * (j % 4))) & 0xFFu;
}

struct Inputs {
  bool mv = false, mv_set = false;
  Words rows, data;
  uint32_t mv_tag = 0;
  bool ld = false, ld_set = false, ld_last = false;
  uint32_t ld_col = 0;
  Words ld_data;
};

template <class M>
void drive(M& m, const Inputs& in) {
  m.mv_valid_i = in.mv;
  m.mv_set_i = in.mv_set;
  put(m.mv_rows_i, in.rows);
  put(m.mv_data_i, in.data);
  m.mv_tag_i = in.mv_tag;
  m.ld_valid_i = in.ld;
  m.ld_set_i = in.ld_set;
  m.ld_col_i = in.ld_col;
  m.ld_last_i = in.ld_last;
  put(m.ld_data_i, in.ld_data);
}

template <class M>
void clock(M& m) {
  m.clk_i = 0;
  m.eval();
  m.clk_i = 1;
  m.eval();
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Values of one kind (see the file comment).
struct Values {
  std::mt19937_64& rng;
  int kind = 0;
  uint32_t special() {
    static const uint32_t s[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00400000,
                                 0x80012345, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
                                 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000};
    return s[rng() % (sizeof s / sizeof s[0])];
  }
  uint32_t next() {
    const unsigned r = rng() % 1000;
    switch (kind) {
      case 0:  // small integers, signed zeros: exact cancellations
        if (r < 5) return special();
        return bits(static_cast<float>(static_cast<int>(rng() % 5) - 2)) | (r < 100 ? 0x80000000u & (rng() << 31) : 0);
      case 1: {  // wide exponents: subnormal products and sums, overflow
        if (r < 3) return special();
        const int e = static_cast<int>(rng() % 254) + 1;               // biased 1..254
        uint32_t v = (uint32_t(e) << 23) | uint32_t(rng() & 0x7FFFFF);
        if (r < 80) v = uint32_t(rng() & 0x7FFFFF);                   // subnormal
        return v | (uint32_t(rng() & 1) << 31);
      }
      case 2: {  // products near the subnormal range: exponents around -63 each
        if (r < 3) return special();
        const int e = 127 - 50 - static_cast<int>(rng() % 30);
        return (uint32_t(e) << 23) | uint32_t(rng() & 0x7FFFFF) | (uint32_t(rng() & 1) << 31);
      }
      default:  // ordinary values, bf16-like (low mantissa bits clear) or full fp32
        if (r < 2) return special();
        {
          float f = std::ldexp(static_cast<float>(rng() % (1u << 24)) / float(1u << 24), static_cast<int>(rng() % 8) - 4);
          uint32_t v = bits(f) | (uint32_t(rng() & 1) << 31);
          if (rng() & 1) v &= 0xFFFF0000u;
          return v;
        }
    }
  }
};

struct Coverage {
  uint64_t compared = 0, nan = 0, inf = 0, subnormal = 0, pos_zero = 0, neg_zero = 0, normal = 0;
  void count(uint32_t v) {
    ++compared;
    const uint32_t e = (v >> 23) & 0xFF, m = v & 0x7FFFFF;
    if (e == 0xFF) (m ? nan : inf)++;
    else if (e == 0) (m ? subnormal : (v >> 31 ? neg_zero : pos_zero))++;
    else ++normal;
  }
};

template <class Rtl, class Fast>
Coverage run(unsigned p, uint64_t seed, unsigned cycles) {
  auto ctx_r = std::make_unique<VerilatedContext>();
  auto ctx_f = std::make_unique<VerilatedContext>();
  auto rtl = std::make_unique<Rtl>(ctx_r.get());
  auto fast = std::make_unique<Fast>(ctx_f.get());
  std::mt19937_64 rng(seed);
  Values val{rng};
  const unsigned nw = (p + 31) / 32;
  Coverage cov;

  Inputs in;
  in.rows.assign(nw, 0);
  in.data.assign(p, 0);
  in.ld_data.assign(p, 0);
  drive(*rtl, in);
  drive(*fast, in);
  rtl->rst_ni = 0;
  fast->rst_ni = 0;
  clock(*rtl);
  clock(*fast);
  rtl->rst_ni = 1;
  fast->rst_ni = 1;

  // The load in progress: set, next column, last column (-1: none).
  int ld_left = 0;
  unsigned ld_col = 0, ld_m = 0;
  bool ld_set = false;
  unsigned idle = 0;
  // Both sets fully loaded first (the RTL's weights are not reset), then anything.
  std::vector<std::pair<bool, unsigned>> preload = {{false, p}, {true, p}};
  for (unsigned c = 0; c < cycles; ++c) {
    in.mv = in.ld = false;
    if (idle > 0) {
      --idle;
    } else if (!preload.empty() || ld_left > 0 || c < 2 * p + 2) {
      if (ld_left == 0 && !preload.empty()) {
        ld_set = preload.front().first;
        ld_m = preload.front().second;
        preload.erase(preload.begin());
        ld_left = static_cast<int>(ld_m);
        ld_col = 0;
        val.kind = static_cast<int>(rng() % 4);
      }
    }
    if (idle == 0 && preload.empty() && c >= 2 * p + 2) {
      const unsigned r = rng() % 100;
      if (r < 2) idle = 2 * p + 2 + static_cast<unsigned>(rng() % 8);  // let busy_o fall
      if (ld_left == 0 && r >= 2 && r < 7) {
        ld_set = rng() & 1;
        ld_m = 1 + static_cast<unsigned>(rng() % p);
        ld_left = static_cast<int>(ld_m);
        ld_col = 0;
        val.kind = static_cast<int>(rng() % 4);
      }
      if (idle == 0 && rng() % 100 < 70) {
        in.mv = true;
        in.mv_set = rng() & 1;
        in.mv_tag = static_cast<uint32_t>(rng() & 0xFF);
        // all rows, a prefix, a random subset, or one or two rows (short chains: subnormal and -0 sums)
        const unsigned rm = rng() % 5;
        const unsigned r1 = static_cast<unsigned>(rng() % p), r2 = static_cast<unsigned>(rng() % p);
        const unsigned prefix = 1 + static_cast<unsigned>(rng() % p);
        for (unsigned k = 0; k < p; ++k) {
          const bool on = rm == 0 ? true : rm == 1 ? k < prefix : rm == 2 ? (rng() % 4 != 0) : (k == r1 || k == r2);
          if (k % 32 == 0) in.rows[k / 32] = 0;
          if (on) in.rows[k / 32] |= 1u << (k % 32);
        }
        const int saved = val.kind;
        val.kind = static_cast<int>(rng() % 4);
        for (unsigned k = 0; k < p; ++k) in.data[k] = val.next();
        val.kind = saved;
      }
    }
    if (idle == 0 && ld_left > 0 && (preload.size() < 2 || rng() % 100 < 80)) {
      in.ld = true;
      in.ld_set = ld_set;
      in.ld_col = ld_col;
      in.ld_last = ld_left == 1;
      for (unsigned k = 0; k < p; ++k) in.ld_data[k] = val.next();
      ++ld_col;
      --ld_left;
    }
    drive(*rtl, in);
    drive(*fast, in);
    clock(*rtl);
    clock(*fast);
    // The outputs of the cycle after the edge.
    INFO("seed " << seed << " cycle " << c);
    REQUIRE(rtl->busy_o == fast->busy_o);
    for (unsigned j = 0; j < p; ++j) {
      const bool v = bit(rtl->out_valid_o, j);
      INFO("column " << j);
      REQUIRE(v == bit(fast->out_valid_o, j));
      REQUIRE(tag(rtl->out_tag_o, j) == tag(fast->out_tag_o, j));
      if (v) {
        const uint32_t want = word(rtl->out_data_o, j), got = word(fast->out_data_o, j);
        if (want != got) {
          std::ostringstream s;
          s << std::hex << "RTL 0x" << want << " fast 0x" << got;
          FAIL(s.str());
        }
        cov.count(want);
      }
    }
  }
  rtl->final();
  fast->final();
  return cov;
}

void require_coverage(const Coverage& c) {
  INFO("compared " << c.compared << " nan " << c.nan << " inf " << c.inf << " subnormal " << c.subnormal << " +0 "
                   << c.pos_zero << " -0 " << c.neg_zero << " normal " << c.normal);
  ncore::tb::check_met({{"NaN", c.nan}, {"inf", c.inf}, {"a subnormal", c.subnormal}, {"+0", c.pos_zero},
                        {"-0", c.neg_zero}, {"a normal number", c.normal}});
}

}  // namespace

void tiny(bool scalar) {
  ncore::sim::fastpe::force_scalar(scalar);
  Coverage all;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const Coverage c = run<Vpe_array_rtl_p2, Vpe_array_fast_p2>(16, seed + (scalar ? 100 : 0), 20000);
    all.compared += c.compared, all.nan += c.nan, all.inf += c.inf, all.subnormal += c.subnormal;
    all.pos_zero += c.pos_zero, all.neg_zero += c.neg_zero, all.normal += c.normal;
  }
  ncore::sim::fastpe::force_scalar(false);
  require_coverage(all);
}

TEST_CASE("fast PE array equals the RTL array on tiny (16 x 16), vectorised kernel", "[pe_fast]") { tiny(false); }

TEST_CASE("fast PE array equals the RTL array on tiny (16 x 16), scalar kernel", "[pe_fast]") { tiny(true); }

TEST_CASE("fast PE array equals the RTL array on trn2 (128 x 128)", "[pe_fast]") {
  const Coverage c = run<Vpe_array_rtl_p0, Vpe_array_fast_p0>(128, 11, 8000);
  require_coverage(c);
  INFO("kernel " << ncore::sim::fastpe::kernel_name());
  CHECK(c.compared > 50000);
}
