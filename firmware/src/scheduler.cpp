// Dependency tracking and semaphore insertion; see scheduler.hpp.
#include "ncore/scheduler.hpp"

#include <algorithm>

#include "ncore/error.hpp"

namespace ncore {
namespace {

// floor(a / b) for b > 0.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

// Does some row of `a` overlap some row of `b`? Both have rows of at most `step` bytes,
// `step` apart. Rows i of a and j of b overlap when, with d = b.lo - a.lo and k = j - i,
// -seg_b < d + k*step < seg_a, for some k in [-(rows_a-1), rows_b-1].
bool rows_overlap(const Region& a, const Region& b) {
  const int64_t step = a.row_step;
  const int64_t d = b.box.lo - a.box.lo;
  const int64_t k_lo = std::max<int64_t>(floor_div(-b.seg - d, step) + 1, -(int64_t{a.rows} - 1));
  const int64_t k_hi = std::min<int64_t>(floor_div(a.seg - d - 1, step), int64_t{b.rows} - 1);
  return k_lo <= k_hi;
}

}  // namespace

Region region_of(const isa::Ap& ap) {
  Region g;
  g.mem = ap.mem;
  g.box = ap_box(ap);
  if (g.box.empty()) return g;
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  // Merge the used free dimensions, innermost first, into runs.
  int64_t run_size = 0, run_stride = 0;
  int runs = 0;
  for (int d = 0; d < 4; ++d) {
    if (ap.size[d] == 1) continue;
    if (runs == 0) {
      run_size = ap.size[d];
      run_stride = ap.stride[d];
      runs = 1;
    } else if (runs == 1 && run_stride * run_size == ap.stride[d]) {
      run_size *= ap.size[d];
    } else {
      runs = 2;
    }
  }
  const bool one_run = runs == 0 || (runs == 1 && run_stride == 1);
  const int64_t run_elems = runs == 0 ? 1 : run_size;
  if (ap.mem == isa::Buffer::hbm) {
    if (!one_run) return g;
    const int64_t seg = run_elems * esz;
    const int64_t step = int64_t{ap.part_stride} * esz;
    if (ap.num_part == 1 || (step > 0 && step <= seg)) {
      g.dense = true;
    } else if (step > 0) {
      g.rows = ap.num_part;
      g.row_step = step;
      g.seg = seg;
    }
  } else {
    g.dense = one_run;
  }
  return g;
}

Region region_of(const isa::Sref& s, uint32_t num_part) {
  Region g;
  g.mem = s.mem;
  g.box.p_lo = s.start_part;
  g.box.p_hi = s.start_part + num_part;
  g.box.lo = static_cast<int64_t>(s.offset);
  g.box.hi = g.box.lo + isa::dtype_bytes(s.dtype);
  g.dense = true;
  return g;
}

bool regions_overlap(const Region& a, const Region& b) {
  if (a.mem != b.mem || !a.box.overlaps(b.box)) return false;
  if (a.rows > 0 && b.rows > 0 && a.row_step == b.row_step && a.seg <= a.row_step && b.seg <= b.row_step)
    return rows_overlap(a, b);
  return true;
}

bool region_covers(const Region& outer, const Region& inner) {
  if (!outer.dense || outer.mem != inner.mem || inner.box.empty()) return false;
  const Box& o = outer.box;
  const Box& i = inner.box;
  return o.p_lo <= i.p_lo && i.p_hi <= o.p_hi && o.lo <= i.lo && i.hi <= o.hi;
}

Scheduler::Scheduler(std::vector<uint32_t> weights, std::vector<bool> ordered)
    : w_(std::move(weights)), ordered_(std::move(ordered)) {
  const size_t n = w_.size();
  if (n == 0 || n > kNumSemaphores) throw SimError("scheduler: stream count out of range");
  if (ordered_.empty()) ordered_.assign(n, false);
  if (ordered_.size() != n) throw SimError("scheduler: one ordered flag per stream expected");
  out_.resize(n);
  done_.assign(n, 0);
  vcs_.resize(n);
  cur_.assign(n, std::vector<uint32_t>(n, 0));
  cand_.assign(n, -1);
}

Scheduler Scheduler::for_preset(const Preset& preset) {
  std::vector<uint32_t> w(kNumEngineStreams + preset.dma_queues, 1);
  for (size_t i = kNumEngineStreams; i < w.size(); ++i) w[i] = static_cast<uint32_t>(preset.dma_engines);
  std::vector<bool> ordered(w.size(), false);
  ordered[static_cast<size_t>(StreamKind::pe)] = true;
  return Scheduler(std::move(w), std::move(ordered));
}

std::vector<std::vector<Instruction>> Scheduler::take() {
  std::vector<std::vector<Instruction>> o(w_.size());
  o.swap(out_);
  return o;
}

template <class F>
void Scheduler::visit(const Region& q, F&& f) {
  if (q.box.empty()) return;
  const uint64_t stamp = ++stamp_;
  auto consider = [&](std::vector<Ref>& v) {
    for (size_t k = 0; k < v.size();) {
      const Ref ref = v[k];
      Record& r = recs_[ref.id];
      if (!r.alive || r.gen != ref.gen) {  // stale: drop from the bucket
        v[k] = v.back();
        v.pop_back();
        continue;
      }
      ++k;
      if (r.seen == stamp) continue;
      r.seen = stamp;
      f(r, ref.id);
    }
  };
  Space& sp = spaces_[static_cast<int>(q.mem) % 3];
  const int64_t b0 = q.box.lo >> kBucketShift, b1 = (q.box.hi - 1) >> kBucketShift;
  if (b1 - b0 + 1 > kMaxSpan) {
    // A wide query: scanning every record of the space is cheaper than every bucket.
    for (uint32_t id = 0; id < recs_.size(); ++id) {
      Record& r = recs_[id];
      if (!r.alive || r.r.mem != q.mem || r.seen == stamp) continue;
      r.seen = stamp;
      f(r, id);
    }
    return;
  }
  consider(sp.large);
  for (int64_t b = b0; b <= b1; ++b) {
    auto it = sp.buckets.find(b);
    if (it != sp.buckets.end()) consider(it->second);
  }
}

void Scheduler::kill(uint32_t id) {
  Record& r = recs_[id];
  if (!r.alive) return;
  r.alive = false;
  free_.push_back(id);
  --stats_.live_records;
  ++stats_.dropped;
}

void Scheduler::insert(const Region& g, bool write, unsigned stream, uint32_t idx) {
  if (g.box.empty()) return;
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(recs_.size());
    recs_.emplace_back();
  }
  Record& r = recs_[id];
  r.r = g;
  r.idx = idx;
  r.gen++;
  r.seen = 0;
  r.stream = static_cast<uint16_t>(stream);
  r.write = write;
  r.alive = true;
  const Ref ref{id, r.gen};
  Space& sp = spaces_[static_cast<int>(g.mem) % 3];
  const int64_t b0 = g.box.lo >> kBucketShift, b1 = (g.box.hi - 1) >> kBucketShift;
  if (b1 - b0 + 1 > kMaxSpan) {
    sp.large.push_back(ref);
  } else {
    for (int64_t b = b0; b <= b1; ++b) sp.buckets[b].push_back(ref);
  }
  ++stats_.live_records;
  stats_.peak_records = std::max(stats_.peak_records, stats_.live_records);
}

uint32_t Scheduler::add(unsigned stream, const isa::Insn& insn_in, uint32_t loc, const Access* acc, size_t n) {
  const size_t ns = w_.size();
  if (stream >= ns) throw SimError("scheduler: stream index out of range");
  ++stats_.instructions;

  // 1. The latest conflicting instruction of every stream; prune what this one makes redundant.
  std::fill(cand_.begin(), cand_.end(), -1);
  for (size_t a = 0; a < n; ++a) {
    const Access& x = acc[a];
    visit(x.region, [&](Record& r, uint32_t id) {
      if (!x.write && !r.write) {
        if (r.stream == stream && region_covers(x.region, r.r)) kill(id);
        return;
      }
      if (!regions_overlap(x.region, r.r)) return;
      ++stats_.conflicts;
      if (r.stream != stream || !ordered_[stream]) cand_[r.stream] = std::max<int64_t>(cand_[r.stream], r.idx);
      if (x.write && region_covers(x.region, r.r)) kill(id);
    });
  }

  // 2. Drop producers this stream already knows complete, then those implied by another producer.
  std::vector<uint32_t>& cur = cur_[stream];
  unsigned need[kNumSemaphores];
  unsigned nneed = 0;
  for (unsigned p = 0; p < ns; ++p) {
    if (cand_[p] < 0) continue;
    if (cur[p] > cand_[p]) {
      ++stats_.implied;
      continue;
    }
    need[nneed++] = p;
  }
  unsigned keep[kNumSemaphores];
  unsigned nkeep = 0;
  for (unsigned a = 0; a < nneed; ++a) {
    const unsigned p = need[a];
    bool implied = false;
    for (unsigned b = 0; b < nneed && !implied; ++b) {
      if (b == a) continue;
      const unsigned q = need[b];
      implied = vc_of(q, static_cast<uint32_t>(cand_[q]))[p] > cand_[p];
    }
    if (implied)
      ++stats_.implied;
    else
      keep[nkeep++] = p;
  }

  // 3. Waits: one per remaining producer; all but the last on inserted sem_waits.
  auto join = [&](unsigned p) {
    const uint32_t k = static_cast<uint32_t>(cand_[p]);
    const uint32_t* vc = vc_of(p, k);
    for (size_t q = 0; q < ns; ++q) cur[q] = std::max(cur[q], vc[q]);
    cur[p] = std::max(cur[p], k + 1);
  };
  auto set_wait = [&](isa::Insn& i, unsigned p) {
    i.wait_sem = p;
    i.wait_cond = isa::SemCond::ge;
    i.wait_val = (static_cast<uint32_t>(cand_[p]) + 1) * w_[p];
    ++stats_.waits;
  };
  for (unsigned a = 0; a + 1 < nkeep; ++a) {
    isa::Insn sw{};
    sw.opcode = isa::Opcode::sem_wait;
    sw.engine = insn_in.engine;
    sw.dma_queue = insn_in.dma_queue;
    set_wait(sw, keep[a]);
    sw.upd_sem = stream;
    sw.upd_op = isa::SemOp::none;
    out_[stream].push_back(Instruction{sw, loc});
    ++stats_.sem_waits;
    join(keep[a]);
  }
  isa::Insn insn = insn_in;
  insn.wait_sem = 0;
  insn.wait_cond = isa::SemCond::none;
  insn.wait_val = 0;
  if (nkeep > 0) {
    set_wait(insn, keep[nkeep - 1]);
    join(keep[nkeep - 1]);
  }
  insn.upd_sem = stream;
  insn.upd_op = isa::SemOp::inc;
  insn.upd_when = isa::SemWhen::complete;
  insn.upd_val = 0;
  const uint32_t pos = static_cast<uint32_t>(out_[stream].size());
  out_[stream].push_back(Instruction{insn, loc});
  const uint32_t k = done_[stream]++;
  if (done_[stream] == 0) throw SimError("scheduler: too many instructions on one stream");
  vcs_[stream].insert(vcs_[stream].end(), cur.begin(), cur.end());

  // 4. Record this instruction's accesses: writes, then reads not covered by them.
  for (size_t a = 0; a < n; ++a)
    if (acc[a].write) insert(acc[a].region, true, stream, k);
  for (size_t a = 0; a < n; ++a) {
    if (acc[a].write) continue;
    bool covered = false;
    for (size_t b = 0; b < n && !covered; ++b)
      covered = (acc[b].write || b < a) && region_covers(acc[b].region, acc[a].region);
    if (!covered) insert(acc[a].region, false, stream, k);
  }
  return pos;
}

}  // namespace ncore
