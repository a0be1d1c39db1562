// Random SBUF contents and random vector-engine instructions for the DVE bench.
//
// Contents: every 32-bit word is either an fp32 pattern or two 16-bit patterns, drawn so that
// every dtype reading them meets zeros, infinities, NaNs (quiet, signalling, with payloads),
// subnormals, the largest finite values, values near 1 (rounding ties and carries) and uniform
// bits.
//
// Instructions: tensor_tensor (add, subtract, multiply, max, min), tensor_scalar (immediate or
// per-partition operands, rev0/rev1, op1 bypass or not), tensor_copy and memset; all three
// dtypes on every operand; random partition ranges; free shapes of 1-4 dims whose operands may
// be shaped differently; strides unit, reversed, random (negative, non-unit), zero
// (broadcast sources) and junk strides on size-1 dims, which must be ignored; fields an
// instruction does not use hold junk. Every instruction passes ncore::validate_insn.
//
// Overlap between a destination and the sources is drawn from three kinds:
//   disjoint: no byte of dst is a byte of src0/src1 (sources may overlap each other freely);
//   in place: dst is the same element sequence as src0 or src1 (same dtype, same byte address
//     for element i) and touches no byte twice;
//   partial: anything else (dst shifted onto the sources). The golden model reads every source
//     element before writing any; a streaming engine does not. Only the dedicated overlap test
//     generates this kind.
// Per-partition operands (s0, s1) may sit anywhere, also on the destination: the engine reads
// them before it writes anything.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "bench_bits.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"

namespace dve_tb {

using namespace ncore::tb;

using ncore::isa::AluOp;
using ncore::isa::Ap;
using ncore::isa::Buffer;
using ncore::isa::Dtype;
using ncore::isa::Insn;
using ncore::isa::Opcode;

inline std::vector<uint8_t> random_sbuf(std::mt19937_64& rng, unsigned partitions, unsigned bytes) {
  std::vector<uint8_t> img(size_t{partitions} * bytes);
  for (size_t w = 0; w < img.size() / 4; ++w) {
    uint32_t v;
    if (rng() % 2) v = random_f32(rng);
    else v = uint32_t{random_h16(rng)} | uint32_t{random_h16(rng)} << 16;
    for (int b = 0; b < 4; ++b) img[4 * w + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return img;
}

// ---- instructions --------------------------------------------------------------------------
enum class Overlap { disjoint, in_place, partial };

// tensor_scalar operands: whether an op may take the immediate (imm0/imm1) instead of the
// per-partition vector. `none`: every op that is not bypass takes its vector; `only`: at least
// one op takes its immediate (the immediates are junk to the engine otherwise).
enum class Imm { none, any, only };

class InsnGen {
 public:
  // Operands stay in bytes [0, limit) of their partitions (0: the whole partition).
  InsnGen(const ncore::Preset& pr, uint64_t seed, Imm imm = Imm::any, uint64_t limit = 0)
      : pr_(pr), rng_(seed), imm_(imm), limit_(limit ? limit : pr.sbuf_bytes) {}
  std::mt19937_64& rng() { return rng_; }

  // A random instruction. `allow_partial`: the destination may also overlap the sources
  // partially. `kind` tells what was drawn.
  Insn next(bool allow_partial, Overlap& kind) {
    for (;;) {
      Insn i;
      if (make(i, allow_partial, kind)) return i;
    }
  }

 private:
  uint32_t below(uint64_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(unsigned pct) { return below(100) < pct; }
  Dtype dtype() { return static_cast<Dtype>(below(3)); }
  AluOp op(bool bypass_ok) { return static_cast<AluOp>(bypass_ok ? below(6) : 1 + below(5)); }

  uint32_t free_count() {
    if (chance(3)) return 257 + below(1000);  // long rows (fit for 2-byte dtypes and few operands)
    switch (below(10)) {
      case 0: case 1: case 2: return 1 + below(8);
      case 3: case 4: case 5: case 6: return 9 + below(56);
      case 7: case 8: return 65 + below(128);
      default: return 193 + below(64);
    }
  }

  // sizes[0..3] with product n, in 1-4 dims, sometimes with size-1 dims inside
  std::array<uint32_t, 4> shape(uint32_t n) {
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
    if (chance(25)) std::shuffle(s.begin(), s.end(), rng_);
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

  // An SBUF operand of `n` free elements over partitions [sp, sp + np), placed at random.
  bool operand(Ap& a, Dtype dt, uint32_t sp, uint32_t np, uint32_t n, bool broadcast) {
    a = Ap{};
    a.mem = Buffer::sbuf;
    a.dtype = dt;
    a.start_part = sp;
    a.num_part = np;
    a.size = shape(n);
    a.stride = strides(a.size, broadcast);
    return place(a);
  }

  // A random offset that keeps the operand inside the partition (false: it cannot fit).
  bool place(Ap& a) {
    const int64_t esz = ncore::isa::dtype_bytes(a.dtype);
    const int64_t elems = static_cast<int64_t>(limit_) / esz;
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

  // Bytes of one partition an operand touches, and whether it touches one twice.
  std::vector<bool> bytes(const Ap& a, bool* repeats = nullptr) const {
    std::vector<bool> b(pr_.sbuf_bytes, false);
    Ap one = a;
    one.num_part = 1;
    const unsigned nb = ncore::isa::dtype_bytes(a.dtype);
    bool rep = false;
    ncore::ap_for_each(one, [&](uint32_t, uint64_t, int64_t addr) {
      for (unsigned k = 0; k < nb; ++k) {
        rep |= b[addr + k];
        b[addr + k] = true;
      }
    });
    if (repeats) *repeats = rep;
    return b;
  }

  static bool disjoint(const std::vector<bool>& x, const std::vector<bool>& y) {
    for (size_t k = 0; k < x.size(); ++k)
      if (x[k] && y[k]) return false;
    return true;
  }

  // Whether dst element i is at the byte address of src element i, for every i.
  static bool same_sequence(const Ap& d, const Ap& s) {
    if (d.dtype != s.dtype) return false;
    std::vector<int64_t> da, sa;
    Ap d1 = d, s1 = s;
    d1.num_part = s1.num_part = 1;
    ncore::ap_for_each(d1, [&](uint32_t, uint64_t, int64_t addr) { da.push_back(addr); });
    ncore::ap_for_each(s1, [&](uint32_t, uint64_t, int64_t addr) { sa.push_back(addr); });
    return da == sa;
  }

  void junk(Ap& a) {
    a.mem = static_cast<Buffer>(below(3));
    a.dtype = dtype();
    a.start_part = below(256);
    a.num_part = below(256);
    a.part_stride = static_cast<int32_t>(rng_());
    a.offset = rng_() & 0xFFFFFFFFFFull;
    for (auto& s : a.size) s = static_cast<uint32_t>(rng_());
    for (auto& s : a.stride) s = static_cast<int32_t>(rng_());
  }

  bool make(Insn& i, bool allow_partial, Overlap& kind) {
    const uint32_t P = static_cast<uint32_t>(pr_.num_partitions);
    i = Insn{};
    i.engine = ncore::isa::Engine::dve;
    // semaphore and queue fields: the sequencer's business, junk to the engine
    i.dma_queue = below(static_cast<uint32_t>(pr_.dma_queues));
    i.wait_sem = below(256);
    i.wait_cond = static_cast<ncore::isa::SemCond>(below(7));
    i.wait_val = static_cast<uint32_t>(rng_());
    i.upd_sem = below(256);
    i.upd_op = static_cast<ncore::isa::SemOp>(below(6));
    i.upd_when = static_cast<ncore::isa::SemWhen>(below(2));
    i.upd_val = static_cast<uint32_t>(rng_());
    i.op0 = op(true);
    i.op1 = op(true);
    i.rev0 = chance(50);
    i.rev1 = chance(50);
    i.imm0 = random_f32(rng_);
    i.imm1 = random_f32(rng_);
    junk(i.src0);
    junk(i.src1);
    i.s0 = {static_cast<Buffer>(below(3)), dtype(), below(256), rng_() & 0xFFFFFFFFFFull};
    i.s1 = {static_cast<Buffer>(below(3)), dtype(), below(256), rng_() & 0xFFFFFFFFFFull};

    const unsigned pick = imm_ == Imm::only ? 45 : below(100);
    i.opcode = pick < 30 ? Opcode::tensor_tensor : pick < 60 ? Opcode::tensor_scalar : pick < 80 ? Opcode::tensor_copy
                                                                                                : Opcode::memset;
    const uint32_t np = chance(30) ? P : chance(20) ? 1 : 1 + below(P);
    const uint32_t sp = below(P - np + 1);
    const uint32_t n = free_count();
    const bool two = i.opcode == Opcode::tensor_tensor;
    if (i.opcode == Opcode::tensor_tensor) i.op0 = op(false);

    if (i.opcode == Opcode::memset) {
      kind = Overlap::disjoint;
      return operand(i.dst, dtype(), sp, np, n, false);
    }
    if (!operand(i.src0, dtype(), sp, np, n, true)) return false;
    if (two) {
      if (chance(15)) {
        // x op x: the same elements, sometimes read as another dtype from the same offset
        i.src1 = i.src0;
        if (chance(50)) {
          i.src1.dtype = dtype();
          i.src1.offset -= i.src1.offset % ncore::isa::dtype_bytes(i.src1.dtype);
          const ncore::Box bx = ncore::ap_box(i.src1);
          if (bx.lo < 0 || bx.hi > int64_t(limit_)) return false;
        }
      } else if (!operand(i.src1, dtype(), sp, np, n, true)) {
        return false;
      }
    }
    std::vector<bool> srcb = bytes(i.src0);
    if (two) {
      const std::vector<bool> b1 = bytes(i.src1);
      for (size_t k = 0; k < srcb.size(); ++k) srcb[k] = srcb[k] || b1[k];
    }
    // destination
    const unsigned ov = below(100);
    const Ap& near = (two && chance(50)) ? i.src1 : i.src0;
    if (ov < 15) {
      i.dst = near;  // in place
    } else if (allow_partial && ov < 65) {
      // shifted onto a source by a few elements, same shape or its own
      if (!operand(i.dst, dtype(), sp, np, n, false)) return false;
      const int64_t esz = ncore::isa::dtype_bytes(i.dst.dtype);
      if (chance(50)) {
        i.dst.size = near.size;
        i.dst.stride = near.stride;
      }
      const int64_t off = int64_t(near.offset) - int64_t(near.offset) % esz + esz * (int64_t(below(9)) - 4);
      if (off < 0) return false;
      i.dst.offset = static_cast<uint64_t>(off);
      const ncore::Box bx = ncore::ap_box(i.dst);
      if (bx.lo < 0 || bx.hi > int64_t(limit_)) return false;
    } else {
      // disjoint from both sources
      if (!operand(i.dst, dtype(), sp, np, n, false)) return false;
      bool ok = disjoint(bytes(i.dst), srcb);
      for (int tries = 0; tries < 40 && !ok; ++tries) ok = place(i.dst) && disjoint(bytes(i.dst), srcb);
      if (!ok) return false;
    }
    bool rep = false;
    const std::vector<bool> db = bytes(i.dst, &rep);
    // in place: every source either misses dst or is dst's own element sequence
    auto fits = [&](const Ap& s) { return disjoint(db, bytes(s)) || (!rep && same_sequence(i.dst, s)); };
    if (disjoint(db, srcb)) kind = Overlap::disjoint;
    else if (fits(i.src0) && (!two || fits(i.src1))) kind = Overlap::in_place;
    else kind = Overlap::partial;
    if (kind == Overlap::partial && !allow_partial) return false;
    if (i.opcode == Opcode::tensor_scalar) {
      i.s0_vec = chance(50);
      i.s1_vec = chance(50);
      if (chance(20)) i.op1 = AluOp::bypass;
      if (imm_ == Imm::none) {
        i.s0_vec = i.s0_vec || i.op0 != AluOp::bypass;
        i.s1_vec = i.s1_vec || i.op1 != AluOp::bypass;
      } else if (imm_ == Imm::only) {
        if (chance(50)) {
          i.op0 = op(false);
          i.s0_vec = false;
        } else {
          i.op1 = op(false);
          i.s1_vec = false;
        }
      }
      auto sref = [&](ncore::isa::Sref& s) {
        s.mem = Buffer::sbuf;
        s.dtype = dtype();
        s.start_part = sp;
        const unsigned esz = ncore::isa::dtype_bytes(s.dtype);
        // anywhere, often on the destination's first element
        s.offset = chance(25) ? i.dst.offset - i.dst.offset % esz : below(static_cast<uint32_t>(limit_) / esz) * esz;
      };
      if (i.s0_vec) sref(i.s0);
      if (i.s1_vec) sref(i.s1);
    }
    return true;
  }

  const ncore::Preset& pr_;
  std::mt19937_64 rng_;
  Imm imm_;
  uint64_t limit_;
};

}  // namespace dve_tb
