// See exec_check.hpp.
#include "exec_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/semaphores.hpp"
#include "nki/nki.hpp"

namespace fwtest {
namespace isa = ncore::isa;

namespace {

// Exact footprint: per (buffer, partition), merged byte intervals.
using Footprint = std::map<std::pair<int, uint32_t>, std::vector<std::pair<int64_t, int64_t>>>;

void add_ap(Footprint& f, const isa::Ap& ap) {
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  const bool hbm = ap.mem == isa::Buffer::hbm;
  ncore::ap_for_each(ap, [&](uint32_t p, uint64_t, int64_t addr) {
    f[{static_cast<int>(ap.mem), hbm ? 0u : ap.start_part + p}].emplace_back(addr, addr + esz);
  });
}

void add_sref(Footprint& f, const isa::Sref& s, uint32_t parts) {
  const int64_t esz = isa::dtype_bytes(s.dtype);
  for (uint32_t p = 0; p < parts; ++p)
    f[{static_cast<int>(s.mem), s.start_part + p}].emplace_back(static_cast<int64_t>(s.offset),
                                                               static_cast<int64_t>(s.offset) + esz);
}

void normalize(Footprint& f) {
  for (auto& kv : f) {
    auto& v = kv.second;
    std::sort(v.begin(), v.end());
    std::vector<std::pair<int64_t, int64_t>> m;
    for (const auto& r : v) {
      if (!m.empty() && r.first <= m.back().second)
        m.back().second = std::max(m.back().second, r.second);
      else
        m.push_back(r);
    }
    v.swap(m);
  }
}

bool intersect(const Footprint& a, const Footprint& b) {
  for (const auto& kv : a) {
    auto it = b.find(kv.first);
    if (it == b.end()) continue;
    const auto& x = kv.second;
    const auto& y = it->second;
    size_t i = 0, j = 0;
    while (i < x.size() && j < y.size()) {
      if (x[i].second <= y[j].first)
        ++i;
      else if (y[j].second <= x[i].first)
        ++j;
      else
        return true;
    }
  }
  return false;
}

}  // namespace

Execution execute(const ncore::Program& p, const ncore::Preset& preset, uint64_t seed) {
  Execution e;
  const size_t ns = p.streams.size();
  ncore::SemaphoreFile sem;
  std::vector<size_t> next(ns, 0);
  std::vector<std::deque<size_t>> inflight(ns);
  e.start.resize(ns);
  e.finish.resize(ns);
  for (size_t s = 0; s < ns; ++s) {
    e.start[s].assign(p.streams[s].insns.size(), 0);
    e.finish[s].assign(p.streams[s].insns.size(), 0);
  }
  std::mt19937_64 rng(seed);
  uint64_t t = 0;
  std::vector<std::pair<size_t, bool>> acts;  // (stream, start?)
  for (;;) {
    acts.clear();
    bool done = true;
    for (size_t s = 0; s < ns; ++s) {
      const auto& v = p.streams[s].insns;
      if (next[s] < v.size()) {
        done = false;
        const isa::Insn& i = v[next[s]].insn;
        if (sem.wait_holds(i)) acts.emplace_back(s, true);
      }
      if (!inflight[s].empty()) {
        done = false;
        acts.emplace_back(s, false);
      }
    }
    if (done) {
      e.completed = true;
      return e;
    }
    if (acts.empty()) {
      e.error = "deadlock:";
      for (size_t s = 0; s < ns; ++s)
        if (next[s] < p.streams[s].insns.size())
          e.error += fmt::format(" {}[{}] waits S[{}] (={})", p.streams[s].name, next[s],
                                 p.streams[s].insns[next[s]].insn.wait_sem,
                                 sem[p.streams[s].insns[next[s]].insn.wait_sem]);
      return e;
    }
    const auto a = acts[std::uniform_int_distribution<size_t>(0, acts.size() - 1)(rng)];
    ++t;
    const size_t s = a.first;
    if (a.second) {
      const size_t k = next[s]++;
      const isa::Insn& i = p.streams[s].insns[k].insn;
      e.start[s][k] = t;
      if (i.upd_when == isa::SemWhen::read) sem.fire_all(i, preset);
      if (i.opcode == isa::Opcode::sem_wait) {
        e.finish[s][k] = t;
        if (i.upd_when == isa::SemWhen::complete) sem.fire_all(i, preset);
      } else {
        inflight[s].push_back(k);
      }
    } else {
      const size_t k = inflight[s].front();
      inflight[s].pop_front();
      e.finish[s][k] = t;
      const isa::Insn& i = p.streams[s].insns[k].insn;
      if (i.upd_when == isa::SemWhen::complete) sem.fire_all(i, preset);
    }
  }
}

bool ordered_pair(const Execution& e, unsigned sa, uint32_t pa, unsigned sb, uint32_t pb) {
  if (sa == sb && sa == static_cast<unsigned>(ncore::StreamKind::pe)) return e.start[sa][pa] < e.start[sb][pb];
  return e.finish[sa][pa] < e.start[sb][pb];
}

std::vector<std::string> check_hazards(const ncore::Program& p, const Execution& e,
                                       const std::vector<std::pair<unsigned, uint32_t>>& order) {
  std::vector<Footprint> rd(order.size()), wr(order.size());
  for (size_t n = 0; n < order.size(); ++n) {
    const isa::Insn& i = p.streams[order[n].first].insns[order[n].second].insn;
    const isa::InsnInfo* info = isa::find_info(i.opcode);
    for (unsigned k = 0; info && k < info->num_operands; ++k) {
      const std::string f = info->operands[k].field;
      if (f == "dst") add_ap(wr[n], i.dst);
      if (f == "src0") add_ap(rd[n], i.src0);
      if (f == "src1") add_ap(rd[n], i.src1);
      if (f == "s0" && i.s0_vec) add_sref(rd[n], i.s0, i.src0.num_part);
      if (f == "s1" && i.s1_vec) add_sref(rd[n], i.s1, i.src0.num_part);
    }
    normalize(rd[n]);
    normalize(wr[n]);
  }
  std::vector<std::string> bad;
  for (size_t a = 0; a < order.size(); ++a)
    for (size_t b = a + 1; b < order.size(); ++b) {
      const bool conflict = intersect(wr[a], wr[b]) || intersect(wr[a], rd[b]) || intersect(rd[a], wr[b]);
      if (!conflict) continue;
      const auto [sa, pa] = order[a];
      const auto [sb, pb] = order[b];
      if (!ordered_pair(e, sa, pa, sb, pb))
        bad.push_back(fmt::format("{}[{}] (issued #{}) and {}[{}] (issued #{}) conflict but overlapped: finish {} >= "
                                  "start {}",
                                  p.streams[sa].name, pa, a, p.streams[sb].name, pb, b, e.finish[sa][pa],
                                  e.start[sb][pb]));
    }
  return bad;
}

std::string trace_error(const std::function<void(nki::Tracer&)>& body) {
  try {
    nki::trace("test", *ncore::find_preset("trn2"), body);
  } catch (const ncore::KernelError& e) {
    return e.what();
  }
  return "<no error>";
}

namespace {

Tiles make_tiles(nki::Tracer& t, const std::vector<Tile>& tiles, nki::Loc loc) {
  Tiles made;
  for (const Tile& x : tiles)
    made.push_back(x.buffer.kind == nki::BufferKind::hbm ? t.input(x.name, x.shape, x.dtype, loc)
                                                         : nki::nl::ndarray(x.shape, x.dtype, x.buffer, x.name, loc));
  return made;
}

}  // namespace

std::string call_error(const std::vector<Tile>& tiles, const std::function<void(const Tiles&)>& call) {
  return trace_error([&](nki::Tracer& t) { call(make_tiles(t, tiles, nki::Loc::here())); });
}

std::string alloc_error(const std::vector<Tile>& tiles, nki::Loc loc) {
  return trace_error([&](nki::Tracer& t) { make_tiles(t, tiles, loc); });
}

uint64_t count_opcode(const ncore::Program& p, isa::Opcode op) {
  uint64_t n = 0;
  for (const auto& s : p.streams)
    for (const auto& i : s.insns) n += i.insn.opcode == op;
  return n;
}

}  // namespace fwtest
