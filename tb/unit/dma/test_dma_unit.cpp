// DMA unit bench: rtl/ncore_dma.sv (queue slots + engines) with its SBUF on the tiny preset (2
// engines owning 8 partitions each, 4 queues, 16 outstanding lines per engine) through the
// wrapper ncore_dma_tb, with a C++ sequencer and HBM responder (dma_bench.hpp) and the golden
// model beside it.
//
//   - random transfers (dma_random.hpp), several queues in flight at once, in phases with
//     different clock enables, HBM latencies, HBM bandwidth (credit rate) and other SBUF
//     traffic; when a transfer's last engine is done the golden model executes it and its
//     destination must match, and so must every other byte of SBUF and HBM except those that
//     transfers still in flight write; the whole SBUF and HBM after each phase;
//   - the queue protocol on every clock (dma_bench.hpp): rd_start once, done once per engine
//     per transfer (also for an engine with no rows), the slot freed only after every engine
//     and then at once, no HBM request without a credit;
//   - directed: engines with empty shares, a slot held while one engine still works, completion
//     out of order across queues;
//   - throughput of large contiguous transfers: close to one 16-byte line per DMA cycle per
//     engine when the HBM latency is covered by the outstanding lines.
// Default run: 1000 random transfers. `test_dma_unit "[.long]"` runs NCORE_DMA_LONG_XFERS
// (default 6000).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "dma_bench.hpp"
#include "dma_random.hpp"
#include "ncore/validate.hpp"

using namespace dma_tb;
using ncore::hbm_ap;
using ncore::sbuf_ap;

namespace {

// Partition rows of a transfer that fall on engine e (the SBUF side's partitions decide).
unsigned rows_of_engine(const Insn& i, unsigned e) {
  const unsigned ppe = kP / kE;
  const unsigned sp = i.dst.mem != Buffer::hbm ? i.dst.start_part : i.src0.mem != Buffer::hbm ? i.src0.start_part : 0;
  const unsigned lo = std::max(sp, e * ppe), hi = std::min(sp + i.dst.num_part, (e + 1) * ppe);
  return hi > lo ? hi - lo : 0;
}

struct Phase {
  const char* name;
  Config cfg;
  uint64_t transfers;
  uint32_t max_free;  // free elements per row at most
};

std::vector<Phase> phases(uint64_t scale) {
  return {
      {"ce=1, HBM latency 2-6, full bandwidth", {CeMode::high, 2, 6, 100, false}, 14 * scale, 512},
      {"ce from ncore_clk_en, latency 20-40, half bandwidth", {CeMode::divider, 20, 40, 50, false}, 10 * scale, 256},
      {"random ce, latency 1-60, other SBUF traffic", {CeMode::random, 1, 60, 80, true}, 10 * scale, 256},
      {"ce=1, latency 80-120 (not covered), 20% bandwidth", {CeMode::high, 80, 120, 20, false}, 6 * scale, 128},
      {"ce=1, latency 1, full bandwidth, other SBUF traffic", {CeMode::high, 1, 1, 100, true}, 10 * scale, 64},
  };
}

struct Totals {
  uint64_t transfers = 0, ooo = 0, empty_shares = 0, clocks = 0, elements = 0;
  std::map<std::string, uint64_t> tally;
};

void random_run(uint64_t scale, uint64_t seed, Totals& tot) {
  Bench b(seed);
  XferGen gen(Bench::kHbmBytes, seed * 31 + 7);
  b.load(random_bytes(gen.rng(), size_t{kP} * tiny().sbuf_bytes), random_bytes(gen.rng(), Bench::kHbmBytes));
  std::array<std::optional<Footprint>, kQ> inflight;
  uint64_t max_done_id = 0;
  bool any_done = false;
  std::vector<bool> skip_sbuf(size_t{kP} * tiny().sbuf_bytes), skip_hbm(Bench::kHbmBytes);
  b.on_complete = [&](const Xfer& x) {
    inflight[x.queue].reset();
    // everything but what the transfers still in flight write must equal the golden model now
    std::fill(skip_sbuf.begin(), skip_sbuf.end(), false);
    std::fill(skip_hbm.begin(), skip_hbm.end(), false);
    for (const auto& o : inflight) {
      if (!o) continue;
      for (size_t k = 0; k < skip_sbuf.size(); ++k) skip_sbuf[k] = skip_sbuf[k] || o->sbuf_wr[k];
      for (size_t k = 0; k < skip_hbm.size(); ++k) skip_hbm[k] = skip_hbm[k] || o->hbm_wr[k];
    }
    b.compare_all(&skip_sbuf, &skip_hbm, " (after transfer " + std::to_string(x.id) + " completed)");
    if (any_done && x.id < max_done_id) ++tot.ooo;
    max_done_id = std::max(max_done_id, x.id);
    any_done = true;
    for (unsigned e = 0; e < kE; ++e) tot.empty_shares += rows_of_engine(x.insn, e) == 0;
    ++tot.transfers;
    tot.elements += ncore::ap_elems(x.insn.dst);
    tot.tally[to_string(dir_of(x.insn))]++;
    tot.tally[std::string(x.insn.src0.dtype == x.insn.dst.dtype ? "same dtype" : "cast")]++;
  };
  for (const Phase& ph : phases(scale)) {
    INFO("phase: " << ph.name);
    b.configure(ph.cfg);
    uint64_t issued = 0;
    while (issued < ph.transfers) {
      // a new transfer on a free queue, independent of those in flight, now and then
      if (b.waiting() == 0 && gen.rng()() % 4 == 0) {
        const unsigned q = unsigned(gen.rng()() % kQ);
        if (!b.active(q) && !inflight[q]) {
          for (int tries = 0; tries < 20; ++tries) {
            Insn insn;
            if (!gen.make(insn, q, ph.max_free)) continue;
            Footprint f = footprint(insn, Bench::kHbmBytes);
            if (!self_consistent(f)) continue;
            bool ok = true;
            for (const auto& o : inflight)
              if (o && !independent(f, *o)) ok = false;
            if (!ok) continue;
            INFO(ncore::format_insn(insn));
            REQUIRE_NOTHROW(ncore::validate_insn(insn, tiny(), Bench::kHbmBytes));
            inflight[q] = std::move(f);
            b.submit(insn);
            ++issued;
            break;
          }
        }
      }
      const bool ok = b.cycle();
      INFO(b.error());
      REQUIRE(ok);
    }
    const bool ok = b.drain();
    INFO(b.error());
    REQUIRE(ok);
  }
  tot.clocks += b.clock();
  tot.tally["HBM lines read"] += b.hbm_read_lines();
  tot.tally["HBM lines written"] += b.hbm_write_lines();
  tot.tally["SBUF lines read"] += b.sbuf_read_lines();
  tot.tally["SBUF lines written"] += b.sbuf_write_lines();
  tot.tally["other SBUF accesses"] += b.noise_grants_total();
}

Insn copy(unsigned q, const Ap& dst, const Ap& src) {
  Insn i;
  i.opcode = Opcode::dma_copy;
  i.engine = ncore::isa::Engine::dma;
  i.dma_queue = q;
  i.dst = dst;
  i.src0 = src;
  return i;
}

// Runs the given transfers (each submitted when its queue is free) to completion.
std::vector<Xfer> run_all(Bench& b, const std::vector<Insn>& insns) {
  std::vector<Xfer> done;
  b.on_complete = [&](const Xfer& x) { done.push_back(x); };
  for (const Insn& i : insns) {
    REQUIRE_NOTHROW(ncore::validate_insn(i, tiny(), Bench::kHbmBytes));
    b.submit(i);
  }
  const bool ok = b.drain();
  INFO(b.error());
  REQUIRE(ok);
  REQUIRE(done.size() == insns.size());
  return done;
}

}  // namespace

TEST_CASE("DMA random transfers match the golden model", "[dma]") {
  Totals t;
  const auto t0 = std::chrono::steady_clock::now();
  random_run(20, 1, t);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string rep;
  for (const auto& [k, v] : t.tally) rep += "\n  " + k + ": " + std::to_string(v);
  WARN("dma: " << t.transfers << " transfers, " << t.elements << " elements, " << t.clocks << " clocks, " << s
               << " s; completed out of issue order: " << t.ooo << "; engine shares with no rows: " << t.empty_shares
               << rep);
  CHECK(t.ooo > 0);
  CHECK(t.empty_shares > 0);
  for (const char* k : {"HBM->SBUF", "SBUF->HBM", "SBUF->SBUF", "HBM->HBM", "cast", "same dtype"}) CHECK(t.tally[k] > 0);
}

TEST_CASE("DMA random transfers, long run", "[dma][.long]") {
  Totals t;
  const uint64_t n = env_count("NCORE_DMA_LONG_XFERS", 6000);
  random_run(n / 50, 2, t);
  WARN("dma long: " << t.transfers << " transfers, " << t.clocks << " clocks, out of order " << t.ooo);
}

TEST_CASE("DMA each engine pulses done once per transfer, also with no rows", "[dma]") {
  Bench b(3);
  std::mt19937_64 rng(3);
  b.load(random_bytes(rng, size_t{kP} * tiny().sbuf_bytes), random_bytes(rng, Bench::kHbmBytes));
  const std::vector<Insn> insns = {
      copy(0, sbuf_ap(Dtype::fp32, 0, 4, 0, 40), hbm_ap(Dtype::fp32, 4, 40, 0, 40)),        // engine 1: no rows
      copy(1, hbm_ap(Dtype::bf16, 3, -64, 4096, 50), sbuf_ap(Dtype::fp32, 12, 3, 512, 50)),  // engine 0: no rows
      copy(2, sbuf_ap(Dtype::fp16, 9, 1, 100, 7), sbuf_ap(Dtype::fp16, 2, 1, 200, 7)),       // dst side decides: engine 1
      copy(3, hbm_ap(Dtype::fp32, 5, 16, 8192, 16), hbm_ap(Dtype::fp16, 5, 16, 12288, 16)),  // HBM->HBM rows 0-4: engine 0
      copy(0, sbuf_ap(Dtype::fp32, 7, 2, 1024, 3), hbm_ap(Dtype::fp32, 2, 3, 16384, 3)),     // one row each
  };
  const std::vector<Xfer> done = run_all(b, insns);
  for (const Xfer& x : done) {
    INFO(ncore::format_insn(x.insn));
    for (unsigned e = 0; e < kE; ++e) CHECK(x.dones[e] == 1);
    CHECK(x.rd_starts == 1);
  }
}

TEST_CASE("DMA slot stays taken until the last engine is done", "[dma]") {
  Bench b(4);
  std::mt19937_64 rng(4);
  b.load(random_bytes(rng, size_t{kP} * tiny().sbuf_bytes), random_bytes(rng, Bench::kHbmBytes));
  b.configure({CeMode::high, 30, 30, 100, false});
  // engine 0 owns one row (partition 7), engine 1 seven (8-14): engine 0 is done long before
  const std::vector<Xfer> done =
      run_all(b, {copy(2, sbuf_ap(Dtype::fp32, 7, 8, 0, 256), hbm_ap(Dtype::fp32, 8, 256, 0, 256))});
  const Xfer& x = done[0];
  INFO("engine 0 done at clock " << x.done_at[0] << ", engine 1 at " << x.done_at[1]);
  CHECK(x.done_at[0] + 100 < x.done_at[1]);
  CHECK(x.done_clock == x.done_at[1]);  // the bench checked every clock in between that the slot was taken
}

TEST_CASE("DMA transfers complete out of order across queues", "[dma]") {
  Bench b(5);
  std::mt19937_64 rng(5);
  b.load(random_bytes(rng, size_t{kP} * tiny().sbuf_bytes), random_bytes(rng, Bench::kHbmBytes));
  b.configure({CeMode::divider, 10, 30, 100, false});
  // Engines serve the queues with work round-robin, a row at a time: the short transfers issued
  // after the long one wait for at most a row of it per row of theirs.
  const std::vector<Xfer> done = run_all(b, {
      copy(0, sbuf_ap(Dtype::bf16, 0, 16, 0, 1024), hbm_ap(Dtype::fp32, 16, 1024, 0, 1024)),  // long, first
      copy(1, hbm_ap(Dtype::fp32, 2, 8, 70000, 8), sbuf_ap(Dtype::fp16, 7, 2, 3000, 8)),     // one row per engine
      copy(3, sbuf_ap(Dtype::fp32, 10, 4, 3072, 4), sbuf_ap(Dtype::fp32, 4, 4, 3200, 4)),     // engine 1 only
  });
  REQUIRE(done.size() == 3);
  CHECK(done[2].id == 0);  // the first one issued completes last
  INFO("long transfer done after " << done[2].done_clock - done[2].accept_clock << " clocks, the others after "
                                   << done[0].done_clock - done[0].accept_clock << " and "
                                   << done[1].done_clock - done[1].accept_clock);
  CHECK(done[0].done_clock < done[2].done_clock - 1000);
  CHECK(done[1].done_clock < done[2].done_clock - 1000);
}

TEST_CASE("DMA each partition row costs the preset's descriptor cycles before its data moves", "[dma]") {
  // Rows on engine 0 only (partitions 0..7 of the tiny preset's 16, 2 engines), the clock
  // enable always high: the descriptor counter is rows x dma_desc_cycles, and each row more
  // delays the transfer's completion by at least that much.
  const uint64_t desc = tiny().dma_desc_cycles;
  REQUIRE(desc > 0);
  uint64_t prev_cycles = 0;
  for (uint32_t rows = 1; rows <= 8; ++rows) {
    Bench b(7);
    std::mt19937_64 rng(7);
    b.load(random_bytes(rng, size_t{kP} * tiny().sbuf_bytes), random_bytes(rng, Bench::kHbmBytes));
    b.configure({CeMode::high, 8, 8, 100, false});
    const std::vector<Xfer> done = run_all(b, {copy(0, sbuf_ap(Dtype::fp32, 0, rows, 0, 1), hbm_ap(Dtype::fp32, rows, 1, 0, 1))});
    INFO(rows << " rows: " << b.desc_cycles() << " descriptor cycles, done after " << done[0].done_ce - done[0].accept_ce);
    CHECK(b.desc_cycles() == rows * desc);
    const uint64_t cycles = done[0].done_ce - done[0].accept_ce;
    if (rows > 1) CHECK(cycles >= prev_cycles + desc);
    prev_cycles = cycles;
  }
}

TEST_CASE("DMA throughput of large contiguous transfers", "[dma]") {
  // 16 partitions x 2 KiB: 1024 lines per engine. With the HBM latency inside what 16
  // outstanding lines cover, an engine should move close to one 16-byte line per DMA cycle.
  struct Case {
    const char* name;
    Config cfg;
    bool to_sbuf;
    double min_bytes_per_cycle;  // per engine, per DMA cycle (0: report only)
  };
  const Case cases[] = {
      {"HBM->SBUF, ce=1, latency 8", {CeMode::high, 8, 8, 100, false}, true, 15.0},
      {"SBUF->HBM, ce=1, latency 8", {CeMode::high, 8, 8, 100, false}, false, 15.0},
      {"HBM->SBUF, ce from ncore_clk_en, latency 8", {CeMode::divider, 8, 8, 100, false}, true, 15.0},
      {"SBUF->HBM, ce from ncore_clk_en, latency 8", {CeMode::divider, 8, 8, 100, false}, false, 15.0},
      {"HBM->SBUF, ce=1, latency 48 (tiny preset's 20 ns)", {CeMode::high, 48, 48, 100, false}, true, 0.0},
  };
  std::string rep;
  for (const Case& c : cases) {
    Bench b(6);
    std::mt19937_64 rng(6);
    b.load(random_bytes(rng, size_t{kP} * tiny().sbuf_bytes), random_bytes(rng, Bench::kHbmBytes));
    b.configure(c.cfg);
    const Ap s = sbuf_ap(Dtype::fp32, 0, 16, 0, 512);
    const Ap h = hbm_ap(Dtype::fp32, 16, 512, 0, 512);
    const std::vector<Xfer> done = run_all(b, {c.to_sbuf ? copy(0, s, h) : copy(0, h, s)});
    const Xfer& x = done[0];
    const double cycles = double(x.done_ce - x.accept_ce);
    const double rate = 16.0 * 2048 / kE / cycles;
    rep += "\n  " + std::string(c.name) + ": " + std::to_string(uint64_t(cycles)) + " DMA cycles, " +
           std::to_string(rate) + " B/cycle per engine";
    INFO(c.name << ": " << cycles << " DMA cycles, " << rate << " bytes per DMA cycle per engine");
    if (c.min_bytes_per_cycle > 0) CHECK(rate >= c.min_bytes_per_cycle);
    CHECK(rate <= 16.0);
  }
  WARN("dma throughput (16 x 2 KiB, 16 B lines):" << rep);
}

// The RTL's assertions (the unit benches' models always have them; rtl/ncore_dma_engine.sv a_credit_max): an HBM side
// that breaks the credit protocol, handing every engine a credit on every clock while none is
// spent, pushes the engines past the DmaHbmCredits (4) they may hold. The edge at which an engine
// holds 5 stops the bench with the failing assertion's instance and message (ncore-sim reports
// the same as a SimError and exits with status 3).
TEST_CASE("DMA assertion: HBM credits past DmaHbmCredits stop the run", "[dma][assert]") {
  ncore::tb::Dut<Vncore_dma_tb> dut;
  dut->ce_i = 1;
  set_zero(dut->ce_sel_i, dut->insn_valid_i, dut->hq_credit_i);
  dut.reset();  // edges 1 and 2
  dut->hq_credit_i = (1u << kE) - 1;
  std::string msg;
  uint64_t edges = 0;
  try {
    for (int c = 0; c < 20; ++c) dut.edge();
  } catch (const std::runtime_error& e) {
    msg = e.what();
    edges = dut.edges();
  }
  INFO(msg);
  // Edges 3..7 bring the count to 5; the assertion samples it at edge 8.
  CHECK(edges == 8);
  CHECK_THAT(msg, Catch::StartsWith("assertion failed at cycle 8: "));
  CHECK_THAT(msg, Catch::Contains("u_dma.g_eng[0].u_eng.a_credit_max: 5 HBM credits held, more than DmaHbmCredits = 4"));
  CHECK_THAT(msg, Catch::Contains("u_dma.g_eng[1].u_eng.a_credit_max"));
}
