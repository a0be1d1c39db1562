// The SystemC top level on hand-assembled Programs: DMA in, vector add, DMA out, with the
// semaphores written out by hand, run in check mode and compared with independent answers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "core/core_sim.hpp"
#include "golden_model.hpp"
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

using namespace ncore;

namespace {

isa::Ap sbuf_ap(uint32_t parts, uint64_t offset, uint32_t n, isa::Dtype dt = isa::Dtype::fp32) {
  isa::Ap a;
  a.mem = isa::Buffer::sbuf;
  a.dtype = dt;
  a.start_part = 0;
  a.num_part = parts;
  a.offset = offset;
  a.size = {n, 1, 1, 1};
  a.stride = {1, 0, 0, 0};
  return a;
}

isa::Ap hbm_ap(uint32_t rows, uint64_t offset, uint32_t n, isa::Dtype dt = isa::Dtype::fp32) {
  isa::Ap a = sbuf_ap(rows, offset, n, dt);
  a.mem = isa::Buffer::hbm;
  a.part_stride = static_cast<int32_t>(n);
  return a;
}

Program empty_program(const Preset& p) {
  Program prog;
  prog.kernel = "hand";
  prog.preset = p.name;
  const char* names[] = {"pe", "act", "pool", "dve", "sp"};
  const isa::Engine engines[] = {isa::Engine::pe, isa::Engine::act, isa::Engine::pool, isa::Engine::dve, isa::Engine::sp};
  for (int i = 0; i < 5; ++i) {
    Stream s;
    s.name = names[i];
    s.engine = engines[i];
    prog.streams.push_back(s);
  }
  for (unsigned q = 0; q < p.dma_queues; ++q) {
    Stream s;
    s.name = "q" + std::to_string(q);
    s.engine = isa::Engine::dma;
    s.queue = q;
    prog.streams.push_back(s);
  }
  prog.locations.push_back({"tests/sim/test_core.cpp", 1});
  return prog;
}

isa::Insn op(isa::Opcode o, isa::Engine e, unsigned sem) {
  isa::Insn i;
  i.opcode = o;
  i.engine = e;
  i.upd_sem = sem;
  i.upd_op = isa::SemOp::inc;
  i.upd_when = isa::SemWhen::complete;
  return i;
}

void wait_on(isa::Insn& i, unsigned sem, uint32_t v) {
  i.wait_sem = sem;
  i.wait_cond = isa::SemCond::ge;
  i.wait_val = v;
}

// A Program of 1 KiB of HBM and one memset of SBUF on the vector engine's stream; `wait`, when
// given, makes the memset wait until semaphore wait->first reaches wait->second.
Program one_memset(const Preset& p, std::optional<std::pair<unsigned, uint32_t>> wait = std::nullopt) {
  Program prog = empty_program(p);
  prog.hbm_bytes = 1024;
  isa::Insn m = op(isa::Opcode::memset, isa::Engine::dve, 3);
  m.dst = sbuf_ap(128, 0, 4);
  if (wait) wait_on(m, wait->first, wait->second);
  prog.streams[3].insns.push_back({m, 0});
  return prog;
}

}  // namespace

TEST_CASE("hand-written vector add runs on the RTL and matches the golden model", "[sim]") {
  const Preset& p = *find_preset("trn2");
  const uint32_t F = 64;
  Program prog = empty_program(p);
  const uint64_t bytes = 128 * F * 4;
  prog.hbm_bytes = 3 * bytes;
  const unsigned q0 = 5, q1 = 6, q2 = 7, dve = 3;

  isa::Insn la = op(isa::Opcode::dma_copy, isa::Engine::dma, q0);
  la.dma_queue = 0;
  la.dst = sbuf_ap(128, 0, F);
  la.src0 = hbm_ap(128, 0, F);
  isa::Insn lb = op(isa::Opcode::dma_copy, isa::Engine::dma, q1);
  lb.dma_queue = 1;
  lb.dst = sbuf_ap(128, 1024, F);
  lb.src0 = hbm_ap(128, bytes, F);
  isa::Insn w = op(isa::Opcode::sem_wait, isa::Engine::dve, dve);
  w.upd_op = isa::SemOp::none;
  wait_on(w, q0, 16);
  isa::Insn add = op(isa::Opcode::tensor_tensor, isa::Engine::dve, dve);
  wait_on(add, q1, 16);
  add.op0 = isa::AluOp::add;
  add.dst = sbuf_ap(128, 2048, F);
  add.src0 = sbuf_ap(128, 0, F);
  add.src1 = sbuf_ap(128, 1024, F);
  isa::Insn st = op(isa::Opcode::dma_copy, isa::Engine::dma, q2);
  st.dma_queue = 2;
  wait_on(st, dve, 1);
  st.dst = hbm_ap(128, 2 * bytes, F);
  st.src0 = sbuf_ap(128, 2048, F);
  prog.streams[5].insns.push_back({la, 0});
  prog.streams[6].insns.push_back({lb, 0});
  prog.streams[3].insns.push_back({w, 0});
  prog.streams[3].insns.push_back({add, 0});
  prog.streams[7].insns.push_back({st, 0});

  std::vector<uint8_t> hbm(prog.hbm_bytes, 0);
  std::vector<float> a(128 * F), b(128 * F);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  std::memcpy(hbm.data(), a.data(), bytes);
  std::memcpy(hbm.data() + bytes, b.data(), bytes);

  sim::RunOptions opt;
  opt.check = true;
  auto& core = sim::Core::get(p);
  sim::RunResult r = core.run(prog, hbm, opt);
  INFO("cycles " << r.cycles << " eval " << r.evaluated_cycles << " skipped " << r.skipped_cycles);
  INFO("cycles " << r.cycles << " eval " << r.evaluated_cycles << " skipped " << r.skipped_cycles << " wall " << r.wall_seconds);
  CHECK(r.instructions == 5);
  CHECK(r.dma_transfers == 3);
  CHECK(r.checked_instructions == 4);
  for (uint32_t k = 0; k < 128 * F; ++k) {
    float o;
    std::memcpy(&o, hbm.data() + 2 * bytes + 4 * k, 4);
    REQUIRE(o == a[k] + b[k]);
  }
  // The start-up first (trn2's 10200 ns are 24480 cycles, a whole number of the clock enables'
  // period of 10), then two transfers' fixed cost at least, and the skipped cycles add up.
  const uint64_t start = p.kernel_start_ns * p.clock_mhz / 1000;
  CHECK(r.start_cycles == start);
  for (const sim::InsnRecord& rec : r.records) CHECK(rec.ready >= start);
  const uint64_t fixed = p.dma_fixed_cost_ns * p.clock_mhz / 1000;
  CHECK(r.cycles > start + 2 * fixed);
  CHECK(r.cycles == r.evaluated_cycles + r.skipped_cycles);
  // The breakdown covers every cycle once: the start-up, the loads' fixed cost (paid together)
  // and the store's, and the descriptors: 3 transfers of 128 rows over 16 engines are 24 rows
  // per engine, each dma_desc_cycles DMA cycles (a DMA cycle lasts a master cycle or more).
  const sim::TimeBreakdown& bd = r.breakdown;
  CHECK(bd.start_up + bd.compute + bd.dma_descriptors + bd.dma_data + bd.dma_fixed_cost + bd.other == r.cycles);
  CHECK(bd.start_up == start);
  CHECK(bd.dma_fixed_cost >= 2 * fixed);
  CHECK(bd.compute > 0);
  CHECK(r.dma_desc_cycles >= 24 * p.dma_desc_cycles);
  CHECK(bd.dma_descriptors > 0);
  CHECK(bd.dma_descriptors <= r.dma_desc_cycles);

  // The same run without skipping gives the same cycle count.
  std::vector<uint8_t> hbm2(prog.hbm_bytes, 0);
  std::memcpy(hbm2.data(), a.data(), bytes);
  std::memcpy(hbm2.data() + bytes, b.data(), bytes);
  sim::RunOptions noskip;
  noskip.skip_idle = false;
  sim::RunResult r2 = core.run(prog, hbm2, noskip);
  INFO("noskip cycles " << r2.cycles << " wall " << r2.wall_seconds);
  CHECK(r2.cycles == r.cycles);
  CHECK(r2.skipped_cycles == 0);
  CHECK(r2.start_cycles == start);
  CHECK(r2.dma_desc_cycles == r.dma_desc_cycles);
  CHECK(hbm2 == hbm);
}

namespace {

// `n` independent loads on each of the first `queues` DMA queues, each all partitions of `f`
// fp32 from its own HBM rows into its own SBUF bytes; a transfer raises its queue's semaphore.
Program independent_loads(const Preset& p, unsigned queues, unsigned n, uint32_t f) {
  Program prog = empty_program(p);
  const uint32_t parts = static_cast<uint32_t>(p.num_partitions);
  const uint64_t bytes = uint64_t{parts} * f * 4;
  prog.hbm_bytes = queues * n * bytes;
  for (unsigned q = 0; q < queues; ++q)
    for (unsigned t = 0; t < n; ++t) {
      const unsigned k = q * n + t;
      isa::Insn ld = op(isa::Opcode::dma_copy, isa::Engine::dma, 5 + q);
      ld.dma_queue = q;
      ld.dst = sbuf_ap(parts, uint64_t{k} * f * 4, f);
      ld.src0 = hbm_ap(parts, k * bytes, f);
      prog.streams[5 + q].insns.push_back({ld, 0});
    }
  return prog;
}

// Runs `prog` in check mode (each transfer's bits compared with the golden model's) on HBM
// filled with a pattern; the DMA queues' records, queue by queue in program order.
std::vector<std::vector<sim::InsnRecord>> run_loads(const Preset& p, const Program& prog, sim::RunResult& r) {
  std::vector<uint8_t> hbm(prog.hbm_bytes);
  for (size_t i = 0; i < hbm.size(); ++i) hbm[i] = static_cast<uint8_t>(i * 7 + 1);
  sim::RunOptions opt;
  opt.check = true;
  r = sim::Core::get(p).run(prog, hbm, opt);
  std::vector<std::vector<sim::InsnRecord>> q(p.dma_queues);
  for (const sim::InsnRecord& rec : r.records)
    if (rec.stream >= 5) q[rec.stream - 5].push_back(rec);
  for (auto& v : q)
    std::sort(v.begin(), v.end(), [](const sim::InsnRecord& a, const sim::InsnRecord& b) { return a.index < b.index; });
  return q;
}

// One queue's independent transfers follow its rules to the cycle: transfer i issues
// dma_queue_issue_ns after transfer i-1, and not before transfer i-K completes (K =
// dma_queue_inflight); it goes to the engines when its fixed cost has elapsed and transfer i-1
// is done. Returns the transfers' data times (hand-over to completion), summed.
uint64_t check_queue_rules(const Preset& p, const std::vector<sim::InsnRecord>& q) {
  const uint64_t F = p.dma_fixed_cost_ns * p.clock_mhz / 1000, O = p.dma_queue_issue_ns * p.clock_mhz / 1000;
  const size_t K = p.dma_queue_inflight;
  uint64_t data = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    INFO("transfer " << i << ": issue " << q[i].issue << " start " << q[i].start << " end " << q[i].end);
    uint64_t issue = i ? q[i - 1].issue + O : q[0].issue;
    if (i >= K) issue = std::max(issue, q[i - K].end);
    CHECK(q[i].issue == issue);
    CHECK(q[i].start == std::max(q[i].issue + F, i ? q[i - 1].end : 0));
    CHECK(q[i].end > q[i].start);
    data += q[i].end - q[i].start;
  }
  return data;
}

}  // namespace

TEST_CASE("DMA fixed cost as latency: a trn2 queue pays the next transfer's fixed cost while the one before moves data",
          "[sim]") {
  // trn2: the fixed cost holds the queue (dma_queue_issue_ns = dma_fixed_cost_ns), so a queue's
  // fixed costs follow each other, and each one overlaps the data of the transfer before it
  // (2 in flight): transfer i issues as transfer i-1 is handed to the engines.
  const Preset& p = *find_preset("trn2");
  REQUIRE(p.dma_queue_inflight == 2);
  REQUIRE(p.dma_queue_issue_ns == p.dma_fixed_cost_ns);
  const unsigned N = 5;
  sim::RunResult r;
  const std::vector<sim::InsnRecord> q = run_loads(p, independent_loads(p, 1, N, 512), r).at(0);  // 2 KiB per partition
  REQUIRE(q.size() == N);
  CHECK(r.checked_instructions == N);
  check_queue_rules(p, q);
  for (unsigned i = 1; i < N; ++i) {
    CHECK(q[i].issue == q[i - 1].start);  // its fixed cost starts as the one before starts moving data
    CHECK(q[i].issue < q[i - 1].end);
  }
}

TEST_CASE("DMA fixed cost as latency: N small transfers on one queue take one fixed cost and N data times", "[sim]") {
  // tiny: the fixed cost is all latency (dma_queue_issue_ns 0) and a queue keeps 4 in flight, so
  // N <= 4 independent small transfers issue together and finish after F + D_0 + ... + D_N-1,
  // where paying the fixed cost as occupancy would take N F + D_0 + ... + D_N-1.
  const Preset& p = *find_preset("tiny");
  REQUIRE(p.dma_queue_issue_ns == 0);
  const unsigned N = static_cast<unsigned>(p.dma_queue_inflight);
  REQUIRE(N >= 2);
  REQUIRE(p.dma_engine_inflight >= N);
  const uint64_t F = p.dma_fixed_cost_ns * p.clock_mhz / 1000;
  sim::RunResult r;
  const std::vector<sim::InsnRecord> q = run_loads(p, independent_loads(p, 1, N, 16), r).at(0);  // 64 B per partition
  REQUIRE(q.size() == N);
  CHECK(r.checked_instructions == N);
  const uint64_t data = check_queue_rules(p, q);
  for (unsigned i = 0; i < N; ++i) CHECK(q[i].issue == q[0].issue);
  CHECK(q[N - 1].end - q[0].issue == F + data);
  CHECK(data < (N - 1) * F);  // small transfers: less than N fixed costs in all
  // More transfers than the queue keeps in flight: the later ones follow the same rules.
  const std::vector<sim::InsnRecord> q2 = run_loads(p, independent_loads(p, 1, 2 * N + 1, 16), r).at(0);
  REQUIRE(q2.size() == 2 * N + 1);
  check_queue_rules(p, q2);
}

TEST_CASE("the DMA block keeps at most dma_engine_inflight transfers in flight over all its queues", "[sim]") {
  // tiny: every queue with as many transfers as it keeps in flight, more than the limit over all.
  const Preset& p = *find_preset("tiny");
  const unsigned queues = static_cast<unsigned>(p.dma_queues), K = static_cast<unsigned>(p.dma_queue_inflight);
  const unsigned E = static_cast<unsigned>(p.dma_engine_inflight);
  REQUIRE(queues * K > E);
  sim::RunResult r;
  const auto q = run_loads(p, independent_loads(p, queues, K, 16), r);
  CHECK(r.checked_instructions == queues * K);
  std::vector<std::pair<uint64_t, int>> events;  // -1 at a completion, +1 at an issue
  for (const auto& v : q)
    for (const sim::InsnRecord& rec : v) {
      events.push_back({rec.issue, +1});
      events.push_back({rec.end, -1});
    }
  std::sort(events.begin(), events.end());  // a completion sorts before an issue of the same cycle
  int now = 0, most = 0;
  for (const auto& e : events) most = std::max(most, now += e.second);
  CHECK(most == static_cast<int>(E));
}

TEST_CASE("a program that waits on a semaphore nobody raises is reported as a deadlock", "[sim]") {
  const Preset& p = *find_preset("trn2");
  Program prog = one_memset(p, std::pair{200u, 1u});
  std::vector<uint8_t> hbm(prog.hbm_bytes, 0);
  REQUIRE_THROWS_WITH(sim::Core::get(p).run(prog, hbm, {}), Catch::Contains("deadlock"));
}

TEST_CASE("a process builds each preset's core with one thread count", "[sim]") {
  const Preset& trn2 = *find_preset("trn2");
  const Preset& trn1 = *find_preset("trn1");
  CHECK(sim::Core::thread_counts("trn2") == std::vector<unsigned>{1, 2});
  CHECK(sim::Core::thread_counts("trn1") == std::vector<unsigned>{1});
  // The first call elaborates every preset's core (here on one thread); SystemC elaborates once.
  CHECK(sim::Core::get(trn2, 1).threads() == 1);
  CHECK(sim::Core::get(trn1).threads() == 1);
  REQUIRE_THROWS_WITH(sim::Core::get(trn2, 2), Catch::Contains("needs a new process"));
  REQUIRE_THROWS_WITH(sim::Core::get(trn1, 2), Catch::Contains("no 2-thread RTL model"));
  // auto: the tensor engine's Programs only.
  Program prog = empty_program(trn2);
  CHECK(sim::Core::auto_threads(trn2, prog) == 1);
  isa::Insn mm = op(isa::Opcode::multiply_moving, isa::Engine::pe, 0);
  prog.streams[static_cast<unsigned>(StreamKind::pe)].insns.push_back({mm, 0});
  CHECK(sim::Core::auto_threads(trn2, prog) == (std::thread::hardware_concurrency() >= 2 ? 2u : 1u));
  CHECK(sim::Core::auto_threads(trn1, empty_program(trn1)) == 1);
}

// An RTL assertion's failure (cores built with -DNCORE_ASSERT=ON: the action block calls the DPI-C import
// ncore_assert_fail, sim/trace/rtl_assert.hpp) stops the run at the next clock edge with a
// SimError (ncore-sim: exit status 3) that gives the cycle and the assertion's message. The
// import is called here as the RTL would call it; tb/unit/dma's "[assert]" case makes the RTL
// call it through a protocol violation.
extern "C" void ncore_assert_fail(const char* msg);

TEST_CASE("an RTL assertion failure stops the run with its cycle and message", "[sim]") {
  const Preset& p = *find_preset("trn2");
  Program prog = one_memset(p);
  std::vector<uint8_t> hbm(prog.hbm_bytes, 0);
  ncore_assert_fail("ncore_trn2.ncore_top.u_dve.u_front.a_planted: a planted failure");
  REQUIRE_THROWS_WITH(sim::Core::get(p).run(prog, hbm, {}),
                      Catch::Contains("assertion failed at cycle 0: ncore_trn2.ncore_top.u_dve.u_front.a_planted: "
                                      "a planted failure"));
  // Reported once: the next run is clean.
  std::vector<uint8_t> hbm2(prog.hbm_bytes, 0);
  CHECK(sim::Core::get(p).run(prog, hbm2, {}).instructions == 1);
}

// A check-mode run cut short by a difference stops the core with writes in flight, and the next
// run on the same core starts from zeroed memories all the same. Run 1 (the tiny preset): the
// vector engine fills a few SBUF lines with 1.0, then the tensor engine multiplies them into every
// PSUM bank while a small load, whose HBM source the golden model sees changed (a planted
// difference), completes: the run stops with the multiplies' results (16.0) still being written.
// Run 2 copies the whole PSUM out to HBM: it must read the zeros a fresh run starts from, in check
// mode and in the HBM it writes. The reset used to clear the memories before its two clock edges,
// and the PSUM write in flight landed on the first of them.
TEST_CASE("a run cut short by a check difference leaves no write in flight to the next run", "[sim]") {
  const Preset& p = *find_preset("tiny");
  const uint32_t parts = p.num_partitions, bank = static_cast<uint32_t>(p.psum_bank_bytes / 4);
  const uint32_t banks = static_cast<uint32_t>(p.psum_bytes / p.psum_bank_bytes);
  const unsigned pe = 0, dve = 3, q0 = 5;
  const uint64_t ones_at = 1024;
  const uint32_t F = 16;
  auto& core = sim::Core::get(p, 1);
  // a transfer on DMA queue 0 once the vector engine's first instruction is done
  auto q0_after_fill = [&](const isa::Ap& dst, const isa::Ap& src) {
    isa::Insn i = op(isa::Opcode::dma_copy, isa::Engine::dma, q0);
    i.dma_queue = 0;
    wait_on(i, dve, 1);
    i.dst = dst;
    i.src0 = src;
    return i;
  };

  Program cut = empty_program(p);
  cut.hbm_bytes = parts * F * 4;
  isa::Insn ones = op(isa::Opcode::memset, isa::Engine::dve, dve);
  ones.dst = sbuf_ap(parts, ones_at, parts + bank);
  const float one = 1.0f;
  std::memcpy(&ones.imm0, &one, 4);
  cut.streams[dve].insns.push_back({ones, 0});
  isa::Insn ls = op(isa::Opcode::load_stationary, isa::Engine::pe, pe);
  ls.upd_op = isa::SemOp::none;
  wait_on(ls, dve, 1);
  ls.src0 = sbuf_ap(parts, ones_at, parts);
  cut.streams[pe].insns.push_back({ls, 0});
  for (uint32_t b = 0; b < banks; ++b) {
    isa::Insn mm = op(isa::Opcode::multiply_moving, isa::Engine::pe, pe);
    mm.src0 = sbuf_ap(parts, ones_at + 4 * parts, bank);
    mm.dst = sbuf_ap(parts, b * p.psum_bank_bytes, bank);
    mm.dst.mem = isa::Buffer::psum;
    cut.streams[pe].insns.push_back({mm, 0});
  }
  cut.streams[q0].insns.push_back({q0_after_fill(sbuf_ap(parts, 0, F), hbm_ap(parts, 0, F)), 0});
  std::vector<uint8_t> hbm(cut.hbm_bytes, 0);
  sim::RunOptions planted;
  planted.check = true;
  planted.golden_setup = [](GoldenModel& g) { g.hbm()[3] ^= 0x80; };  // element 0's sign: -0.0
  REQUIRE_THROWS_WITH(core.run(cut, hbm, planted), Catch::StartsWith("check:") && Catch::Contains("q0[0]"));

  const uint32_t n = static_cast<uint32_t>(p.psum_bytes / 4);
  Program read = empty_program(p);
  read.hbm_bytes = static_cast<uint64_t>(parts) * n * 4;
  isa::Insn copy = op(isa::Opcode::tensor_copy, isa::Engine::dve, dve);
  copy.src0 = sbuf_ap(parts, 0, n);
  copy.src0.mem = isa::Buffer::psum;
  copy.dst = sbuf_ap(parts, 0, n);
  read.streams[dve].insns.push_back({copy, 0});
  read.streams[q0].insns.push_back({q0_after_fill(hbm_ap(parts, 0, n), sbuf_ap(parts, 0, n)), 0});
  std::vector<uint8_t> out(read.hbm_bytes, 0xff);
  sim::RunOptions check;
  check.check = true;
  REQUIRE_NOTHROW(core.run(read, out, check));
  CHECK(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0; }));
}
