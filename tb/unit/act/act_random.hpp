// Random scalar-engine instructions for the ACT bench.
//
// activation with: func any of the ISA's functions (copy more often); src0 and dst in SBUF or PSUM, all three dtypes, random
// partition ranges, free shapes of 1-4 dims shaped differently on each side, strides unit,
// reversed, random (negative, non-unit), zero (broadcast sources) and junk on size-1 dims; the
// scale an fp32 immediate (often exactly 1.0, the engine's shortcut) or an fp32 per-partition
// vector; the bias an immediate (often -0.0, "none", or +0.0) or a per-partition vector of any
// dtype; half of them with a (P,1) add-reduce result dst2 in SBUF or PSUM, of any dtype, placed
// anywhere (also on the destination or the source: it is written last). Fields the instruction
// does not use hold junk. Every instruction passes ncore::validate_insn.
//
// The destination is either apart from src0 (no byte shared) or exactly in place (the same
// element sequence, touching no byte twice); per-partition operands may sit anywhere, the
// destinations included: the engine reads them before it writes anything.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "bench_bits.hpp"
#include "operand_gen.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"

namespace act_tb {

using namespace ncore::tb;

enum class Overlap { disjoint, in_place };

class ActGen : public InsnGenBase {
 public:
  // Operands stay in bytes [0, sbuf_limit) of SBUF partitions and [0, psum_limit) of PSUM ones.
  ActGen(const ncore::Preset& pr, uint64_t seed, uint64_t sbuf_limit, uint64_t psum_limit)
      : InsnGenBase(pr, seed), sbuf_limit_(sbuf_limit), psum_limit_(psum_limit) {}

  Insn next(Overlap& kind) {
    for (;;) {
      Insn i;
      if (make(i, kind)) return i;
    }
  }

 private:
  uint64_t limit(Buffer m) const { return m == Buffer::psum ? psum_limit_ : sbuf_limit_; }
  uint64_t mem_bytes(Buffer m) const { return m == Buffer::psum ? pr_.psum_bytes : pr_.sbuf_bytes; }
  Buffer mem() { return chance(65) ? Buffer::sbuf : Buffer::psum; }

  // An element offset in [0, limit) of `m` for dtype `dt`, often on `near`'s first element.
  uint64_t scalar_offset(Buffer m, Dtype dt, const Ap& near) {
    const unsigned esz = ncore::isa::dtype_bytes(dt);
    if (near.mem == m && chance(25)) return near.offset - near.offset % esz;
    return uint64_t{below(limit(m) / esz)} * esz;
  }

  bool make(Insn& i, Overlap& kind) {
    const uint32_t P = static_cast<uint32_t>(pr_.num_partitions);
    i = Insn{};
    i.opcode = Opcode::activation;
    i.engine = ncore::isa::Engine::act;
    // fields the engine does not use: junk
    g_.junk_control(i, static_cast<uint32_t>(pr_.dma_queues));
    i.acc = chance(50);
    i.red_axes = below(8);
    g_.junk(i.src1);
    g_.junk(i.dst2);
    i.dst2.num_part = 0;  // no add-reduce unless drawn below (the other fields stay junk)
    g_.junk(i.s0);
    g_.junk(i.s1);

    i.func = chance(30) ? ActFunc::copy : ncore::isa::kActFuncValues[below(ncore::isa::kActFuncValues.size())];
    const uint32_t np = chance(30) ? P : chance(20) ? 1 : 1 + below(P);
    const uint32_t sp = below(P - np + 1);
    const uint32_t n = g_.free_count();
    const Buffer sm = mem();
    if (!g_.operand(i.src0, sm, g_.dtype(), sp, np, n, true, limit(sm))) return false;
    // destination: in place or apart
    if (chance(15)) {
      i.dst = i.src0;
      bool rep = false;
      touched_bytes(i.dst, mem_bytes(i.dst.mem), &rep);
      if (rep) return false;
      kind = Overlap::in_place;
    } else {
      const Buffer dm = mem();
      if (!g_.operand(i.dst, dm, g_.dtype(), sp, np, n, false, limit(dm))) return false;
      if (dm == sm) {
        const std::vector<bool> srcb = touched_bytes(i.src0, mem_bytes(sm));
        bool ok = disjoint(touched_bytes(i.dst, mem_bytes(dm)), srcb);
        for (int tries = 0; tries < 40 && !ok; ++tries)
          ok = g_.place(i.dst, limit(dm)) && disjoint(touched_bytes(i.dst, mem_bytes(dm)), srcb);
        if (!ok) return false;
      }
      kind = Overlap::disjoint;
    }
    // scale: an fp32 immediate (often 1.0) or an fp32 per-partition vector in SBUF
    i.s0_vec = chance(40);
    if (i.s0_vec) {
      i.s0 = {Buffer::sbuf, Dtype::fp32, sp, scalar_offset(Buffer::sbuf, Dtype::fp32, i.dst)};
    } else {
      i.imm0 = chance(30) ? 0x3F800000u : random_f32(rng_);
    }
    // bias: an immediate (often -0.0, none, or +0.0) or a per-partition vector of any dtype
    i.s1_vec = chance(40);
    if (i.s1_vec) {
      const Dtype dt = g_.dtype();
      i.s1 = {Buffer::sbuf, dt, sp, scalar_offset(Buffer::sbuf, dt, i.dst)};
    } else {
      const unsigned k = below(10);
      i.imm1 = k < 3 ? 0x80000000u : k < 4 ? 0u : random_f32(rng_);
    }
    // add-reduce result: (P,1) anywhere
    if (chance(50)) {
      Ap& r = i.dst2;
      r.mem = mem();
      r.dtype = g_.dtype();
      r.start_part = sp;
      r.num_part = np;
      r.part_stride = 0;
      r.size = {1, 1, 1, 1};
      for (auto& st : r.stride) st = static_cast<int32_t>(below(2001)) - 1000;  // never used
      r.offset = scalar_offset(r.mem, r.dtype, chance(50) ? i.dst : i.src0);
    }
    return true;
  }

  uint64_t sbuf_limit_, psum_limit_;
};

}  // namespace act_tb
