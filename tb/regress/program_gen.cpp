// Constrained-random Programs; see program_gen.hpp.
//
// draw() picks the steps: each data instruction a few tries until it passes validate_insn, the
// tensor engine's state (the stationary operand, the accumulation group) followed as it goes, the
// semaphore episodes as steps of their own. assemble() then
//   1. hands the data instructions to the scheduler with their reads and writes, which gives them
//      waits for every earlier conflicting access, and notes where the episodes' sem_waits go
//      (before the scheduler's position at the time) and which data instructions take a wait of
//      an episode (the ones the scheduler left without a wait);
//   2. rewrites the semaphore fields the completion counts do not depend on: an instruction that
//      no wait targets exactly may fire its count at read time (on streams that run one
//      instruction at a time); after the last targeted instruction of a stream, updates go to
//      semaphores of their own, with any op, waited for at the end of some stream; equivalent ops
//      and conditions for the counts (add 1, sub 0xFFFFFFFF, gt for ge);
//   3. merges the sem_waits into the streams and checks the whole Program.
#include "program_gen.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_kinds.hpp"
#include "ncore/scheduler.hpp"
#include "ncore/semaphores.hpp"
#include "ncore/validate.hpp"
#include "operand_gen.hpp"
#include "random_bits.hpp"

namespace ncore::regress {
namespace {

using isa::ActFunc;
using isa::AluOp;
using isa::Ap;
using isa::Buffer;
using isa::Dtype;
using isa::Engine;
using isa::Insn;
using isa::Opcode;
using isa::SemCond;
using isa::SemOp;
using isa::SemWhen;

enum class Kind { dma, tt, ts, copy, memset, reduce, act, ls, mm, sync, count };

class Gen {
 public:
  Gen(const Preset& pr, uint64_t seed, const GenOptions& opt)
      : pr_(pr),
        opt_(opt),
        rng_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull),
        g_(rng_),
        P_(static_cast<uint32_t>(pr.num_partitions)),
        ns_(kNumEngineStreams + static_cast<unsigned>(pr.dma_queues)) {
    d_.preset = pr.name;
    d_.seed = seed;
  }

  Draft run();

 private:
  uint32_t below(uint64_t n) { return n ? g_.below(n) : 0; }
  bool chance(unsigned pct) { return g_.chance(pct); }
  // A lane or DMA operand's dtype: mostly a float, sometimes an integer (the engines convert
  // both through fp32); the tensor engine's operands are floats only (float_dtype).
  Dtype dtype() { return chance(20) ? int_dtype() : g_.dtype(); }
  Dtype float_dtype() { return g_.dtype(); }
  Dtype int_dtype() { return kIntDtypes[below(std::size(kIntDtypes))]; }
  // The operands' dtype: `one` for a bitvec instruction (every operand one integer dtype), else any.
  Dtype dtype_or(std::optional<Dtype> one) { return one ? *one : dtype(); }
  // A bitvec op's immediate: a shift amount mostly below 32, else any bits.
  uint32_t bitvec_imm(AluOp op) {
    return (op == AluOp::left_shift || op == AluOp::right_shift) && chance(80) ? below(40) : static_cast<uint32_t>(rng_());
  }
  static constexpr Dtype kIntDtypes[] = {Dtype::int8,   Dtype::uint8, Dtype::int16,
                                         Dtype::uint16, Dtype::int32, Dtype::uint32};
  // Any ALU op of the ISA but bypass.
  AluOp alu_op() { return isa::kAluOpValues[1 + below(isa::kAluOpValues.size() - 1)]; }

  // ---- sizes and operands ----
  uint32_t parts() { return chance(30) ? P_ : chance(20) ? 1 : 1 + below(P_); }
  uint32_t free_count(uint32_t cap) {
    uint32_t n;
    switch (below(20)) {
      case 0: case 1: case 2: case 3: case 4: case 5: n = 1 + below(8); break;
      case 6: case 7: case 8: case 9: case 10: case 11: case 12: n = 9 + below(56); break;
      case 13: case 14: case 15: case 16: case 17: case 18: n = 65 + below(192); break;
      default: n = 257 + below(768); break;
    }
    return std::min(n, std::max<uint32_t>(cap, 1));
  }
  uint32_t start_for(uint32_t np) { return below(P_ - np + 1); }
  // An SBUF (inside the program's window) or PSUM operand of a lane engine.
  bool lane_ap(Ap& a, Buffer mem, Dtype dt, uint32_t sp, uint32_t np, uint32_t n, bool broadcast) {
    const uint64_t limit = mem == Buffer::psum ? pr_.psum_bytes : sbuf_win_;
    if (!g_.operand(a, mem, dt, sp, np, n, broadcast, limit)) return false;
    if (mem == Buffer::sbuf) a.offset += sbuf_lo_;
    return true;
  }
  Buffer lane_mem(unsigned psum_pct) { return chance(psum_pct) ? Buffer::psum : Buffer::sbuf; }
  bool hbm_ap(Ap& a, Dtype dt, uint32_t np, uint32_t n, bool is_dst);
  // Whether an operand touches some element twice (a destination must not: its final value would
  // depend on the order of the writes between DMA engines, and an in-place engine operation would
  // read what it has written).
  static bool repeats(const Ap& a);
  uint32_t scalar_bits() {
    if (chance(50)) return tb::random_f32(rng_);
    const float v = static_cast<float>(static_cast<int>(below(33)) - 16) / 4.0f;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  void sref(isa::Sref& s, Dtype dt, uint32_t sp) {
    s.mem = Buffer::sbuf;
    s.dtype = dt;
    s.start_part = sp;
    const unsigned esz = isa::dtype_bytes(dt);
    s.offset = sbuf_lo_ + below(sbuf_win_ / esz) * esz;
  }

  // ---- steps ----
  bool make(Kind k, Insn& i);
  bool make_dma(Insn& i);
  bool make_lane(Kind k, Insn& i);
  bool make_reduce(Insn& i, uint32_t sp, uint32_t np);
  bool make_ls(Insn& i);
  bool make_mm(Insn& i);
  void add_data(Kind k);
  void sync();
  SemWait wait_on(unsigned episode) {
    SemWait w;
    w.has = true;
    w.episode = episode;
    w.cond = static_cast<SemCond>(1 + below(6));
    w.r = below(4) == 0 ? static_cast<uint32_t>(rng_()) : below(5);
    return w;
  }
  Step step(Step::Kind k, unsigned stream) {
    Step s;
    s.kind = k;
    s.origin = static_cast<uint32_t>(step_);
    s.stream = stream;
    return s;
  }

  const Preset& pr_;
  GenOptions opt_;
  std::mt19937_64 rng_;
  tb::ApGen g_;
  uint32_t P_;
  unsigned ns_;
  Draft d_;
  uint64_t sbuf_lo_ = 0, sbuf_win_ = 0;  // the SBUF bytes [sbuf_lo_, sbuf_lo_ + sbuf_win_) operands use
  std::vector<unsigned> queues_;           // the DMA queues this Program uses
  size_t step_ = 0;
  // the tensor engine: the stationary operand in the array, the accumulation group under way
  bool loaded_ = false;
  uint32_t k_ = 0, m_ = 0;
  Dtype sdt_{};
  Ap group_dst_{};
  unsigned group_left_ = 0;
};

bool Gen::repeats(const Ap& a) {
  Ap one = a;
  if (a.mem != Buffer::hbm) one.num_part = 1;  // every partition the same addresses
  std::vector<int64_t> addr;
  addr.reserve(ap_elems(one));
  ap_for_each(one, [&](uint32_t, uint64_t, int64_t x) { addr.push_back(x); });
  std::sort(addr.begin(), addr.end());
  return std::adjacent_find(addr.begin(), addr.end()) != addr.end();
}

bool Gen::hbm_ap(Ap& a, Dtype dt, uint32_t np, uint32_t n, bool is_dst) {
  a = Ap{};
  a.mem = Buffer::hbm;
  a.dtype = dt;
  a.num_part = np;
  a.size = g_.shape(n);
  a.stride = g_.strides(a.size, !is_dst);
  int64_t lo = 0, hi = 0;  // element span of one row, relative to its base
  for (int d = 0; d < 4; ++d) {
    const int64_t span = int64_t{a.stride[d]} * (int64_t{a.size[d]} - 1);
    (span < 0 ? lo : hi) += span;
  }
  const int64_t row = hi - lo + 1;
  const unsigned kind = below(10);
  int64_t ps;
  if (!is_dst && kind == 0) ps = 0;                        // every row the same (broadcast)
  else if (!is_dst && kind == 1) ps = below(row);           // rows overlapping
  else if (kind < 6) ps = row;                              // dense rows
  else ps = row + below(48);                                // gaps between rows
  if (chance(20)) ps = -ps;
  if (ps > INT32_MAX / 2) return false;
  a.part_stride = static_cast<int32_t>(ps);
  const int64_t pspan = ps * (int64_t{np} - 1);
  const int64_t first = -(lo + std::min<int64_t>(0, pspan));
  const int64_t last = static_cast<int64_t>(d_.hbm_bytes / isa::dtype_bytes(dt)) - 1 - (hi + std::max<int64_t>(0, pspan));
  if (first > last) return false;
  a.offset = static_cast<uint64_t>(first + static_cast<int64_t>(rng_() % uint64_t(last - first + 1))) * isa::dtype_bytes(dt);
  return true;
}

bool Gen::make_dma(Insn& i) {
  i.opcode = Opcode::dma_copy;
  i.engine = Engine::dma;
  i.dma_queue = queues_[below(queues_.size())];
  const unsigned dir = below(100);
  const bool src_hbm = dir < 40 || dir >= 85, dst_hbm = (dir >= 40 && dir < 70) || dir >= 85;
  const uint32_t np = parts();
  const uint32_t n = free_count(opt_.max_free);
  auto side = [&](Ap& a, bool hbm, bool is_dst) {
    const Dtype dt = dtype();
    if (hbm) return hbm_ap(a, dt, np, n, is_dst);
    return lane_ap(a, Buffer::sbuf, dt, start_for(np), np, n, !is_dst);
  };
  if (!side(i.src0, src_hbm, false)) return false;
  if (chance(5) && !src_hbm && !dst_hbm) {
    i.dst = i.src0;  // in place (a cast between the 16-bit types, or a copy onto itself)
    if (isa::dtype_bytes(i.src0.dtype) == 2) i.dst.dtype = dtype() == Dtype::fp16 ? Dtype::fp16 : Dtype::bf16;
  } else if (!side(i.dst, dst_hbm, true)) {
    return false;
  }
  return !repeats(i.dst);
}

bool Gen::make_reduce(Insn& i, uint32_t sp, uint32_t np) {
  static constexpr AluOp kOps[] = {AluOp::add,         AluOp::multiply,   AluOp::max,        AluOp::min,
                                   AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor};
  i.op0 = kOps[below(std::size(kOps))];
  const std::optional<Dtype> one = isa::is_bitvec(i.op0) ? std::optional<Dtype>(int_dtype()) : std::nullopt;
  if (!lane_ap(i.src0, lane_mem(25), dtype_or(one), sp, np, free_count(opt_.max_free), true)) return false;
  i.red_axes = 1 + below(4);
  uint64_t outer = 1;
  for (unsigned k = i.red_axes; k < 4; ++k) outer *= i.src0.size[k];
  if (outer == ap_free_elems(i.src0) && chance(30)) {
    i.dst = i.src0;  // one-element groups, in place
    return true;
  }
  return lane_ap(i.dst, lane_mem(25), dtype_or(one), sp, np, static_cast<uint32_t>(outer), false);
}

bool Gen::make_lane(Kind k, Insn& i) {
  static constexpr Opcode kOp[] = {Opcode::dma_copy,      Opcode::tensor_tensor, Opcode::tensor_scalar,
                                   Opcode::tensor_copy,   Opcode::memset,        Opcode::tensor_reduce,
                                   Opcode::activation};
  i.opcode = kOp[static_cast<int>(k)];
  i.engine = k == Kind::act ? Engine::act : Engine::dve;
  const uint32_t np = parts(), sp = start_for(np);
  if (k == Kind::reduce) return make_reduce(i, sp, np) && !repeats(i.dst);
  const uint32_t n = free_count(opt_.max_free);
  if (k == Kind::memset) {
    i.imm0 = scalar_bits();
    return lane_ap(i.dst, lane_mem(25), dtype(), sp, np, n, false) && !repeats(i.dst);
  }
  // The ops first: a bitvec op makes every operand one integer dtype, and no arithmetic op
  // shares a tensor_scalar with it.
  if (k == Kind::tt) i.op0 = alu_op();
  if (k == Kind::ts) {
    i.op0 = chance(10) ? AluOp::bypass : alu_op();
    i.op1 = chance(25) ? AluOp::bypass : alu_op();
    if (isa::is_bitvec(i.op0) != isa::is_bitvec(i.op1)) (isa::is_bitvec(i.op0) ? i.op1 : i.op0) = AluOp::bypass;
  }
  const bool bits = isa::is_bitvec(i.op0) || (k == Kind::ts && isa::is_bitvec(i.op1));
  const std::optional<Dtype> one = bits ? std::optional<Dtype>(int_dtype()) : std::nullopt;
  if (!lane_ap(i.src0, lane_mem(25), dtype_or(one), sp, np, n, true)) return false;
  if (k == Kind::tt) {
    const Buffer m1 = i.src0.mem == Buffer::psum ? Buffer::sbuf : lane_mem(25);
    if (chance(15)) {
      i.src1 = i.src0;  // x op x
    } else if (!lane_ap(i.src1, m1, dtype_or(one), sp, np, n, true)) {
      return false;
    }
  }
  if (chance(15)) {
    i.dst = (k == Kind::tt && chance(50)) ? i.src1 : i.src0;  // in place, maybe as the other 16-bit type
    if (!bits && isa::dtype_bytes(i.dst.dtype) == 2 && chance(50))
      i.dst.dtype = i.dst.dtype == Dtype::bf16 ? Dtype::fp16 : Dtype::bf16;
  } else if (!lane_ap(i.dst, lane_mem(25), dtype_or(one), sp, np, n, false)) {
    return false;
  }
  if (repeats(i.dst)) return false;
  if (k == Kind::ts) {
    i.rev0 = chance(50);
    i.rev1 = chance(50);
    i.imm0 = bits ? bitvec_imm(i.op0) : scalar_bits();
    i.imm1 = bits ? bitvec_imm(i.op1) : scalar_bits();
    i.s0_vec = chance(50);
    i.s1_vec = chance(50);
    if (i.s0_vec) sref(i.s0, dtype_or(one), sp);
    if (i.s1_vec) sref(i.s1, dtype_or(one), sp);
  } else if (k == Kind::act) {
    i.func = chance(25) ? ActFunc::copy : isa::kActFuncValues[below(isa::kActFuncValues.size())];
    i.imm0 = scalar_bits();
    i.imm1 = chance(20) ? 0x80000000u : scalar_bits();
    i.s0_vec = chance(40);
    i.s1_vec = chance(40);
    if (i.s0_vec) sref(i.s0, Dtype::fp32, sp);
    if (i.s1_vec) sref(i.s1, dtype(), sp);
    if (chance(35)) {
      Ap& r = i.dst2;
      if (!lane_ap(r, lane_mem(30), dtype(), sp, np, 1, false)) return false;
      // apart from the data and the result (the order of those writes is not the ISA's business)
      if (ap_box(r).overlaps(ap_box(i.dst)) || ap_box(r).overlaps(ap_box(i.src0))) return false;
    }
  }
  return true;
}

bool Gen::make_ls(Insn& i) {
  i.opcode = Opcode::load_stationary;
  i.engine = Engine::pe;
  const uint32_t k = parts();
  const uint32_t m = chance(30) ? P_ : 1 + below(P_);
  const Dtype dt = float_dtype();
  if (!lane_ap(i.src0, Buffer::sbuf, dt, start_for(k), k, m, true)) return false;
  loaded_ = true;
  k_ = k;
  if (m != m_) group_left_ = 0;
  m_ = m;
  sdt_ = dt;
  return true;
}

bool Gen::make_mm(Insn& i) {
  if (!loaded_) return false;
  i.opcode = Opcode::multiply_moving;
  i.engine = Engine::pe;
  const Dtype mdt = sdt_ == Dtype::fp32 ? Dtype::fp32 : (chance(50) ? Dtype::bf16 : Dtype::fp16);
  const uint32_t bank = static_cast<uint32_t>(pr_.psum_bank_bytes / 4);
  const bool next_in_group = group_left_ > 0;
  if (next_in_group) {
    i.dst = group_dst_;  // the next multiply of an accumulation group
    i.acc = true;
  } else {
    const uint32_t n = free_count(std::min<uint32_t>(bank, opt_.max_free));
    Ap& d = i.dst;
    d.mem = Buffer::psum;
    d.dtype = Dtype::fp32;
    d.num_part = m_;
    d.start_part = start_for(m_);
    d.size = g_.shape(n);
    int64_t span = 1;
    for (int q = 0; q < 4; ++q) {
      d.stride[q] = static_cast<int32_t>(span);
      span *= d.size[q];
    }
    const uint64_t banks = pr_.psum_bytes / pr_.psum_bank_bytes;
    d.offset = below(banks) * pr_.psum_bank_bytes + 4ull * below(bank - n + 1);
    i.acc = chance(15);  // onto whatever the bank holds
    if (chance(45)) {
      group_dst_ = d;
      group_left_ = 1 + below(5);
    }
  }
  if (!lane_ap(i.src0, Buffer::sbuf, mdt, start_for(k_), k_, static_cast<uint32_t>(ap_free_elems(i.dst)), true))
    return false;
  if (next_in_group) --group_left_;
  return true;
}

bool Gen::make(Kind k, Insn& i) {
  i = Insn{};
  i.dma_queue = queues_[below(queues_.size())];
  bool ok = false;
  switch (k) {
    case Kind::dma: ok = make_dma(i); break;
    case Kind::ls: ok = make_ls(i); break;
    case Kind::mm: ok = make_mm(i); break;
    default: ok = make_lane(k, i); break;
  }
  if (!ok) return false;
  try {
    validate_insn(i, pr_, d_.hbm_bytes);
    if (i.opcode == Opcode::multiply_moving) validate_pe_pair(k_, m_, sdt_, i);
  } catch (const SimError&) {
    return false;
  }
  return true;
}

void Gen::add_data(Kind k) {
  // A failed draw must leave the tensor engine's state as it was.
  const bool loaded = loaded_;
  const uint32_t sk = k_, sm = m_;
  const Dtype sd = sdt_;
  const unsigned gl = group_left_;
  for (int tries = 0; tries < 40; ++tries) {
    Insn i;
    if (!make(k, i)) {
      loaded_ = loaded, k_ = sk, m_ = sm, sdt_ = sd, group_left_ = gl;
      continue;
    }
    Step s = step(Step::Kind::data, Program::stream_index(i.engine, i.dma_queue));
    s.insn = i;
    d_.steps.push_back(s);
    return;
  }
}

// A semaphore episode: updates of a fresh semaphore on sem_waits (one stream applying 1-3 ops of
// any kind in program order, or 2-3 streams each one add-like op: either way the final value is
// fixed), or a wait for the final value of an earlier episode, on a sem_wait or on the next data
// instruction of a stream.
void Gen::sync() {
  if (d_.episodes > 0 && chance(55)) {
    Step s = step(Step::Kind::wait, below(ns_));
    s.wait = wait_on(below(d_.episodes));
    s.on_next = s.stream != static_cast<unsigned>(StreamKind::pool) &&
                s.stream != static_cast<unsigned>(StreamKind::sp) && chance(50);
    d_.steps.push_back(s);
    return;
  }
  if (kFirstSyncSemaphore + d_.episodes >= kNumSemaphores - 64) return;  // the rest for assemble()'s tails
  const bool one = chance(50);
  const unsigned updates = one ? 1 + below(3) : 2 + below(2);
  const unsigned first = below(ns_);
  for (unsigned u = 0; u < updates; ++u) {
    Step s = step(Step::Kind::update, one ? first : below(ns_));
    s.episode = d_.episodes;
    s.op = static_cast<SemOp>(1 + below(one ? 5 : 4));
    s.val = chance(70) ? below(9) : static_cast<uint32_t>(rng_());
    if (d_.episodes > 0 && chance(35)) s.wait = wait_on(below(d_.episodes));  // chained on an earlier one
    d_.steps.push_back(s);
  }
  ++d_.episodes;
}

Draft Gen::run() {
  // The Program's memories: HBM, the SBUF window, the DMA queues.
  d_.hbm_bytes = (P_ <= 16 ? 16384u : 131072u) << below(2);
  sbuf_win_ = pr_.sbuf_bytes <= 8192 ? pr_.sbuf_bytes : std::min<uint64_t>(pr_.sbuf_bytes, 4096u << below(4));
  sbuf_lo_ = chance(25) ? below((pr_.sbuf_bytes - sbuf_win_) / 64 + 1) * 64 : 0;
  const unsigned nq = static_cast<unsigned>(pr_.dma_queues);
  const unsigned qk = below(10);
  if (qk < 3) {
    queues_ = {below(nq)};
  } else if (qk < 6) {
    queues_ = {below(nq), below(nq)};
  } else {
    for (unsigned q = 0; q < nq; ++q) queues_.push_back(q);
  }

  const Weights& w = opt_.weights;
  const unsigned weights[] = {w.dma_copy, w.tensor_tensor, w.tensor_scalar, w.tensor_copy, w.memset,
                              w.tensor_reduce, w.activation, w.load_stationary, w.multiply_moving, w.sync};
  unsigned total = 0;
  for (unsigned x : weights) total += x;
  if (total == 0) throw std::invalid_argument("program generator: every instruction weight is 0");
  const unsigned n = opt_.min_insns + below(opt_.max_insns - std::min(opt_.max_insns, opt_.min_insns) + 1);
  for (step_ = 0; step_ < n; ++step_) {
    Kind k = Kind::dma;
    if (step_ >= 3 || w.dma_copy == 0) {  // the first steps fill some SBUF from HBM
      unsigned r = below(total), c = 0;
      for (; c + 1 < static_cast<unsigned>(Kind::count) && r >= weights[c]; ++c) r -= weights[c];
      k = static_cast<Kind>(c);
    }
    if (k == Kind::sync)
      sync();
    else if (k == Kind::mm && group_left_ == 0 && (!loaded_ || chance(15)) && w.load_stationary > 0)
      add_data(Kind::ls);
    else
      add_data(k);
  }
  d_.drawn = n;
  d_.hbm = tb::random_bytes(rng_, d_.hbm_bytes);
  return std::move(d_);
}

// ---- assembly -------------------------------------------------------------------------------

struct Wait {
  unsigned sem = 0;
  SemCond cond = SemCond::none;
  uint32_t val = 0;
};

// A sem_wait to insert into stream `stream` before the scheduler's instruction `pos`.
struct Insert {
  unsigned stream;
  size_t pos;
  Instruction in;
};

class Asm {
 public:
  Asm(const Preset& pr, const Draft& d)
      : pr_(pr),
        d_(d),
        rng_(d.seed * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull),
        sched_(Scheduler::for_preset(pr)),
        ns_(kNumEngineStreams + static_cast<unsigned>(pr.dma_queues)),
        data_pos_(ns_) {}

  Program run();

 private:
  uint32_t below(uint64_t n) { return n ? static_cast<uint32_t>(rng_() % n) : 0; }
  bool chance(unsigned pct) { return below(100) < pct; }
  unsigned sem_of(unsigned episode) const { return kFirstSyncSemaphore + episode; }
  Wait wait_for(unsigned sem, uint32_t final_value, SemCond cond, uint32_t r) const;
  Wait wait_of(const SemWait& w) const {
    if (!w.has) return {};
    return wait_for(sem_of(w.episode), finals_.at(w.episode), w.cond, w.r);
  }
  Instruction sem_wait(unsigned stream, const Wait& w, unsigned upd_sem, SemOp op, uint32_t val, uint32_t loc) const;
  void rewrite(std::vector<std::vector<Instruction>>& s);
  std::vector<std::vector<Instruction>> merge(std::vector<std::vector<Instruction>> s) const;

  const Preset& pr_;
  const Draft& d_;
  std::mt19937_64 rng_;
  Scheduler sched_;
  unsigned ns_;
  std::vector<uint32_t> finals_;  // per episode, the value its semaphore ends with
  // per stream, the scheduler's position of each data instruction (completion index k -> position)
  std::vector<std::vector<uint32_t>> data_pos_;
  std::vector<Insert> inserts_;
  std::vector<std::pair<std::pair<unsigned, uint32_t>, Wait>> overrides_;  // (stream, position) -> wait
  unsigned next_sem_ = 0;  // the tails' semaphores start after the episodes'
};

Wait Asm::wait_for(unsigned sem, uint32_t f, SemCond cond, uint32_t r) const {
  Wait w{sem, SemCond::eq, f};
  switch (cond) {
    case SemCond::ne: w.cond = cond, w.val = f + 1 + std::min(r, 0xFFFFFFFEu); break;
    case SemCond::ge: w.cond = cond, w.val = f - std::min(r, f); break;
    case SemCond::gt: if (f > 0) w.cond = cond, w.val = f - 1 - std::min(r, f - 1); break;
    case SemCond::le: w.cond = cond, w.val = f + std::min(r, 0xFFFFFFFFu - f); break;
    case SemCond::lt: if (f < 0xFFFFFFFFu) w.cond = cond, w.val = f + 1 + std::min(r, 0xFFFFFFFEu - f); break;
    default: break;
  }
  if (!sem_cond_holds(w.cond, f, w.val))
    throw std::logic_error(fmt::format("program generator: wait S[{}] {} {} does not hold on {}", sem,
                                       isa::to_string(w.cond), w.val, f));
  return w;
}

Instruction Asm::sem_wait(unsigned stream, const Wait& w, unsigned upd_sem, SemOp op, uint32_t val, uint32_t loc) const {
  Insn i{};
  i.opcode = Opcode::sem_wait;
  const Stream proto = make_streams(static_cast<unsigned>(pr_.dma_queues))[stream];
  i.engine = proto.engine;
  i.dma_queue = proto.queue;
  i.wait_sem = w.sem;
  i.wait_cond = w.cond;
  i.wait_val = w.val;
  i.upd_sem = op == SemOp::none ? 0 : upd_sem;
  i.upd_op = op;
  i.upd_val = val;
  return Instruction{i, loc};
}

void Asm::rewrite(std::vector<std::vector<Instruction>>& s) {
  for (const auto& [at, w] : overrides_) {
    Insn& in = s[at.first][at.second].insn;
    in.wait_sem = w.sem, in.wait_cond = w.cond, in.wait_val = w.val;
  }
  // The completion indices some wait needs exactly (the scheduler's waits: S[p] >= (k+1)*weight).
  std::vector<std::vector<bool>> target(ns_);
  std::vector<int64_t> last(ns_, -1);
  for (unsigned p = 0; p < ns_; ++p) target[p].assign(data_pos_[p].size(), false);
  const auto weight = [&](unsigned p) { return p < kNumEngineStreams ? 1u : static_cast<uint32_t>(pr_.dma_engines); };
  for (const auto& st : s)
    for (const auto& in : st) {
      const Insn& i = in.insn;
      if (i.wait_cond != SemCond::ge || i.wait_sem >= ns_) continue;
      const uint32_t k = i.wait_val / weight(i.wait_sem) - 1;
      target[i.wait_sem].at(k) = true;
      last[i.wait_sem] = std::max<int64_t>(last[i.wait_sem], k);
    }
  std::vector<std::pair<unsigned, Instruction>> tails;
  for (unsigned p = 0; p < ns_; ++p) {
    for (uint32_t k = 0; k < data_pos_[p].size(); ++k) {
      Insn& i = s[p][data_pos_[p][k]].insn;
      if (static_cast<int64_t>(k) > last[p] && chance(50) && next_sem_ < kNumSemaphores) {
        // Nothing waits on this count any more: any update of a semaphore of its own, waited for
        // at the end of some stream.
        i.upd_sem = next_sem_++;
        i.upd_op = static_cast<SemOp>(1 + below(5));
        i.upd_val = chance(70) ? below(9) : static_cast<uint32_t>(rng_());
        i.upd_when = chance(50) ? SemWhen::read : SemWhen::complete;
        uint32_t v = 0;
        for (unsigned f = 0; f < sem_update_fires(i, pr_); ++f) v = sem_apply(i.upd_op, v, i.upd_val);
        const unsigned to = below(ns_);
        tails.push_back({to, sem_wait(to, wait_for(i.upd_sem, v, static_cast<SemCond>(1 + below(6)), below(5)), 0,
                                      SemOp::none, 0, d_.drawn)});
        continue;
      }
      // The same count by another op; fired at read time when no wait needs this instruction
      // complete and its stream runs one instruction at a time.
      const unsigned v = below(10);
      if (v >= 6) {
        i.upd_op = v < 8 ? SemOp::add : SemOp::sub;
        i.upd_val = v < 8 ? 1u : 0xFFFFFFFFu;
      }
      if (p != static_cast<unsigned>(StreamKind::pe) && !target[p][k] && chance(25)) i.upd_when = SemWhen::read;
    }
  }
  for (auto& st : s)
    for (auto& in : st) {
      Insn& i = in.insn;
      if (i.wait_cond == SemCond::ge && i.wait_sem < ns_ && i.wait_val > 0 && chance(25))
        i.wait_cond = SemCond::gt, --i.wait_val;
    }
  for (auto& [to, in] : tails) inserts_.push_back({to, SIZE_MAX, in});
}

std::vector<std::vector<Instruction>> Asm::merge(std::vector<std::vector<Instruction>> s) const {
  std::vector<std::vector<Instruction>> out(ns_);
  std::vector<std::vector<const Insert*>> by(ns_);
  for (const Insert& x : inserts_) by[x.stream].push_back(&x);  // generation order within a stream
  for (unsigned p = 0; p < ns_; ++p) {
    size_t k = 0;
    for (size_t pos = 0; pos <= s[p].size(); ++pos) {
      while (k < by[p].size() && by[p][k]->pos <= pos) out[p].push_back(by[p][k++]->in);
      if (pos < s[p].size()) out[p].push_back(s[p][pos]);
    }
    while (k < by[p].size()) out[p].push_back(by[p][k++]->in);
  }
  return out;
}

Program Asm::run() {
  if (d_.preset != pr_.name) throw SimError(fmt::format("a draft for preset {} assembled for {}", d_.preset, pr_.name));
  if (kFirstSyncSemaphore + d_.episodes > kNumSemaphores) throw SimError("a draft with more episodes than semaphores");
  finals_.assign(d_.episodes, 0);
  for (const Step& st : d_.steps)
    if (st.kind == Step::Kind::update) finals_.at(st.episode) = sem_apply(st.op, finals_[st.episode], st.val);
  next_sem_ = kFirstSyncSemaphore + d_.episodes;
  std::vector<std::vector<Wait>> pending(ns_);  // per stream, waits for its next data instruction
  for (const Step& st : d_.steps) {
    if (st.stream >= ns_) throw SimError(fmt::format("a step on stream {} of {}", st.stream, ns_));
    switch (st.kind) {
      case Step::Kind::data: {
        const unsigned s = st.stream;
        const size_t before = sched_.stream(s).size();
        const uint32_t pos = sched_.add(s, st.insn, st.origin, accesses(st.insn));
        data_pos_[s].push_back(pos);
        bool free = sched_.stream(s)[pos].insn.wait_cond == SemCond::none;
        for (const Wait& w : pending[s]) {
          if (free) {
            overrides_.push_back({{s, pos}, w});
            free = false;
          } else {  // the instruction has its wait: this one goes on a sem_wait before it
            inserts_.push_back({s, before, sem_wait(s, w, 0, SemOp::none, 0, st.origin)});
          }
        }
        pending[s].clear();
        break;
      }
      case Step::Kind::update:
        inserts_.push_back({st.stream, sched_.stream(st.stream).size(),
                            sem_wait(st.stream, wait_of(st.wait), sem_of(st.episode), st.op, st.val, st.origin)});
        break;
      case Step::Kind::wait:
        if (st.on_next)
          pending[st.stream].push_back(wait_of(st.wait));
        else
          inserts_.push_back({st.stream, sched_.stream(st.stream).size(),
                              sem_wait(st.stream, wait_of(st.wait), 0, SemOp::none, 0, st.origin)});
        break;
    }
  }

  std::vector<std::vector<Instruction>> s = sched_.take();
  rewrite(s);
  s = merge(std::move(s));

  Program prog;
  prog.kernel = "random";
  prog.preset = pr_.name;
  prog.streams = make_streams(static_cast<unsigned>(pr_.dma_queues));
  for (unsigned p = 0; p < ns_; ++p) prog.streams[p].insns = std::move(s[p]);
  prog.hbm_bytes = d_.hbm_bytes;
  HbmTensor t;
  t.name = "hbm";
  t.dtype = Dtype::fp32;
  t.shape = {static_cast<int64_t>(d_.hbm_bytes / 4)};
  t.offset = 0;
  t.bytes = d_.hbm_bytes;
  t.role = TensorRole::constant;
  t.init = d_.hbm;
  if (t.init.size() != t.bytes) throw SimError("a draft whose HBM contents are not hbm_bytes long");
  prog.hbm_tensors.push_back(std::move(t));
  for (uint32_t k = 0; k <= d_.drawn; ++k) prog.locations.push_back({fmt::format("random seed {} step", d_.seed), k});
  validate_program(prog, pr_);
  return prog;
}

}  // namespace

std::vector<Access> accesses(const Insn& i) {
  std::vector<Access> acc;
  const isa::InsnInfo* info = isa::find_info(i.opcode);
  if (!info) return acc;
  for (unsigned k = 0; k < info->num_operands; ++k) {
    const std::string f = info->operands[k].field;
    if (f == "dst") acc.push_back({region_of(i.dst), true});
    if (f == "dst2" && i.dst2.num_part) acc.push_back({region_of(i.dst2), true});
    if (f == "src0") acc.push_back({region_of(i.src0), false});
    if (f == "src1") acc.push_back({region_of(i.src1), false});
    if (f == "s0" && i.s0_vec) acc.push_back({region_of(i.s0, i.src0.num_part), false});
    if (f == "s1" && i.s1_vec) acc.push_back({region_of(i.s1, i.src0.num_part), false});
  }
  if (i.opcode == Opcode::multiply_moving && i.acc) acc.push_back({region_of(i.dst), false});
  return acc;
}

Draft draw(const Preset& preset, uint64_t seed, const GenOptions& opt) { return Gen(preset, seed, opt).run(); }

Program assemble(const Preset& preset, const Draft& draft) { return Asm(preset, draft).run(); }

Program generate(const Preset& preset, uint64_t seed, const GenOptions& opt) {
  const Draft d = draw(preset, seed, opt);
  try {
    return assemble(preset, d);
  } catch (const SimError& e) {
    throw std::logic_error(fmt::format("program generator, preset {} seed {}: {}", preset.name, seed, e.what()));
  }
}

}  // namespace ncore::regress
