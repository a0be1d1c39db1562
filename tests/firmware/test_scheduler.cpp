// The scheduler on hand-made access sequences: which waits appear, where, with which values,
// and that random sequences always run to completion with every conflict ordered.
#include <catch2/catch.hpp>

#include <random>

#include "exec_check.hpp"
#include "ncore/scheduler.hpp"

namespace {

namespace isa = ncore::isa;
using ncore::Access;
using ncore::Region;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

// Streams of trn2: 0..4 engines (dve = 3), 5.. DMA queues.
constexpr unsigned kDve = 3, kAct = 1, kQ0 = 5, kQ1 = 6, kQ2 = 7;

Region sb(uint32_t p_lo, uint32_t p_hi, int64_t lo, int64_t hi) {
  Region r;
  r.mem = isa::Buffer::sbuf;
  r.box = ncore::Box{p_lo, p_hi, lo, hi};
  r.dense = true;
  return r;
}
Region sb(int64_t lo, int64_t hi) { return sb(0, 128, lo, hi); }

Region hbm(int64_t lo, int64_t hi) {
  Region r;
  r.mem = isa::Buffer::hbm;
  r.box = ncore::Box{0, 1, lo, hi};
  r.dense = true;
  return r;
}

Access R(const Region& r) { return Access{r, false}; }
Access W(const Region& r) { return Access{r, true}; }

isa::Insn insn_for(unsigned stream) {
  isa::Insn i{};
  if (stream >= ncore::kNumEngineStreams) {
    i.opcode = isa::Opcode::dma_copy;
    i.engine = isa::Engine::dma;
    i.dma_queue = stream - ncore::kNumEngineStreams;
  } else {
    i.opcode = isa::Opcode::memset;
    i.engine = stream == kAct ? isa::Engine::act : isa::Engine::dve;
  }
  return i;
}

struct Sched {
  ncore::Scheduler s = ncore::Scheduler::for_preset(trn2());
  uint32_t add(unsigned stream, std::vector<Access> acc) { return s.add(stream, insn_for(stream), 0, acc); }
  const isa::Insn& at(unsigned stream, uint32_t pos) { return s.stream(stream)[pos].insn; }
};

bool no_wait(const isa::Insn& i) { return i.wait_cond == isa::SemCond::none; }
bool waits(const isa::Insn& i, unsigned sem, uint32_t val) {
  return i.wait_cond == isa::SemCond::ge && i.wait_sem == sem && i.wait_val == val;
}

}  // namespace

TEST_CASE("every instruction raises its own stream's semaphore at completion", "[firmware][scheduler]") {
  Sched s;
  const uint32_t a = s.add(kQ0, {W(sb(0, 64))});
  const uint32_t b = s.add(kDve, {R(sb(0, 64))});
  for (const isa::Insn* i : {&s.at(kQ0, a), &s.at(kDve, b)}) {
    CHECK(i->upd_op == isa::SemOp::inc);
    CHECK(i->upd_when == isa::SemWhen::complete);
  }
  CHECK(s.at(kQ0, a).upd_sem == kQ0);
  CHECK(s.at(kDve, b).upd_sem == kDve);
}

TEST_CASE("RAW, WAR and WAW get a wait, RAR and disjoint accesses do not", "[firmware][scheduler]") {
  SECTION("read after write") {
    Sched s;
    s.add(kQ0, {W(sb(0, 64))});
    CHECK(waits(s.at(kDve, s.add(kDve, {R(sb(32, 40))})), kQ0, 16));  // DMA: 16 engines each add 1
  }
  SECTION("write after read") {
    Sched s;
    s.add(kDve, {R(sb(0, 64))});
    CHECK(waits(s.at(kQ1, s.add(kQ1, {W(sb(0, 8))})), kDve, 1));
  }
  SECTION("write after write") {
    Sched s;
    s.add(kQ0, {W(hbm(100, 200))});
    CHECK(waits(s.at(kQ1, s.add(kQ1, {W(hbm(199, 300))})), kQ0, 16));
  }
  SECTION("read after read") {
    Sched s;
    s.add(kQ0, {R(sb(0, 64))});
    CHECK(no_wait(s.at(kDve, s.add(kDve, {R(sb(0, 64))}))));
  }
  SECTION("disjoint bytes, disjoint partitions, different buffers") {
    Sched s;
    s.add(kQ0, {W(sb(0, 64, 0, 64))});
    CHECK(no_wait(s.at(kDve, s.add(kDve, {R(sb(0, 64, 64, 128))}))));
    CHECK(no_wait(s.at(kDve, s.add(kDve, {W(sb(64, 128, 0, 64))}))));
    CHECK(no_wait(s.at(kQ1, s.add(kQ1, {W(hbm(0, 64))}))));
  }
  SECTION("a dependency on the same stream") {
    Sched s;
    s.add(kQ0, {W(sb(0, 64))});
    CHECK(waits(s.at(kQ0, s.add(kQ0, {R(sb(0, 64)), W(hbm(0, 64))})), kQ0, 16));
  }
}

TEST_CASE("wait values count completions: (k+1) x weight, sem_waits not counted", "[firmware][scheduler]") {
  Sched s;
  s.add(kQ0, {W(sb(0, 64))});
  s.add(kQ0, {W(sb(64, 128))});
  s.add(kQ0, {W(sb(128, 192))});
  CHECK(waits(s.at(kDve, s.add(kDve, {R(sb(128, 192))})), kQ0, 48));
  // Two producers, q0 #0 and q1 #0; the first is implied (q0 completes in order and the
  // previous dve instruction waited for q0 #2), so one wait and no sem_wait.
  s.add(kQ1, {W(sb(192, 256))});
  const uint32_t p = s.add(kDve, {R(sb(0, 64)), R(sb(192, 256)), W(sb(256, 320))});
  CHECK(p == 1);
  CHECK(waits(s.at(kDve, p), kQ1, 16));
  CHECK(s.s.stats().sem_waits == 0);
  // The dve stream has 2 semaphore-raising instructions; a reader of the second waits for 2.
  CHECK(waits(s.at(kQ2, s.add(kQ2, {R(sb(256, 320))})), kDve, 2));
}

TEST_CASE("more than one producer: one sem_wait per extra producer stream", "[firmware][scheduler]") {
  Sched s;
  s.add(kQ0, {W(sb(0, 64))});
  s.add(kQ1, {W(sb(64, 128))});
  s.add(kQ2, {W(sb(128, 192))});
  const uint32_t p = s.add(kDve, {R(sb(0, 192)), W(sb(192, 256))});
  REQUIRE(p == 2);
  const auto& dve = s.s.stream(kDve);
  for (int k = 0; k < 2; ++k) {
    const isa::Insn& w = dve[k].insn;
    CHECK(w.opcode == isa::Opcode::sem_wait);
    CHECK(w.engine == isa::Engine::dve);
    CHECK(w.upd_op == isa::SemOp::none);
    CHECK(w.wait_cond == isa::SemCond::ge);
    CHECK(w.wait_val == 16);
  }
  std::vector<unsigned> sems = {dve[0].insn.wait_sem, dve[1].insn.wait_sem, dve[2].insn.wait_sem};
  std::sort(sems.begin(), sems.end());
  CHECK(sems == std::vector<unsigned>{kQ0, kQ1, kQ2});
  CHECK(dve[2].insn.opcode == isa::Opcode::memset);
  CHECK(s.s.stats().sem_waits == 2);
  // sem_waits on a DMA queue carry the queue's engine and queue id
  s.add(kDve, {W(hbm(0, 64))});
  s.add(kAct, {W(hbm(64, 128))});
  s.add(kQ2, {R(hbm(0, 128))});
  const auto& q2 = s.s.stream(kQ2);
  REQUIRE(q2.size() == 3);
  CHECK(q2[1].insn.opcode == isa::Opcode::sem_wait);
  CHECK(q2[1].insn.engine == isa::Engine::dma);
  CHECK(q2[1].insn.dma_queue == 2);
}

TEST_CASE("the tensor engine's own PSUM conflicts need no wait, other streams' do", "[firmware][scheduler]") {
  Sched s;
  const unsigned pe = static_cast<unsigned>(ncore::StreamKind::pe);
  Region acc = sb(0, 128, 0, 2048);
  acc.mem = isa::Buffer::psum;
  const uint32_t a = s.add(pe, {R(sb(0, 512)), W(acc)});          // overwrite: opens a group
  const uint32_t b = s.add(pe, {R(sb(512, 1024)), R(acc), W(acc)});  // accumulate: RAW and WAW on a
  CHECK(no_wait(s.at(pe, b)));
  CHECK(s.s.stream(pe).size() == 2);
  (void)a;
  const uint32_t c = s.add(kDve, {R(acc), W(sb(4096, 4608))});     // the copy out waits for b
  CHECK(waits(s.at(kDve, c), pe, 2));
  const uint32_t d = s.add(kDve, {W(sb(4096, 4608))});             // WAW on its own stream still waits
  CHECK(waits(s.at(kDve, d), kDve, 1));
}

TEST_CASE("vector clocks drop dependencies that are already implied", "[firmware][scheduler]") {
  Sched s;
  s.add(kQ0, {W(sb(0, 64))});                        // A: q0 writes X
  s.add(kDve, {R(sb(0, 64)), W(sb(64, 128))});       // B: dve reads X (waits A), writes Y
  const uint32_t c = s.add(kQ1, {W(sb(0, 64))});     // C: WAW on A, WAR on B; B implies A
  CHECK(waits(s.at(kQ1, c), kDve, 1));
  CHECK(s.s.stream(kQ1).size() == 1);                 // no sem_wait
  const uint32_t d = s.add(kQ1, {R(sb(64, 128))});   // D: RAW on B, already known by q1 (C waited)
  CHECK(no_wait(s.at(kQ1, d)));
  const uint32_t e = s.add(kQ2, {R(sb(64, 128)), W(sb(0, 64))});  // E: RAW on B, WAW on C: C implies B
  CHECK(waits(s.at(kQ2, e), kQ1, 16));
  CHECK(s.s.stream(kQ2).size() == 1);
  CHECK(s.s.stats().implied >= 2);
}

TEST_CASE("access records are pruned", "[firmware][scheduler]") {
  Sched s;
  for (int i = 0; i < 5000; ++i) {
    s.add(kQ0 + (i % 4), {R(hbm(4 * i, 4 * i + 4)), W(sb(64 * (i % 4), 64 * (i % 4) + 4))});
    s.add(kDve, {R(sb(64 * (i % 4), 64 * (i % 4) + 4)), W(sb(512, 516))});
    s.add(kQ0 + ((i + 1) % 4), {R(sb(512, 516)), W(hbm(1 << 20, (1 << 20) + 4))});
  }
  // SBUF records are overwritten in place; the HBM reads are all distinct and stay.
  CHECK(s.s.stats().peak_records < 5000 + 64);
  CHECK(s.s.stats().live_records < 5000 + 64);
}

TEST_CASE("strided HBM rows: columns of one matrix do not conflict", "[firmware][scheduler]") {
  // A (128 x 200) fp32 matrix; column block j = rows of 8 bytes at 8j, 800 bytes apart.
  auto cols = [](int64_t j, int64_t ncols) {
    isa::Ap a{};
    a.mem = isa::Buffer::hbm;
    a.dtype = isa::Dtype::fp32;
    a.num_part = 128;
    a.part_stride = 200;
    a.offset = static_cast<uint64_t>(8 * j);
    a.size = {static_cast<uint32_t>(2 * ncols), 1, 1, 1};
    a.stride = {1, 0, 0, 0};
    return ncore::region_of(a);
  };
  CHECK_FALSE(ncore::regions_overlap(cols(0, 1), cols(1, 1)));
  CHECK_FALSE(ncore::regions_overlap(cols(3, 1), cols(50, 1)));
  CHECK(ncore::regions_overlap(cols(3, 1), cols(3, 1)));
  CHECK(ncore::regions_overlap(cols(0, 2), cols(1, 1)));
  CHECK(ncore::regions_overlap(cols(99, 1), cols(99, 1)));
  // the last column of row r next to the first of row r+1 do not touch; one element more does
  Region last = cols(99, 1), first = cols(0, 1);
  CHECK_FALSE(ncore::regions_overlap(last, first));
  Sched s;
  s.add(kQ0, {W(cols(0, 1))});
  CHECK(no_wait(s.at(kQ1, s.add(kQ1, {W(cols(1, 1))}))));
  CHECK(waits(s.at(kQ2, s.add(kQ2, {R(cols(0, 1))})), kQ0, 16));
  // a dense region is covered by a dense write; a strided one covers nothing
  CHECK(ncore::region_covers(hbm(0, 100), hbm(10, 20)));
  CHECK_FALSE(ncore::region_covers(cols(0, 1), hbm(0, 4)));
}

TEST_CASE("random access sequences: no deadlock, every conflict ordered", "[firmware][scheduler]") {
  std::mt19937 rng(2024);
  const std::vector<unsigned> streams = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int round = 0; round < 40; ++round) {
    ncore::Scheduler sched = ncore::Scheduler::for_preset(trn2());
    std::vector<std::pair<unsigned, uint32_t>> order;
    std::vector<std::vector<Access>> accs;
    const int n = 60;
    for (int k = 0; k < n; ++k) {
      const unsigned st = streams[rng() % streams.size()];
      std::vector<Access> acc;
      const int na = 1 + static_cast<int>(rng() % 3);
      for (int a = 0; a < na; ++a) {
        const int64_t lo = static_cast<int64_t>(rng() % 16) * 16;
        const int64_t len = 4 + static_cast<int64_t>(rng() % 40);
        const uint32_t p0 = static_cast<uint32_t>(rng() % 4) * 32;
        Region r = (rng() % 3 == 0) ? hbm(lo, lo + len) : sb(p0, p0 + 32 * (1 + rng() % 2), lo, lo + len);
        if (r.box.p_hi > 128) r.box.p_hi = 128;
        acc.push_back(Access{r, rng() % 2 == 0});
      }
      order.emplace_back(st, sched.add(st, insn_for(st), 0, acc));
      accs.push_back(acc);
    }
    ncore::Program p;
    p.preset = "trn2";
    p.streams = ncore::make_streams(16);
    auto out = sched.take();
    for (size_t i = 0; i < out.size(); ++i) p.streams[i].insns = out[i];
    for (uint64_t seed = 0; seed < 5; ++seed) {
      const fwtest::Execution e = fwtest::execute(p, trn2(), seed * 77 + round);
      REQUIRE(e.completed);
      for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) {
          bool conflict = false;
          for (const auto& x : accs[a])
            for (const auto& y : accs[b])
              conflict |= (x.write || y.write) && x.region.mem == y.region.mem && x.region.box.overlaps(y.region.box);
          if (!conflict) continue;
          const auto [sa, pa] = order[a];
          const auto [sb2, pb] = order[b];
          INFO("round " << round << " seed " << seed << " pair " << a << " " << b);
          CHECK(fwtest::ordered_pair(e, sa, pa, sb2, pb));
        }
    }
  }
}
