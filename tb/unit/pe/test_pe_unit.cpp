// Tensor-engine unit bench: rtl/ncore_pe.sv and rtl/ncore_pe_array.sv with an SBUF and a PSUM
// (tiny preset: a 16 x 16 array, PSUM banks of 64 fp32) through the wrapper ncore_pe_tb, against
// the golden model (tb/golden), driven by a model of the sequencer (pe_bench.hpp).
//
// Random programs (pe_random.hpp): load_stationary / multiply_moving sequences in every dtype,
// random K, M, N within the limits, random 1-4 dim access patterns and start partitions, acc on
// and off, accumulation groups, several multiplies per stationary and loads that run while
// multiplies stream; alone on the memories, with other traffic on the SBUF and PSUM ports, and
// with random gaps in the sequencer. PSUM is compared with the golden model after every
// multiply (pe_bench.hpp says how), done pulses must come in order and busy must cover all
// work. Default: NCORE_TE_INSNS instructions (10000); `test_pe_unit "[.long]"`:
// NCORE_TE_LONG_INSNS (200000).
//
// Timing (alone on the memories, the sequencer presenting at once):
//   - one stationary column per cycle while a load reads;
//   - multiplies on one stationary start every max(Cfg.PeMmMinCycles, N) cycles (fp32:
//     max(Cfg.PeMmMinCycles, 4N));
//   - with a new stationary before every multiply, the load runs while the previous multiply
//     streams and the multiplies still start every N cycles (N >= M): the array takes a new
//     moving column every cycle;
//   - a multiply whose result starts s partitions higher than the one before starts s cycles
//     later (so no PSUM lane gets two writes in a cycle), and right away otherwise.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>

#include "ncore/ap.hpp"
#include "pe_bench.hpp"
#include "pe_random.hpp"

using namespace pe_tb;
using namespace ncore::tb;
using ncore::isa::Dtype;
using ncore::isa::Insn;
using ncore::isa::Opcode;

namespace {

const uint32_t kP = static_cast<uint32_t>(tiny().num_partitions);
const uint64_t kMin = tiny().pe_mm_min_cycles;
const uint64_t kPasses = tiny().pe_fp32_passes;

void tally_program(const std::vector<Insn>& prog, Tally& t) {
  for (const auto& i : prog) {
    if (i.opcode == Opcode::load_stationary) {
      t.add(std::string("load_stationary ") + ncore::isa::to_string(i.src0.dtype));
      t.add("stationary columns", ncore::ap_free_elems(i.src0));
    } else {
      t.add(std::string("multiply_moving ") + ncore::isa::to_string(i.src0.dtype) + (i.acc ? " acc" : " overwrite"));
      t.add("moving columns", ncore::ap_free_elems(i.src0));
    }
  }
}

// Plays random programs of about `per_prog` instructions until `total` have run.
void random_programs(uint64_t total, uint64_t seed, bool noise, bool gaps, Tally& t) {
  Bench b(seed);
  b.set_noise(noise);
  b.set_gaps(gaps);
  ProgramGen gen(tiny(), seed * 7 + 1, b.sbuf_limit(), Bench::kPsumNoiseWords);
  uint64_t done = 0, cycles = 0, compares = 0, refusals = 0, stalls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (done < total) {
    b.randomize_memories();
    ProgramShape sh;
    sh.count = 20 + static_cast<unsigned>(gen.rng()() % 40);
    sh.mm_per_ls_max = 1 + static_cast<unsigned>(gen.rng()() % 4);
    const std::vector<Insn> prog = gen.program(sh);
    RunLog log;
    const std::string err = b.run(prog, log);
    if (!err.empty()) {
      std::string listing;
      for (size_t k = 0; k < prog.size(); ++k)
        listing += "\n  " + std::to_string(k) + ": " + ncore::format_insn(prog[k]) + " (presented in cycle " +
                   std::to_string(log.present[k]) + ")";
      INFO("program of " << prog.size() << " instructions, seed " << seed << ":" << listing);
      REQUIRE(err == std::string());
    }
    // pulses in order: each done after its start
    REQUIRE(log.mm_done.size() == log.mm_start.size());
    for (size_t k = 0; k < log.mm_done.size(); ++k) CHECK(log.mm_done[k] > log.mm_start[k]);
    for (size_t k = 0; k < log.ls_done.size(); ++k) CHECK(log.ls_done[k] > log.ls_start[k]);
    tally_program(prog, t);
    done += prog.size();
    cycles += log.cycles;
    compares += log.psum_compares;
    refusals += log.noise_refusals;
    stalls += log.pe_stalls;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.add("instructions", done);
  t.add("cycles", cycles);
  t.add("PSUM words compared with the golden model", compares);
  if (noise) {
    t.add("other engines' PSUM accesses refused", refusals);
    t.add("engine SBUF reads refused", stalls);
    CHECK(refusals > 0);
    CHECK(stalls > 0);
  }
  WARN("tensor engine, " << (noise ? "with other traffic" : "alone") << (gaps ? ", sequencer gaps" : "") << ": "
                         << s << " s" << t.str());
}

// ---- directed programs -----------------------------------------------------------------------
Insn ls_insn(Dtype dt, uint32_t k, uint32_t m, uint64_t offset, uint32_t start = 0) {
  Insn i{};
  i.opcode = Opcode::load_stationary;
  i.engine = ncore::isa::Engine::pe;
  i.src0.mem = ncore::isa::Buffer::sbuf;
  i.src0.dtype = dt;
  i.src0.start_part = start;
  i.src0.num_part = k;
  i.src0.offset = offset;
  i.src0.size = {m, 1, 1, 1};
  i.src0.stride = {1, 1, 1, 1};
  return i;
}

Insn mm_insn(Dtype dt, uint32_t k, uint32_t m, uint32_t n, uint64_t offset, uint32_t dst_start, uint32_t dst_word,
             bool acc) {
  Insn i{};
  i.opcode = Opcode::multiply_moving;
  i.engine = ncore::isa::Engine::pe;
  i.acc = acc;
  i.src0.mem = ncore::isa::Buffer::sbuf;
  i.src0.dtype = dt;
  i.src0.num_part = k;
  i.src0.offset = offset;
  i.src0.size = {n, 1, 1, 1};
  i.src0.stride = {1, 1, 1, 1};
  i.dst.mem = ncore::isa::Buffer::psum;
  i.dst.dtype = Dtype::fp32;
  i.dst.start_part = dst_start;
  i.dst.num_part = m;
  i.dst.offset = 4ull * dst_word;
  i.dst.size = {n, 1, 1, 1};
  i.dst.stride = {1, 1, 1, 1};
  return i;
}

uint32_t bank_words() { return static_cast<uint32_t>(tiny().psum_bank_bytes / 4); }

// Runs a directed program on fresh random memories; returns its log (REQUIREs correctness).
RunLog play(const std::vector<Insn>& prog, uint64_t seed = 1) {
  Bench b(seed);
  b.randomize_memories();
  RunLog log;
  const std::string err = b.run(prog, log);
  REQUIRE(err == std::string());
  return log;
}

std::vector<uint64_t> gaps(const std::vector<uint64_t>& v) {
  std::vector<uint64_t> g;
  for (size_t k = 1; k < v.size(); ++k) g.push_back(v[k] - v[k - 1]);
  return g;
}

}  // namespace

TEST_CASE("PE: random load/multiply programs - alone on the memories", "[pe]") {
  Tally t;
  random_programs(env_count("NCORE_TE_INSNS", 10000) / 2, 11, false, false, t);
}

TEST_CASE("PE: random programs with other traffic and sequencer gaps", "[pe]") {
  Tally t;
  random_programs(env_count("NCORE_TE_INSNS", 10000) / 2, 23, true, true, t);
}

TEST_CASE("PE: long random run", "[.long][pe_long]") {
  const uint64_t n = env_count("NCORE_TE_LONG_INSNS", 200000);
  Tally a, b;
  random_programs(n / 2, 101, false, false, a);
  random_programs(n / 2, 202, true, true, b);
}

TEST_CASE("PE: a load reads one stationary column per cycle", "[pe][timing]") {
  for (uint32_t m : {1u, 5u, kP}) {
    const RunLog log = play({ls_insn(Dtype::bf16, kP, m, 0), ls_insn(Dtype::fp32, 3, m, 512)});
    REQUIRE(log.st_reads.size() == 2 * m);
    for (size_t k = 0; k + 1 < m; ++k) CHECK(log.st_reads[k + 1] == log.st_reads[k] + 1);
    REQUIRE(log.ls_done.size() == 2);
    // the load is done 2P cycles (+1) after its last column reached the array
    CHECK(log.ls_done[0] - log.st_reads[m - 1] == 2 * kP + 3);
  }
}

TEST_CASE("PE: multiplies on one stationary start every max of PeMmMinCycles and N cycles", "[pe][timing]") {
  struct Case {
    Dtype dt;
    uint32_t n;
  };
  for (const Case c : {Case{Dtype::bf16, bank_words()}, Case{Dtype::fp16, 20}, Case{Dtype::bf16, 3},
                       Case{Dtype::fp32, 9}, Case{Dtype::fp32, 1}}) {
    const Dtype sdt = c.dt == Dtype::fp32 ? Dtype::fp32 : Dtype::bf16;
    std::vector<Insn> prog{ls_insn(sdt, kP, kP, 0)};
    for (unsigned k = 0; k < 8; ++k) prog.push_back(mm_insn(c.dt, kP, kP, c.n, 1024, 0, (k % 4) * bank_words(), k >= 4));
    const RunLog log = play(prog);
    const uint64_t per = c.dt == Dtype::fp32 ? kPasses : 1;
    const uint64_t ii = std::max<uint64_t>(kMin, per * c.n);
    INFO(ncore::isa::to_string(c.dt) << " N=" << c.n);
    for (uint64_t g : gaps(log.mm_start)) CHECK(g == ii);
    // one multiply alone: fill, N columns, drain through P rows and M columns, PSUM write
    CHECK(log.mm_done[0] - log.mm_start[0] == per * (c.n - 1) + 2 * kP + 3);
  }
}

TEST_CASE("PE: loads overlap multiplies, and a new stationary every multiply keeps the array busy", "[pe][timing]") {
  // stationaries in SBUF banks 0-1, moving operands in banks 2-3 (bank conflicts between the
  // engine's two read ports are the next test's subject)
  for (uint32_t n : {bank_words(), kP, 24u}) {
    std::vector<Insn> prog;
    for (unsigned k = 0; k < 10; ++k) {
      prog.push_back(ls_insn(k % 2 ? Dtype::fp16 : Dtype::bf16, kP, kP, 64 * k));
      prog.push_back(mm_insn(k % 3 ? Dtype::bf16 : Dtype::fp16, kP, kP, n, 1024 + 128 * k + 32, 0,
                             (k % 4) * bank_words(), k % 2));
    }
    const RunLog log = play(prog);
    INFO("N=" << n);
    for (uint64_t g : gaps(log.mm_start)) CHECK(g == n);
    // every load after the first two reads while the multiply before it streams
    for (size_t k = 2; k < log.ls_start.size(); ++k) CHECK(log.ls_start[k] < log.mm_start[k - 1] + n);
    // a moving column reaches the array every cycle from the first to the last
    const double busy = double(log.mv_reads.size()) / double(log.mv_reads.back() - log.mv_reads.front() + 1);
    CHECK(busy == 1.0);
    WARN("N=" << n << ", M=K=" << kP << ", new stationary every multiply: moving columns in "
              << 100.0 * busy << "% of the streaming cycles; multiplies start every " << gaps(log.mm_start)[0]
              << " cycles");
  }
}

TEST_CASE("PE: bank conflicts between the two operands delay the load and not the stream", "[pe][timing]") {
  // both operands in the same SBUF banks: the moving port wins (wrapper: SBUF engine port 0)
  const uint32_t n = bank_words();
  std::vector<Insn> prog;
  for (unsigned k = 0; k < 8; ++k) {
    prog.push_back(ls_insn(Dtype::bf16, kP, kP, 64 * k));
    prog.push_back(mm_insn(Dtype::bf16, kP, kP, n, 1024 + 64 * k, 0, (k % 4) * bank_words(), false));
  }
  const RunLog log = play(prog);
  for (uint64_t g : gaps(log.mm_start)) CHECK(g == n);
  CHECK(log.pe_stalls > 0);
  WARN("stationary and moving operands in the same banks: " << log.pe_stalls
                                                            << " stationary reads refused, multiplies still every "
                                                            << gaps(log.mm_start)[0] << " cycles");
}

TEST_CASE("PE: a load longer than the multiplies bounds their rate", "[pe][timing]") {
  // N = 4 < M = P: each multiply waits for its stationary (P columns, one per cycle)
  std::vector<Insn> prog;
  for (unsigned k = 0; k < 8; ++k) {
    prog.push_back(ls_insn(Dtype::bf16, kP, kP, 64 * k));
    prog.push_back(mm_insn(Dtype::bf16, kP, kP, 4, 1024 + 64 * k, 0, 0, k > 0));
  }
  const RunLog log = play(prog);
  for (uint64_t g : gaps(log.mm_start)) {
    CHECK(g >= kP);
    CHECK(g <= kP + 4);
  }
  WARN("N=4, M=K=" << kP << ": multiplies start every " << gaps(log.mm_start)[0] << " cycles (loads of " << kP
                   << " columns bound them)");
}

TEST_CASE("PE: a result that starts s partitions higher starts s cycles later", "[pe][timing]") {
  const uint32_t n = 20, m = 8;
  for (uint32_t s : {0u, 1u, 5u, 8u}) {
    std::vector<Insn> prog{ls_insn(Dtype::bf16, kP, m, 0)};
    prog.push_back(mm_insn(Dtype::bf16, kP, m, n, 1024, 0, 0, false));
    prog.push_back(mm_insn(Dtype::bf16, kP, m, n, 1100, s, bank_words(), false));
    prog.push_back(mm_insn(Dtype::bf16, kP, m, n, 1200, 0, 2 * bank_words(), true));
    const RunLog log = play(prog);
    INFO("s=" << s);
    const auto g = gaps(log.mm_start);
    CHECK(g[0] == n + s);
    CHECK(g[1] == n);
  }
}

TEST_CASE("PE: accumulation group into one PSUM region", "[pe]") {
  // K-tiling: four multiplies accumulate into the same result, each with its own stationary
  std::vector<Insn> prog;
  for (unsigned k = 0; k < 4; ++k) {
    prog.push_back(ls_insn(Dtype::fp16, 7, 11, 128 * k, 9));
    prog.push_back(mm_insn(Dtype::bf16, 7, 11, 30, 1024 + 128 * k, 5, 70, k > 0));
    prog.back().src0.start_part = 2;
  }
  play(prog);
}
