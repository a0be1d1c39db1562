// Vector-engine unit bench: rtl/ncore_dve.sv with its SBUF (tiny preset: 16 lanes, 4 KiB per
// partition) through the lane-engine wrapper (tb/unit/common/ncore_lane_tb.sv, built with the
// vector engine) and its bench (lane_bench.hpp), against the golden model (tb/golden).
//
// Every instruction is random (dve_random.hpp) and passes ncore::validate_insn; both memories
// start from the same random bytes; after the engine's done pulse the whole SBUF must equal the
// golden model's after GoldenModel::execute. The run also holds the engine to the timing it
// documents (ncore_dve.sv, DESIGN.md section 3), counted in engine cycles (clock enable high):
//   - exactly one rd_start pulse, before done, and exactly one done; no new instruction is
//     taken (ready low) until done, and the engine is ready again after it;
//   - no SBUF request in the first Cfg.DveAccessStartCycles engine cycles (the access start);
//   - at least Cfg.DveMinIi engine cycles per instruction;
//   - streaming: alone on the SBUF, a single-input op takes N engine cycles for N elements per
//     partition (tensor_reduce: N input elements) and tensor_tensor 2N (two reads per element),
//     on top of the access start, the
//     per-partition operand reads (one cycle each) and a short pipeline tail (kTail);
//   - the engine's cycles do not depend on the clock-enable pattern (always high, the preset's
//     ncore_clk_en divider, random).
// The default run is 10000 instructions (6000 alone on the SBUF, 4000 with other traffic);
// `test_dve_unit "[.long]"` runs NCORE_DVE_LONG_INSNS (default 50000).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "Vncore_dve_tb.h"
#include "Vncore_dve_tb___024root.h"
#include "bench_dut.hpp"
#include "dve_random.hpp"
#include "lane_bench.hpp"
#include "lane_checks.hpp"
#include "ncore/ap.hpp"
#include "ncore/validate.hpp"

using namespace dve_tb;

namespace {

using Bench = LaneBench<Vncore_dve_tb>;

const uint64_t kStart = tiny().dve_access_start_cycles;
const uint64_t kMinIi = tiny().dve_min_ii;
// Engine cycles beyond the streaming ones and the access start: the last element's write, the
// HOLD state and the done pulse. The engine documents "about" N and 2N; this is the slack.
constexpr uint64_t kTail = 4;

const char* kind_name(Overlap k) {
  return k == Overlap::disjoint ? "disjoint" : k == Overlap::in_place ? "in place" : "partial overlap";
}

// Engine cycles an instruction should take when it is alone on the SBUF: [lo, hi].
std::pair<uint64_t, uint64_t> expected_cycles(const Insn& i) {
  const uint64_t n = ncore::ap_free_elems(i.opcode == Opcode::tensor_reduce ? i.src0 : i.dst);
  uint64_t stream = n, scal = 0;
  if (i.opcode == Opcode::tensor_tensor) stream = 2 * n;
  if (i.opcode == Opcode::tensor_scalar) {
    // one read and one capture cycle per per-partition operand that an op uses
    scal += 2 * (i.s0_vec && i.op0 != AluOp::bypass);
    scal += 2 * (i.s1_vec && i.op1 != AluOp::bypass);
  }
  const uint64_t lo = std::max(kMinIi, kStart + scal + stream);
  const uint64_t hi = std::max(kMinIi, kStart + scal + stream + kTail);
  return {lo, hi};
}

// Runs `count` random instructions; returns the engine cycles they took in all.
// With `noise`, other traffic on the SBUF's DMA ports makes the engine wait now and then: the
// results must not change, the timing only gets longer.
uint64_t random_run(uint64_t count, uint64_t seed, bool partial_only, Imm imm, Tally& tally,
                    uint64_t* clocks = nullptr, bool noise = false, uint64_t* refusals = nullptr) {
  Bench b(tiny(), seed);
  b.set_noise(noise, false);
  InsnGen gen(tiny(), seed * 7919 + 1, imm, noise ? tiny().sbuf_bytes - Bench::kSbufNoiseBytes : 0);
  uint64_t cycles = 0, clk = 0, run = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (k % 16 == 0) b.load(random_bytes(gen.rng(), size_t(tiny().num_partitions) * tiny().sbuf_bytes), {});
    Overlap kind;
    Insn insn = gen.next(partial_only, kind);
    if (partial_only && kind != Overlap::partial) {
      --k;
      continue;
    }
    const CeMode ce = static_cast<CeMode>(gen.rng()() % 3);
    INFO("instruction " << k << " (" << kind_name(kind) << ", " << to_string(ce) << "): " << ncore::format_insn(insn));
    REQUIRE_NOTHROW(ncore::validate_insn(insn, tiny(), Bench::kHbmBytes));
    const RunStats st = run_and_check(b, insn, ce, kStart, kMinIi);
    REQUIRE(st.psum_reads + st.psum_writes == 0);  // the operands are all in the SBUF
    const auto [lo, hi] = expected_cycles(insn);
    REQUIRE(st.engine_cycles >= lo);
    if (!noise) REQUIRE(st.engine_cycles <= hi);
    cycles += st.engine_cycles;
    clk += st.clocks;
    ++run;
    tally.add(std::string(ncore::isa::to_string(insn.opcode)) + " " + kind_name(kind));
    tally.add(std::string("dst ") + ncore::isa::to_string(insn.dst.dtype));
    if (insn.opcode == Opcode::tensor_tensor) tally.add(std::string("op ") + ncore::isa::to_string(insn.op0));
    if (insn.opcode == Opcode::tensor_reduce) {
      tally.add(std::string("reduce ") + ncore::isa::to_string(insn.op0));
      tally.add("reduce axes " + std::to_string(insn.red_axes));
    }
    if (insn.opcode == Opcode::tensor_scalar)
      tally.add(std::string("tensor_scalar ") + (insn.s0_vec ? "vec" : "imm") + "/" + (insn.s1_vec ? "vec" : "imm") +
                (insn.op1 == AluOp::bypass ? " op1 bypass" : ""));
    tally.add(std::string(to_string(ce)));
  }
  if (clocks) *clocks = clk;
  if (refusals) *refusals = b.engine_refusals();
  return cycles;
}

}  // namespace

TEST_CASE("DVE random instructions match the golden model", "[dve]") {
  Tally t;
  uint64_t clocks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t cycles = random_run(6000, 1, false, Imm::any, t, &clocks);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("dve: 6000 instructions, " << cycles << " engine cycles, " << clocks << " clocks, " << s << " s" << t.str());
  // coverage: every opcode, both overlap kinds the engine must honour, every destination dtype
  for (const char* k : {"tensor_tensor disjoint", "tensor_tensor in place", "tensor_scalar disjoint",
                        "tensor_scalar in place", "tensor_copy disjoint", "tensor_copy in place", "memset disjoint",
                        "dst fp32", "dst bf16", "dst fp16", "tensor_scalar vec/vec", "tensor_scalar vec/vec op1 bypass", "tensor_reduce disjoint",
                        "reduce add", "reduce multiply", "reduce max", "reduce min", "reduce axes 1", "reduce axes 2",
                        "reduce axes 3", "reduce axes 4"})
    CHECK(t.n[k] > 0);
  for (AluOp op : ncore::isa::kAluOpValues)  // tensor_tensor draws every arithmetic op (bitvec: tb/regress)
    if (op != AluOp::bypass && !ncore::isa::is_bitvec(op)) CHECK(t.n[std::string("op ") + ncore::isa::to_string(op)] > 0);
}

TEST_CASE("DVE random instructions with other SBUF traffic", "[dve]") {
  Tally t;
  uint64_t clocks = 0, refusals = 0;
  const uint64_t cycles = random_run(4000, 7, false, Imm::any, t, &clocks, true, &refusals);
  WARN("dve with other SBUF traffic: 4000 instructions, " << cycles << " engine cycles, " << clocks << " clocks, "
                                                         << refusals << " engine requests refused");
  CHECK(refusals > 1000);  // the engine did lose arbitration, on reads and writes
}

TEST_CASE("DVE random instructions, long run", "[dve][.long]") {
  Tally t;
  const uint64_t n = env_count("NCORE_DVE_LONG_INSNS", 50000);
  const uint64_t cycles = random_run(n / 2, 2, false, Imm::any, t);
  uint64_t refusals = 0;
  const uint64_t cycles2 = random_run(n - n / 2, 8, false, Imm::any, t, nullptr, true, &refusals);
  WARN("dve long: " << n << " instructions, " << cycles + cycles2 << " engine cycles, " << refusals
                    << " refused requests" << t.str());
}

TEST_CASE("DVE streaming rate: about N cycles for one input, 2N for tensor_tensor", "[dve]") {
  Bench b(tiny(), 3);
  std::mt19937_64 rng(3);
  b.load(random_bytes(rng, size_t(tiny().num_partitions) * tiny().sbuf_bytes), {});
  auto ap = [](Dtype dt, uint64_t off, uint32_t n) { return rows_ap(Buffer::sbuf, dt, off, 16, n); };
  std::map<std::string, std::map<uint32_t, uint64_t>> cyc;  // op -> N -> engine cycles
  for (uint32_t n : {1u, 64u, 256u}) {
    for (int kind = 0; kind < 4; ++kind) {
      Insn i;
      i.engine = ncore::isa::Engine::dve;
      std::string name;
      switch (kind) {
        case 0:
          i.opcode = Opcode::tensor_copy, name = "tensor_copy";
          i.src0 = ap(Dtype::bf16, 0, n), i.dst = ap(Dtype::fp32, 1024, n);
          break;
        case 1:
          i.opcode = Opcode::tensor_scalar, name = "tensor_scalar";
          i.op0 = AluOp::multiply, i.op1 = AluOp::add, i.s0_vec = true, i.s1_vec = true;
          i.s0 = {Buffer::sbuf, Dtype::bf16, 0, 4000}, i.s1 = {Buffer::sbuf, Dtype::fp32, 0, 4092};
          i.src0 = ap(Dtype::fp32, 0, n), i.dst = ap(Dtype::fp16, 2048, n);
          break;
        case 2:
          i.opcode = Opcode::memset, name = "memset";
          i.imm0 = 0x3F800000, i.dst = ap(Dtype::bf16, 2048, n);
          break;
        default:
          i.opcode = Opcode::tensor_tensor, name = "tensor_tensor";
          i.op0 = AluOp::add, i.src0 = ap(Dtype::fp32, 0, n), i.src1 = ap(Dtype::bf16, 1024, n);
          i.dst = ap(Dtype::fp32, 2048, n);
          break;
      }
      REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
      INFO(name << " N=" << n);
      const uint64_t c = cycles_in_every_ce_mode(b, i, tiny().dve_ce_num, tiny().dve_ce_den);
      cyc[name][n] = c;
      const auto [lo, hi] = expected_cycles(i);
      CHECK(c >= lo);
      CHECK(c <= hi);
    }
  }
  std::string rep;
  for (const auto& [op, m] : cyc) {
    rep += "\n  " + op + ":";
    for (const auto& [n, c] : m) rep += " N=" + std::to_string(n) + " -> " + std::to_string(c);
  }
  WARN("dve engine cycles (access start " << kStart << ", min II " << kMinIi << "):" << rep);
  // the marginal cost per element: 1 for one input, 2 for two
  CHECK(cyc["tensor_copy"][256] - cyc["tensor_copy"][64] == 192);
  CHECK(cyc["tensor_scalar"][256] - cyc["tensor_scalar"][64] == 192);
  CHECK(cyc["memset"][256] - cyc["memset"][64] == 192);
  CHECK(cyc["tensor_tensor"][256] - cyc["tensor_tensor"][64] == 384);
  // a one-element instruction is held to the minimum initiation interval
  CHECK(cyc["memset"][1] == kMinIi);
}

TEST_CASE("DVE destination partially overlapping a source is refused", "[dve]") {
  // The engine streams: a destination shifted onto a source would overwrite elements before
  // they are read (copying 1 2 3 4 two elements on gives 1 2 1 2 1 2, not the 1 2 1 2 3 4 of
  // reading everything first). The ISA allows only operands exactly in place or apart, and
  // validate_insn refuses the rest before any engine sees them.
  const Ap four = rows_ap(Buffer::sbuf, Dtype::fp32, 0, 1, 4);
  Insn i = lane_insn(Opcode::tensor_copy, ncore::isa::Engine::dve, four, four);
  i.dst.offset = 8;
  REQUIRE_THROWS_WITH(ncore::validate_insn(i, tiny(), Bench::kHbmBytes), Catch::Contains("overlaps operand src0"));
  i.dst.offset = 0;  // exactly in place
  REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
  i.dst.offset = 16;  // apart
  REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
}

TEST_CASE("DVE tensor_scalar with immediate operands", "[dve]") {
  // Immediate operands (s0_vec/s1_vec = 0) come from the instruction, not from the lane
  // registers the per-partition operands load. Minimal case: x * 2 + 1 on four fp32 elements.
  {
  Bench b(tiny(), 5);
  std::vector<uint8_t> img(size_t{tiny().num_partitions} * tiny().sbuf_bytes, 0);
  const uint32_t x[4] = {0x3F800000, 0x40400000, 0xBF000000, 0x00000000};  // 1, 3, -0.5, 0
  for (unsigned p = 0; p < 2; ++p) std::memcpy(img.data() + size_t{p} * tiny().sbuf_bytes, x, sizeof x);
  b.load(img, {});
  Insn i = lane_insn(Opcode::tensor_scalar, ncore::isa::Engine::dve, rows_ap(Buffer::sbuf, Dtype::fp32, 64, 2, 4),
                     rows_ap(Buffer::sbuf, Dtype::fp32, 0, 2, 4));
  i.op0 = AluOp::multiply;
  i.imm0 = 0x40000000;  // 2
  i.op1 = AluOp::add;
  i.imm1 = 0x3F800000;  // 1
  REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
  RunStats st;
  REQUIRE(b.run(i, CeMode::high, st));
  // 3, 7, 0, 1: worked out by hand, independent of the golden model too
  const uint32_t want[4] = {0x40400000, 0x40E00000, 0x00000000, 0x3F800000};
  for (unsigned p = 0; p < 2; ++p)
    for (unsigned k = 0; k < 4; ++k) {
      INFO("partition " << p << " element " << k);
      CHECK(b.rtl_sbuf(p, 16 + k) == want[k]);
    }
  const std::string diff = b.check(i);
  INFO(diff);
  CHECK(diff.empty());
  }
  // and random instructions where at least one op takes its immediate. (One Verilated model at a
  // time: Verilator 5.006 unregisters a model's scopes through the thread's current context,
  // the last one evaluated; a model that outlives a later model's context hangs when destroyed.)
  Tally t;
  random_run(300, 6, false, Imm::only, t);
}

namespace {

// An SBUF operand over partitions [0, np): `groups` x `r` elements, row-major, at `off`.
Ap reduce_ap(Dtype dt, uint64_t off, uint32_t np, uint32_t r, uint32_t groups) {
  return rows_ap(Buffer::sbuf, dt, off, np, r, groups);
}

Insn reduce_insn(AluOp op, const Ap& src, const Ap& dst, uint32_t axes) {
  Insn i = lane_insn(Opcode::tensor_reduce, ncore::isa::Engine::dve, dst, src);
  i.op0 = op;
  i.red_axes = axes;
  return i;
}

}  // namespace

TEST_CASE("DVE tensor_reduce: fold order and special values", "[dve][reduce]") {
  // Six groups of three fp32 elements, reduced along the innermost axis, worked out by hand:
  // the fold goes left to right from the group's first element, rounding every step (1 + 2^-24
  // is a tie that rounds back to 1, twice); NaN (also signalling) wins max and min and makes a
  // sum NaN, always the canonical 0x7FC00000; +inf + -inf is NaN; -0 + -0 stays -0 but one +0
  // makes the sum +0; max(-0, +0) = +0 and min(-0, +0) = -0.
  const uint32_t x[6][3] = {
      {0x3F800000, 0x33800000, 0x33800000},  // 1, 2^-24, 2^-24
      {0x7F800000, 0xFF800000, 0x3F800000},  // +inf, -inf, 1
      {0x80000000, 0x80000000, 0x80000000},  // -0, -0, -0
      {0x80000000, 0x00000000, 0x80000000},  // -0, +0, -0
      {0x3F800000, 0x7FA00000, 0x40000000},  // 1, signalling NaN, 2
      {0xC0000000, 0xBF800000, 0xC0400000},  // -2, -1, -3
  };
  struct Case {
    AluOp op;
    uint32_t want[6];
  };
  const Case cases[] = {
      {AluOp::add, {0x3F800000, 0x7FC00000, 0x80000000, 0x00000000, 0x7FC00000, 0xC0C00000}},
      {AluOp::max, {0x3F800000, 0x7F800000, 0x80000000, 0x00000000, 0x7FC00000, 0xBF800000}},
      {AluOp::min, {0x33800000, 0xFF800000, 0x80000000, 0x80000000, 0x7FC00000, 0xC0400000}},
      {AluOp::multiply, {0x27800000, 0xFF800000, 0x80000000, 0x00000000, 0x7FC00000, 0xC0C00000}},
  };
  Bench b(tiny(), 11);
  std::vector<uint8_t> img(size_t{tiny().num_partitions} * tiny().sbuf_bytes, 0);
  for (unsigned p = 0; p < 3; ++p) std::memcpy(img.data() + size_t{p} * tiny().sbuf_bytes, x, sizeof x);
  b.load(img, {});
  for (const Case& c : cases) {
    const Insn i = reduce_insn(c.op, reduce_ap(Dtype::fp32, 0, 3, 3, 6), reduce_ap(Dtype::fp32, 256, 3, 1, 6), 1);
    REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
    check_by_hand(b, i, 3, 64, c.want, 6);
  }
  // one rounding, at the end: the sum -6 written as bf16, and all 18 elements (two axes) at once
  Insn i = reduce_insn(AluOp::add, reduce_ap(Dtype::fp32, 0, 3, 3, 6), reduce_ap(Dtype::bf16, 512, 3, 1, 6), 1);
  RunStats st;
  REQUIRE(b.run(i, CeMode::high, st));
  CHECK((b.rtl_sbuf(0, 128 + 2) >> 16) == 0xC0C0u);  // group 5: bytes 522..523
  CHECK(b.check(i).empty());
  i = reduce_insn(AluOp::max, reduce_ap(Dtype::fp32, 0, 3, 3, 6), reduce_ap(Dtype::fp32, 768, 3, 1, 1), 2);
  REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
  REQUIRE(b.run(i, CeMode::high, st));
  CHECK(b.rtl_sbuf(1, 192) == 0x7FC00000u);
  CHECK(b.check(i).empty());
}

TEST_CASE("DVE tensor_reduce streams one input element per cycle", "[dve][reduce]") {
  // The cost is the input's N, whatever the grouping: one output of N elements or N outputs of
  // one element take the same cycles; the writes of a group's result overlap the next reads.
  Bench b(tiny(), 12);
  std::mt19937_64 rng(12);
  b.load(random_bytes(rng, size_t(tiny().num_partitions) * tiny().sbuf_bytes), {});
  std::map<std::string, uint64_t> cyc;
  for (uint32_t n : {64u, 256u}) {
    for (uint32_t r : {1u, 4u, n}) {
      const Insn i =
          reduce_insn(AluOp::add, reduce_ap(Dtype::fp32, 0, 16, r, n / r), reduce_ap(Dtype::bf16, 2048, 16, 1, n / r), 1);
      REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
      INFO("N=" << n << " R=" << r);
      const uint64_t c = cycles_in_every_ce_mode(b, i, tiny().dve_ce_num, tiny().dve_ce_den);
      const auto [lo, hi] = expected_cycles(i);
      CHECK(c >= lo);
      CHECK(c <= hi);
      cyc["N=" + std::to_string(n) + " R=" + std::to_string(r)] = c;
    }
  }
  std::string rep;
  for (const auto& [k, v] : cyc) rep += "\n  " + k + " -> " + std::to_string(v);
  WARN("dve tensor_reduce engine cycles:" << rep);
  CHECK(cyc["N=256 R=1"] - cyc["N=64 R=1"] == 192);
  CHECK(cyc["N=256 R=256"] == cyc["N=256 R=1"]);
  CHECK(cyc["N=256 R=4"] == cyc["N=256 R=1"]);
}

TEST_CASE("DVE tensor_reduce that breaks a rule is refused in NKI's words", "[dve][reduce]") {
  const Insn ok = reduce_insn(AluOp::add, reduce_ap(Dtype::fp32, 0, 4, 8, 2), reduce_ap(Dtype::fp32, 256, 4, 1, 2), 1);
  REQUIRE_NOTHROW(ncore::validate_insn(ok, tiny(), Bench::kHbmBytes));
  auto refused = [&](const Insn& bad, const char* what) {
    REQUIRE_THROWS_WITH(ncore::validate_insn(bad, tiny(), Bench::kHbmBytes), Catch::Contains(what));
  };
  Insn b = ok;
  b.op0 = AluOp::subtract;
  refused(b, "reduce op 'subtract' of 'tensor_reduce' is not supported by the vector engine; use add, multiply, max, "
             "min, bitwise_and, bitwise_or or bitwise_xor");
  b = ok;
  b.red_axes = 0;
  refused(b, "'tensor_reduce' reduces the last 1 to 4 free axes of src0[4, 2, 8]; 0 axes is outside 1..4");
  b.red_axes = 5;
  refused(b, "5 axes is outside 1..4");
  b = ok;
  b.dst.num_part = 2;
  refused(b, "number of partitions (dimension 0 size of a tile) mismatch in parameters (dst[2, 2, 1], data[4, 2, 8]) of "
             "'tensor_reduce'");
  b = ok;
  b.red_axes = 2;  // everything: one element per partition, not two
  refused(b, "dst[4, 2, 1] of 'tensor_reduce' has 2 elements per partition, but reducing the last 2 free axes of "
             "data[4, 2, 8] leaves 1");
  b = ok;
  b.dst.offset = 32;  // on the source's second half
  refused(b, "the destination overlaps operand src0");
  b = ok;
  b.src0.mem = Buffer::hbm;
  refused(b, "operand src0 of tensor_reduce may not be in hbm");
}
