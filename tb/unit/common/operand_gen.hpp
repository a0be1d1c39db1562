// Random operands for the engine benches' instruction generators (vector, scalar and tensor
// engine, DMA): free-element counts, 1-4 dimensional shapes, strides (row-major, reversed,
// random, broadcast zeros, junk on size-1 dims), placement inside a partition, junk for the
// fields an engine does not use, and the byte sets that decide how a destination overlaps its
// sources.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"

namespace ncore::tb {

// The ISA names the instruction generators and the tests spell out.
using isa::ActFunc;
using isa::AluOp;
using isa::Ap;
using isa::Buffer;
using isa::Dtype;
using isa::Insn;
using isa::Opcode;

class ApGen {
 public:
  explicit ApGen(std::mt19937_64& rng) : rng_(rng) {}

  uint32_t below(uint64_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(unsigned pct) { return below(100) < pct; }
  isa::Dtype dtype() { return static_cast<isa::Dtype>(below(3)); }

  // Elements per partition: mostly short and medium rows, sometimes long ones.
  uint32_t free_count() {
    if (chance(3)) return 257 + below(1000);  // long rows (fit for 2-byte dtypes and few operands)
    switch (below(10)) {
      case 0: case 1: case 2: return 1 + below(8);
      case 3: case 4: case 5: case 6: return 9 + below(56);
      case 7: case 8: return 65 + below(128);
      default: return 193 + below(64);
    }
  }

  // sizes[0..3] with product n, in 1-4 dims, sometimes (shuffle_pct) with size-1 dims inside
  std::array<uint32_t, 4> shape(uint32_t n, unsigned shuffle_pct = 25) {
    std::array<uint32_t, 4> s{1, 1, 1, 1};
    const unsigned dims = 1 + below(4);
    uint32_t rem = n;
    for (unsigned d = 0; d + 1 < dims; ++d) {
      std::vector<uint32_t> div;
      for (uint32_t k = 1; k <= rem; ++k)
        if (rem % k == 0) div.push_back(k);
      s[d] = div[below(div.size())];
      rem /= s[d];
    }
    s[dims - 1] = rem;
    if (chance(shuffle_pct)) std::shuffle(s.begin(), s.end(), rng_);
    return s;
  }

  // Strides in elements for `sizes`; junk on size-1 dims. broadcast: a zero stride allowed.
  std::array<int32_t, 4> strides(const std::array<uint32_t, 4>& sz, bool broadcast) {
    std::array<int32_t, 4> st{};
    const unsigned kind = below(10);
    int64_t run = 1;
    for (int d = 0; d < 4; ++d) {
      if (kind < 4) st[d] = static_cast<int32_t>(run);                 // row-major
      else if (kind < 6) st[d] = -static_cast<int32_t>(run);           // reversed
      else {
        const int32_t m = static_cast<int32_t>(1 + below(d == 0 ? 4 : 40));
        st[d] = static_cast<int32_t>(below(2 * m + 1)) - m;            // random, incl. negative
        if (st[d] == 0 && !broadcast) st[d] = 1;
      }
      if (kind >= 4 && kind < 6 && chance(30)) st[d] = -st[d];         // mixed signs
      run *= sz[d];
    }
    if (broadcast && chance(15)) st[below(4)] = 0;
    for (int d = 0; d < 4; ++d)
      if (sz[d] == 1) st[d] = static_cast<int32_t>(below(2001)) - 1000;  // never used
    return st;
  }

  // A random offset that keeps the operand inside bytes [0, limit) of its partitions (false: it
  // cannot fit).
  bool place(isa::Ap& a, uint64_t limit) {
    const int64_t esz = isa::dtype_bytes(a.dtype);
    const int64_t elems = static_cast<int64_t>(limit) / esz;
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < 4; ++d) {
      const int64_t span = int64_t{a.stride[d]} * (int64_t{a.size[d]} - 1);
      (span < 0 ? lo : hi) += span;
    }
    const int64_t first = -lo, last = elems - 1 - hi;  // range of the base element
    if (first > last) return false;
    a.offset = static_cast<uint64_t>((first + static_cast<int64_t>(rng_() % uint64_t(last - first + 1))) * esz);
    return true;
  }

  // An operand in `mem` of `n` free elements over partitions [sp, sp + np), shaped and placed
  // at random inside bytes [0, limit).
  bool operand(isa::Ap& a, isa::Buffer mem, isa::Dtype dt, uint32_t sp, uint32_t np, uint32_t n, bool broadcast,
               uint64_t limit) {
    a = isa::Ap{};
    a.mem = mem;
    a.dtype = dt;
    a.start_part = sp;
    a.num_part = np;
    a.size = shape(n);
    a.stride = strides(a.size, broadcast);
    return place(a, limit);
  }

  // Every control field random: the semaphore fields (the sequencer's), the DMA queue and the ALU
  // fields, which an engine ignores where its instruction does not use them.
  void junk_control(isa::Insn& i, uint32_t dma_queues) {
    i.dma_queue = below(dma_queues);
    i.wait_sem = below(256);
    i.wait_cond = static_cast<isa::SemCond>(below(7));
    i.wait_val = static_cast<uint32_t>(rng_());
    i.upd_sem = below(256);
    i.upd_op = static_cast<isa::SemOp>(below(6));
    i.upd_when = static_cast<isa::SemWhen>(below(2));
    i.upd_val = static_cast<uint32_t>(rng_());
    i.op0 = static_cast<isa::AluOp>(below(6));
    i.op1 = static_cast<isa::AluOp>(below(6));
    i.rev0 = chance(50);
    i.rev1 = chance(50);
  }

  // Every field random: what an engine must ignore in a per-partition operand it does not read.
  void junk(isa::Sref& s) {
    s = {static_cast<isa::Buffer>(below(3)), dtype(), below(256), rng_() & 0xFFFFFFFFFFull};
  }

  // Every field random: what an engine must ignore in an operand its instruction does not use.
  void junk(isa::Ap& a) {
    a.mem = static_cast<isa::Buffer>(below(3));
    a.dtype = dtype();
    a.start_part = below(256);
    a.num_part = below(256);
    a.part_stride = static_cast<int32_t>(rng_());
    a.offset = rng_() & 0xFFFFFFFFFFull;
    for (auto& s : a.size) s = static_cast<uint32_t>(rng_());
    for (auto& s : a.stride) s = static_cast<int32_t>(rng_());
  }

 private:
  std::mt19937_64& rng_;
};

// What the engine benches' instruction generators share: the preset, a random stream of their own
// (from `seed`) and the operand generator drawing from it.
class InsnGenBase {
 public:
  std::mt19937_64& rng() { return rng_; }

 protected:
  InsnGenBase(const Preset& pr, uint64_t seed) : pr_(pr), rng_(seed), g_(rng_) {}

  uint32_t below(uint64_t n) { return g_.below(n); }
  bool chance(unsigned pct) { return g_.chance(pct); }

  const Preset& pr_;
  std::mt19937_64 rng_;
  ApGen g_;
};

// A hand-made operand over partitions [0, np) of `mem`: n1 rows of n0 elements, row-major and
// contiguous from byte `off` (the strides of unused dims are 0).
inline Ap rows_ap(Buffer mem, Dtype dt, uint64_t off, uint32_t np, uint32_t n0, uint32_t n1 = 1) {
  Ap a;
  a.mem = mem;
  a.dtype = dt;
  a.start_part = 0;
  a.num_part = np;
  a.offset = off;
  a.size = {n0, n1, 1, 1};
  a.stride = {1, n1 > 1 ? static_cast<int32_t>(n0) : 0, 0, 0};
  return a;
}

// A hand-made instruction of `engine`: `opcode` from src0 to dst, every other field zero.
inline Insn lane_insn(Opcode opcode, isa::Engine engine, const Ap& dst, const Ap& src0) {
  Insn i;
  i.opcode = opcode;
  i.engine = engine;
  i.dst = dst;
  i.src0 = src0;
  return i;
}

// Bytes of one partition (of `mem_bytes`) an operand touches, and whether it touches one twice.
inline std::vector<bool> touched_bytes(const isa::Ap& a, uint64_t mem_bytes, bool* repeats = nullptr) {
  std::vector<bool> b(mem_bytes, false);
  isa::Ap one = a;
  one.num_part = 1;
  const unsigned nb = isa::dtype_bytes(a.dtype);
  bool rep = false;
  ap_for_each(one, [&](uint32_t, uint64_t, int64_t addr) {
    for (unsigned k = 0; k < nb; ++k) {
      rep |= b[addr + k];
      b[addr + k] = true;
    }
  });
  if (repeats) *repeats = rep;
  return b;
}

inline bool disjoint(const std::vector<bool>& x, const std::vector<bool>& y) {
  for (size_t k = 0; k < x.size() && k < y.size(); ++k)
    if (x[k] && y[k]) return false;
  return true;
}

// Whether dst element i is at the byte address of src element i, for every i.
inline bool same_sequence(const isa::Ap& d, const isa::Ap& s) {
  if (d.dtype != s.dtype) return false;
  std::vector<int64_t> da, sa;
  isa::Ap d1 = d, s1 = s;
  d1.num_part = s1.num_part = 1;
  ap_for_each(d1, [&](uint32_t, uint64_t, int64_t addr) { da.push_back(addr); });
  ap_for_each(s1, [&](uint32_t, uint64_t, int64_t addr) { sa.push_back(addr); });
  return da == sa;
}

}  // namespace ncore::tb
