// Scalar-engine unit bench: rtl/ncore_act.sv with an SBUF and a PSUM (tiny preset: 16 lanes,
// 4 KiB of SBUF and 1 KiB of PSUM per partition) through the lane-engine wrapper
// (tb/unit/common/ncore_lane_tb.sv, built with the scalar engine) and its bench (lane_bench.hpp),
// against the golden model (tb/golden).
//
// Every random instruction (act_random.hpp) passes ncore::validate_insn; both models start from
// the same random bytes; after the engine's done pulse the whole SBUF and PSUM must equal the
// golden model's after GoldenModel::execute. The run also holds the engine to the protocol and
// the timing it documents (ncore_act.sv), counted in engine cycles (clock enable high):
//   - exactly one rd_start pulse, before done, and exactly one done; not ready until done, ready
//     after it;
//   - no request in the first Cfg.ActAccessStartCycles engine cycles (the access start);
//   - alone on the memories, Start + 2 per per-partition operand + N + 2 engine cycles for N
//     elements per partition, plus Cfg.ActReduceCycles with an add-reduce, and at least
//     Cfg.ActMinIi; the same whatever the clock-enable pattern;
//   - every access goes to the memory its operand names: N reads of src0's memory, N writes to
//     dst's, one write to dst2's, the per-partition operands from the SBUF.
// Special values and the rounding order are checked against hand-computed answers too, and a
// 128-lane model (trn2 preset) measures a 128 x 512 activation and the simulation speed.
//
// The default run is 10000 instructions (6000 alone, 4000 with other SBUF and PSUM traffic);
// `test_act_unit "[.long]"` runs NCORE_ACT_LONG_INSNS (default 50000).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <fmt/format.h>

#include "Vncore_act_tb.h"
#include "Vncore_act_tb___024root.h"
#include "Vncore_act_tb_trn2.h"
#include "Vncore_act_tb_trn2___024root.h"
#include "act_random.hpp"
#include "bench_dut.hpp"
#include "lane_bench.hpp"
#include "lane_checks.hpp"
#include "ncore/ap.hpp"
#include "ncore/validate.hpp"

using namespace act_tb;

namespace {

using TinyBench = LaneBench<Vncore_act_tb>;
using Trn2Bench = LaneBench<Vncore_act_tb_trn2>;

// An operand over partitions [0, np) of `n` contiguous elements at byte `off`.
Ap row(Buffer mem, Dtype dt, uint64_t off, uint32_t np, uint32_t n) { return rows_ap(mem, dt, off, np, n); }

// Engine cycles beyond the access start, the operand reads and N: the read-to-write cycle of the
// stream and the HOLD cycle that pulses done.
constexpr uint64_t kTail = 2;

// Engine cycles an instruction takes alone on the memories.
uint64_t expected_cycles(const Insn& i, const ncore::Preset& pr) {
  const uint64_t n = ncore::ap_free_elems(i.dst);
  const uint64_t scal = 2 * (uint64_t{i.s0_vec} + uint64_t{i.s1_vec});
  const uint64_t red = i.dst2.num_part ? std::max<uint64_t>(pr.act_reduce_cycles, 1) : 0;
  return std::max<uint64_t>(pr.act_min_ii, pr.act_access_start_cycles + scal + n + red + kTail);
}

void tally_insn(Tally& t, const Insn& i, Overlap kind, CeMode ce) {
  t.add(std::string("func ") + ncore::isa::to_string(i.func));
  t.add(kind == Overlap::in_place ? "in place" : "disjoint");
  t.add(std::string("src0 ") + ncore::isa::to_string(i.src0.mem) + " " + ncore::isa::to_string(i.src0.dtype));
  t.add(std::string("dst ") + ncore::isa::to_string(i.dst.mem) + " " + ncore::isa::to_string(i.dst.dtype));
  t.add(i.s0_vec ? "scale vec" : i.imm0 == 0x3F800000u ? "scale imm 1.0" : "scale imm");
  t.add(i.s1_vec ? "bias vec" : i.imm1 == 0x80000000u ? "bias none" : i.imm1 == 0 ? "bias +0" : "bias imm");
  if (i.dst2.num_part) t.add(std::string("reduce_res ") + ncore::isa::to_string(i.dst2.mem));
  t.add(to_string(ce));
}

// Runs `count` random instructions on the tiny model; returns the engine cycles they took.
uint64_t random_run(uint64_t count, uint64_t seed, Tally& tally, bool noise = false, uint64_t* refusals = nullptr,
                    uint64_t* psum_refusals = nullptr) {
  TinyBench b(tiny(), seed);
  b.set_noise(noise, noise);
  ActGen gen(tiny(), seed * 7919 + 1, b.sbuf_limit(), b.psum_limit());
  uint64_t cycles = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (k % 16 == 0) {
      const auto P = size_t(tiny().num_partitions);
      b.load(random_bytes(gen.rng(), P * tiny().sbuf_bytes), random_bytes(gen.rng(), P * tiny().psum_bytes));
    }
    Overlap kind;
    const Insn insn = gen.next(kind);
    const CeMode ce = static_cast<CeMode>(gen.rng()() % 3);
    INFO("instruction " << k << " (" << to_string(ce) << "): " << ncore::format_insn(insn));
    REQUIRE_NOTHROW(ncore::validate_insn(insn, tiny(), TinyBench::kHbmBytes));
    const RunStats st = run_and_check(b, insn, ce, tiny().act_access_start_cycles, tiny().act_min_ii);
    const uint64_t want = expected_cycles(insn, tiny());
    if (noise) REQUIRE(st.engine_cycles >= want);
    else REQUIRE(st.engine_cycles == want);
    // every access went to the memory its operand names
    const uint64_t n = ncore::ap_free_elems(insn.dst);
    const bool src_psum = insn.src0.mem == Buffer::psum, dst_psum = insn.dst.mem == Buffer::psum;
    const bool red = insn.dst2.num_part != 0, red_psum = red && insn.dst2.mem == Buffer::psum;
    REQUIRE(st.psum_reads == (src_psum ? n : 0));
    REQUIRE(st.sbuf_reads == (src_psum ? 0 : n) + insn.s0_vec + insn.s1_vec);
    REQUIRE(st.psum_writes == (dst_psum ? n : 0) + red_psum);
    REQUIRE(st.sbuf_writes == (dst_psum ? 0 : n) + (red && !red_psum));
    cycles += st.engine_cycles;
    tally_insn(tally, insn, kind, ce);
  }
  if (refusals) *refusals = b.engine_refusals();
  if (psum_refusals) *psum_refusals = b.psum_refusals();
  return cycles;
}

Insn activation(ActFunc f, const Ap& dst, const Ap& src, uint32_t scale = 0x3F800000u, uint32_t bias = 0x80000000u) {
  Insn i = lane_insn(Opcode::activation, ncore::isa::Engine::act, dst, src);
  i.func = f;
  i.imm0 = scale;
  i.imm1 = bias;
  return i;
}

}  // namespace

TEST_CASE("ACT random instructions match the golden model", "[act]") {
  Tally t;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t cycles = random_run(6000, 1, t);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("act: 6000 instructions, " << cycles << " engine cycles, " << s << " s" << t.str());
  for (const char* k : {"in place", "disjoint", "src0 sbuf fp32", "src0 psum bf16",
                        "dst psum fp16", "dst sbuf bf16", "scale vec", "scale imm 1.0", "scale imm", "bias vec",
                        "bias none", "bias +0", "bias imm", "reduce_res sbuf", "reduce_res psum"})
    CHECK(t.n[k] > 0);
  for (ActFunc f : ncore::isa::kActFuncValues) CHECK(t.n[std::string("func ") + ncore::isa::to_string(f)] > 0);
}

TEST_CASE("ACT random instructions with other SBUF and PSUM traffic", "[act]") {
  Tally t;
  uint64_t refusals = 0, psum_refusals = 0;
  const uint64_t cycles = random_run(4000, 7, t, true, &refusals, &psum_refusals);
  WARN("act with other traffic: 4000 instructions, " << cycles << " engine cycles, " << refusals
                                                     << " engine requests refused, " << psum_refusals << " of them PSUM");
  CHECK(refusals > 1000);
  CHECK(psum_refusals > 100);
}

TEST_CASE("ACT random instructions, long run", "[act][.long]") {
  Tally t;
  const uint64_t n = env_count("NCORE_ACT_LONG_INSNS", 50000);
  const uint64_t cycles = random_run(n / 2, 2, t) + random_run(n - n / 2, 8, t, true);
  WARN("act long: " << n << " instructions, " << cycles << " engine cycles" << t.str());
}

TEST_CASE("ACT streams one element per lane per cycle", "[act]") {
  TinyBench b(tiny(), 3);
  std::mt19937_64 rng(3);
  const auto P = size_t(tiny().num_partitions);
  b.load(random_bytes(rng, P * tiny().sbuf_bytes), random_bytes(rng, P * tiny().psum_bytes));
  std::map<std::string, std::map<uint32_t, uint64_t>> cyc;  // kind -> N -> engine cycles
  for (uint32_t n : {1u, 64u, 256u}) {
    for (int kind = 0; kind < 4; ++kind) {
      Insn i;
      std::string name;
      switch (kind) {
        case 0:  // the identity: immediate scale 1.0, no bias
          name = "copy";
          i = activation(ActFunc::copy, row(Buffer::sbuf, Dtype::fp32, 1024, 16, n), row(Buffer::sbuf, Dtype::bf16, 0, 16, n));
          break;
        case 1:  // per-partition scale and bias
          name = "relu vec";
          i = activation(ActFunc::relu, row(Buffer::sbuf, Dtype::fp16, 2048, 16, n), row(Buffer::sbuf, Dtype::fp32, 0, 16, n));
          i.s0_vec = i.s1_vec = true;
          i.s0 = {Buffer::sbuf, Dtype::fp32, 0, 3072};
          i.s1 = {Buffer::sbuf, Dtype::bf16, 0, 3080};
          break;
        case 2:  // immediates and an add-reduce
          name = "reduce";
          i = activation(ActFunc::copy, row(Buffer::sbuf, Dtype::bf16, 2048, 16, n), row(Buffer::sbuf, Dtype::fp32, 0, 16, n),
                         0x40000000u, 0x3F800000u);
          i.dst2 = row(Buffer::sbuf, Dtype::fp32, 3584, 16, 1);
          break;
        default:  // PSUM in and out, the add-reduce to the SBUF
          name = "psum";
          i = activation(ActFunc::relu, row(Buffer::psum, Dtype::bf16, 512, 16, n), row(Buffer::psum, Dtype::bf16, 0, 16, n),
                         0xBFC00000u, 0x3F000000u);
          i.dst2 = row(Buffer::sbuf, Dtype::fp16, 3590, 16, 1);
          break;
      }
      INFO(name << " N=" << n << ": " << ncore::format_insn(i));
      REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), TinyBench::kHbmBytes));
      const uint64_t c = cycles_in_every_ce_mode(b, i, tiny().act_ce_num, tiny().act_ce_den);
      CHECK(c == expected_cycles(i, tiny()));
      cyc[name][n] = c;
    }
  }
  std::string rep;
  for (const auto& [k, m] : cyc) {
    rep += "\n  " + k + ":";
    for (const auto& [n, c] : m) rep += " N=" + std::to_string(n) + " -> " + std::to_string(c);
  }
  WARN("act engine cycles (access start " << tiny().act_access_start_cycles << ", min II " << tiny().act_min_ii
                                          << ", reduce read-out " << tiny().act_reduce_cycles << "):" << rep);
  for (const char* k : {"copy", "relu vec", "reduce", "psum"}) CHECK(cyc[k][256] - cyc[k][64] == 192);
  CHECK(cyc["reduce"][256] - cyc["copy"][256] == tiny().act_reduce_cycles);
}

TEST_CASE("ACT special values and rounding order, by hand", "[act]") {
  // fp32 inputs in partitions 0..2, worked out by hand (and against the golden model):
  //   copy, scale 1.0, no bias: the identity, NaN made canonical, -0 and subnormals kept;
  //   relu: relu(NaN) = NaN, relu(-0) = relu(-inf) = relu(-tiny) = +0;
  //   copy, scale 2.0, bias +0.0: -0 * 2 + 0 = +0, subnormals doubled, the largest value
  //   overflows to infinity.
  const uint32_t x[10] = {0x7FA00000, 0x80000000, 0x00000000, 0xFF800000, 0x7F800000,
                          0xBFC00000, 0x00000001, 0x80000001, 0x40400000, 0x7F7FFFFF};
  struct Case {
    ActFunc f;
    uint32_t scale, bias;
    uint32_t want[10];
  };
  const Case cases[] = {
      {ActFunc::copy, 0x3F800000, 0x80000000,
       {0x7FC00000, 0x80000000, 0x00000000, 0xFF800000, 0x7F800000, 0xBFC00000, 0x00000001, 0x80000001, 0x40400000,
        0x7F7FFFFF}},
      {ActFunc::relu, 0x3F800000, 0x80000000,
       {0x7FC00000, 0x00000000, 0x00000000, 0x00000000, 0x7F800000, 0x00000000, 0x00000001, 0x00000000, 0x40400000,
        0x7F7FFFFF}},
      {ActFunc::copy, 0x40000000, 0x00000000,
       {0x7FC00000, 0x00000000, 0x00000000, 0xFF800000, 0x7F800000, 0xC0400000, 0x00000002, 0x80000002, 0x40C00000,
        0x7F800000}},
  };
  TinyBench b(tiny(), 5);
  std::vector<uint8_t> sb(size_t{tiny().num_partitions} * tiny().sbuf_bytes, 0);
  // partition p: x at 0; then the add-reduce inputs at 128: 1, 2^-8, 2^-8, 2^-8 and -0, -0
  const uint32_t r[6] = {0x3F800000, 0x3B800000, 0x3B800000, 0x3B800000, 0x80000000, 0x80000000};
  for (unsigned p = 0; p < 3; ++p) {
    std::memcpy(sb.data() + size_t{p} * tiny().sbuf_bytes, x, sizeof x);
    std::memcpy(sb.data() + size_t{p} * tiny().sbuf_bytes + 128, r, sizeof r);
  }
  b.load(sb, {});
  for (const Case& c : cases) {
    const Insn i = activation(c.f, row(Buffer::sbuf, Dtype::fp32, 256, 3, 10), row(Buffer::sbuf, Dtype::fp32, 0, 3, 10),
                              c.scale, c.bias);
    REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), TinyBench::kHbmBytes));
    check_by_hand(b, i, 3, 64, c.want, 10);
  }
  // The add-reduce: from +0, left to right in fp32, one rounding at the end. 1 + 3 * 2^-8 is
  // exact in fp32 (0x3F818000) and a tie in bf16 that goes to the even 0x3F82; rounding every
  // step to bf16 would give 0x3F80 (1 + 2^-8 is a tie back to 1, three times). A row of -0
  // sums to +0 (the accumulator starts at +0).
  Insn i = activation(ActFunc::copy, row(Buffer::sbuf, Dtype::fp32, 512, 3, 4), row(Buffer::sbuf, Dtype::fp32, 128, 3, 4));
  i.dst2 = row(Buffer::psum, Dtype::bf16, 2, 3, 1);
  RunStats st;
  REQUIRE(b.run(i, CeMode::high, st));
  for (unsigned p = 0; p < 3; ++p) CHECK((b.rtl_psum(p, 0) >> 16) == 0x3F82u);
  CHECK(b.check(i).empty());
  i.dst2.dtype = Dtype::fp32;
  i.dst2.offset = 8;
  REQUIRE(b.run(i, CeMode::high, st));
  for (unsigned p = 0; p < 3; ++p) CHECK(b.rtl_psum(p, 2) == 0x3F818000u);
  CHECK(b.check(i).empty());
  i.src0.offset = 144;  // -0, -0
  i.src0.size = {2, 1, 1, 1};
  i.dst.size = {2, 1, 1, 1};
  REQUIRE(b.run(i, CeMode::high, st));
  for (unsigned p = 0; p < 3; ++p) {
    CHECK(b.rtl_sbuf(p, 128) == 0x80000000u);  // the copies keep -0
    CHECK(b.rtl_psum(p, 2) == 0x00000000u);    // the sum is +0
  }
  CHECK(b.check(i).empty());
}

TEST_CASE("ACT instructions that break a rule are refused in NKI's words", "[act]") {
  Insn i = activation(ActFunc::relu, row(Buffer::sbuf, Dtype::fp32, 256, 4, 8), row(Buffer::sbuf, Dtype::fp32, 0, 4, 8));
  REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), TinyBench::kHbmBytes));
  auto refused = [&](const Insn& bad, const char* what) {
    REQUIRE_THROWS_WITH(ncore::validate_insn(bad, tiny(), TinyBench::kHbmBytes), Catch::Contains(what));
  };
  Insn b = i;
  b.dst.num_part = 3;
  refused(b, "number of partitions (dimension 0 size of a tile) mismatch in parameters (dst[3, 8], data[4, 8]) of "
             "'activation'");
  b = i;
  b.dst.size = {4, 1, 1, 1};
  refused(b, "dst[4, 4] of 'activation' has 4 elements per partition but data[4, 8] has 8");
  b = i;
  b.s0_vec = true;
  b.s0 = {Buffer::sbuf, Dtype::bf16, 0, 1024};
  refused(b, "scale of 'activation' must be an fp32 scalar or an fp32 (P, 1) vector; s0 is bf16");
  b = i;
  b.dst2 = row(Buffer::psum, Dtype::fp32, 0, 4, 2);
  refused(b, "reduce_res (dst2)[4, 2] of 'activation' must have shape (P, 1)");
  b.dst2.size = {1, 1, 1, 1};
  b.dst2.num_part = 2;
  refused(b, "mismatch in parameters (reduce_res[2, 1], data[4, 8]) of 'activation'");
  b.dst2.num_part = 4;
  b.dst2.offset = 1024;
  refused(b, "operand dst2: PSUM bytes [1024, 1028) are outside the 1024 bytes of a partition");
  b = i;
  b.func = static_cast<ActFunc>(31);
  refused(b, "unknown activation function 31 of 'activation'");
  b = i;
  b.dst.offset = 4;  // shifted onto the source
  refused(b, "the destination overlaps operand src0");
  b = i;
  b.engine = ncore::isa::Engine::dve;
  refused(b, "activation runs on engine act, not dve");
}

TEST_CASE("ACT at full width (trn2): a 128 x 512 activation, and simulation speed", "[act][trn2]") {
  // One Verilated model at a time (see the DVE bench): this test builds the 128-lane model alone.
  const ncore::Preset& pr = trn2();
  Trn2Bench b(pr, 9);
  std::mt19937_64 rng(9);
  const auto P = size_t(pr.num_partitions);
  b.load(random_bytes(rng, P * pr.sbuf_bytes), random_bytes(rng, P * pr.psum_bytes));
  // relu(x * scale + bias) over 128 x 512 fp32, per-partition scale and bias, bf16 out, add-reduce
  Insn i = activation(ActFunc::relu, row(Buffer::sbuf, Dtype::bf16, 8192, 128, 512), row(Buffer::sbuf, Dtype::fp32, 0, 128, 512));
  i.s0_vec = i.s1_vec = true;
  i.s0 = {Buffer::sbuf, Dtype::fp32, 0, 12288};
  i.s1 = {Buffer::sbuf, Dtype::fp32, 0, 12292};
  i.dst2 = row(Buffer::sbuf, Dtype::fp32, 12296, 128, 1);
  REQUIRE_NOTHROW(ncore::validate_insn(i, pr, Trn2Bench::kHbmBytes));
  RunStats st;
  REQUIRE(b.run(i, CeMode::divider, st));
  CHECK(b.check(i).empty());
  CHECK(st.engine_cycles == expected_cycles(i, pr));
  // and the plain copy (immediate scale 1.0, no bias, no reduce)
  const Insn c = activation(ActFunc::copy, row(Buffer::sbuf, Dtype::bf16, 8192, 128, 512), row(Buffer::sbuf, Dtype::fp32, 0, 128, 512));
  RunStats sc;
  REQUIRE(b.run(c, CeMode::divider, sc));
  CHECK(b.check(c).empty());
  CHECK(sc.engine_cycles == expected_cycles(c, pr));
  // one element: held to the minimum initiation interval (60 + 1 + 2 < 64)
  Insn one = c;
  one.src0.size[0] = one.dst.size[0] = 1;
  RunStats s1;
  REQUIRE(b.run(one, CeMode::divider, s1));
  CHECK(b.check(one).empty());
  CHECK(s1.engine_cycles == pr.act_min_ii);
  // speed: 128 x 8192 elements through the full datapath (scale, bias, relu, reduce), and
  // through the identity (no arithmetic: the conversions and the memories alone)
  std::string speed;
  for (int k = 0; k < 2; ++k) {
    Insn big = k == 0 ? i : c;
    big.src0 = row(Buffer::sbuf, Dtype::fp32, 65536, 128, 8192);
    big.dst = row(Buffer::sbuf, Dtype::bf16, 98304, 128, 8192);
    REQUIRE_NOTHROW(ncore::validate_insn(big, pr, Trn2Bench::kHbmBytes));
    RunStats sb;
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(b.run(big, CeMode::divider, sb));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(b.check(big).empty());
    CHECK(sb.engine_cycles == expected_cycles(big, pr));
    speed += fmt::format("\n  {}: 128 x 8192 in {:.3f} s: {:.0f} clocks/s, {:.3g} lane-elements/s",
                         k == 0 ? "relu, scale, bias, reduce" : "copy", s, double(sb.clocks) / s, 128.0 * 8192 / s);
  }
  WARN("act trn2: 128 x 512 relu(x * scale_vec + bias_vec) with add-reduce: "
       << st.engine_cycles << " ACT cycles = " << st.clocks << " clocks at " << pr.clock_mhz << " MHz ("
       << double(st.clocks) / pr.clock_mhz << " us); 128 x 512 copy: " << sc.engine_cycles << " ACT cycles = "
       << sc.clocks << " clocks; 1 element: " << s1.engine_cycles << " ACT cycles" << speed);
}
