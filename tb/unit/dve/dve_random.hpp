// Random vector-engine instructions for the DVE bench (its SBUF contents: random_bytes,
// bench_bits.hpp): tensor_tensor (every ALU op of the ISA), tensor_scalar (immediate or
// per-partition operands, rev0/rev1, op1 bypass or not), tensor_copy, memset and tensor_reduce
// (add, multiply, max, min over the 1-4 innermost free dims of src0); all three
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
#include "operand_gen.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/isa_kinds.hpp"
#include "ncore/presets_gen.hpp"

namespace dve_tb {

using namespace ncore::tb;

// ---- instructions --------------------------------------------------------------------------
enum class Overlap { disjoint, in_place, partial };

// tensor_scalar operands: whether an op may take the immediate (imm0/imm1) instead of the
// per-partition vector. `none`: every op that is not bypass takes its vector; `only`: at least
// one op takes its immediate (the immediates are junk to the engine otherwise).
enum class Imm { none, any, only };

class InsnGen : public InsnGenBase {
 public:
  // Operands stay in bytes [0, limit) of their partitions (0: the whole partition).
  InsnGen(const ncore::Preset& pr, uint64_t seed, Imm imm = Imm::any, uint64_t limit = 0)
      : InsnGenBase(pr, seed), imm_(imm), limit_(limit ? limit : pr.sbuf_bytes) {}

  // A random instruction. `allow_partial`: the destination may also overlap the sources
  // partially. `kind` tells what was drawn.
  Insn next(bool allow_partial, Overlap& kind) {
    for (;;) {
      Insn i;
      if (make(i, allow_partial, kind)) return i;
    }
  }

 private:
  Dtype dtype() { return g_.dtype(); }
  // Any arithmetic ALU op of the ISA (bypass only when bypass_ok); the bitvec ops, which need
  // integer operands throughout, are the random-program generator's (tb/regress).
  AluOp op(bool bypass_ok) {
    const auto& ops = ncore::isa::kAluOpValues;
    for (;;) {
      const AluOp o = bypass_ok ? ops[below(ops.size())] : ops[1 + below(ops.size() - 1)];
      if (!ncore::isa::is_bitvec(o)) return o;
    }
  }

  // An SBUF operand of `n` free elements over partitions [sp, sp + np), placed at random.
  bool operand(Ap& a, Dtype dt, uint32_t sp, uint32_t np, uint32_t n, bool broadcast) {
    return g_.operand(a, Buffer::sbuf, dt, sp, np, n, broadcast, limit_);
  }
  bool place(Ap& a) { return g_.place(a, limit_); }
  std::vector<bool> bytes(const Ap& a, bool* repeats = nullptr) const {
    return touched_bytes(a, pr_.sbuf_bytes, repeats);
  }

  // tensor_reduce: src0 of a random shape, 1-4 innermost dims reduced, dst apart from it (or,
  // when the groups are single elements, sometimes in place).
  bool make_reduce(Insn& i, uint32_t sp, uint32_t np, Overlap& kind) {
    static constexpr AluOp kOps[] = {AluOp::add, AluOp::multiply, AluOp::max, AluOp::min};
    i.op0 = kOps[below(4)];
    if (!operand(i.src0, dtype(), sp, np, g_.free_count(), true)) return false;
    i.red_axes = 1 + below(4);
    uint64_t outer = 1;
    for (unsigned k = i.red_axes; k < 4; ++k) outer *= i.src0.size[k];
    if (outer == ncore::ap_free_elems(i.src0) && chance(30)) {
      i.dst = i.src0;  // single-element groups: in place
      bool rep = false;
      bytes(i.dst, &rep);
      kind = Overlap::in_place;
      return !rep;
    }
    if (!operand(i.dst, dtype(), sp, np, static_cast<uint32_t>(outer), false)) return false;
    const std::vector<bool> srcb = bytes(i.src0);
    bool ok = disjoint(bytes(i.dst), srcb);
    for (int tries = 0; tries < 40 && !ok; ++tries) ok = place(i.dst) && disjoint(bytes(i.dst), srcb);
    kind = Overlap::disjoint;
    return ok;
  }

  bool make(Insn& i, bool allow_partial, Overlap& kind) {
    const uint32_t P = static_cast<uint32_t>(pr_.num_partitions);
    i = Insn{};
    i.engine = ncore::isa::Engine::dve;
    // semaphore and queue fields (the sequencer's business), operands not drawn below: junk
    g_.junk_control(i, static_cast<uint32_t>(pr_.dma_queues));
    i.imm0 = random_f32(rng_);
    i.imm1 = random_f32(rng_);
    g_.junk(i.src0);
    g_.junk(i.src1);
    g_.junk(i.dst2);
    i.func = static_cast<ncore::isa::ActFunc>(below(16));
    i.red_axes = below(8);
    g_.junk(i.s0);
    g_.junk(i.s1);

    const unsigned pick = imm_ == Imm::only ? 45 : below(100);
    i.opcode = pick < 27   ? Opcode::tensor_tensor
               : pick < 54 ? Opcode::tensor_scalar
               : pick < 72 ? Opcode::tensor_copy
               : pick < 86 ? Opcode::memset
                           : Opcode::tensor_reduce;
    const uint32_t np = chance(30) ? P : chance(20) ? 1 : 1 + below(P);
    const uint32_t sp = below(P - np + 1);
    if (i.opcode == Opcode::tensor_reduce) return make_reduce(i, sp, np, kind);
    const uint32_t n = g_.free_count();
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

  Imm imm_;
  uint64_t limit_;
};

}  // namespace dve_tb
