// Random tensor-engine programs for the PE bench: sequences of load_stationary and
// multiply_moving that pass ncore::validate_insn and ncore::validate_pe_pair.
//
//   load_stationary: any dtype, K = 1..P partitions from a random start partition, M = 1..P
//     free elements in a random 1-4 dim access pattern (unit, reversed, random, negative and
//     zero strides; junk strides on size-1 dims), placed anywhere in the SBUF below the noise
//     region.
//   multiply_moving: K partitions of the moving operand from its own random start partition,
//     its dtype fp32 with an fp32 stationary and bf16 or fp16 otherwise, N = 1..one PSUM bank of
//     columns in a random access pattern; the result at a random PSUM start partition (M
//     partitions) and offset, contiguous within one bank and clear of the PSUM noise words,
//     overwritten or accumulated (acc). Often the result goes to the previous multiply's
//     region with acc set (an accumulation group), and often several multiplies reuse one
//     stationary.
// Fields the engine does not use hold junk.
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
#include "ncore/presets_gen.hpp"
#include "ncore/validate.hpp"

namespace pe_tb {

using namespace ncore::tb;

// Knobs of one program.
struct ProgramShape {
  unsigned count = 40;            // instructions
  unsigned mm_per_ls_max = 3;     // multiplies per load: 0..max (0 only now and then)
  uint32_t n_max = 0;             // largest N (0: one PSUM bank)
  bool full = false;              // K = M = P, N = n_max, contiguous operands, equal dst start
  bool fixed_dtype = false;       // every operand `dtype`
  Dtype dtype = Dtype::bf16;
};

class ProgramGen : public InsnGenBase {
 public:
  // Operands stay below byte sbuf_limit of each SBUF partition; PSUM results avoid the last
  // psum_noise_words words of every bank.
  ProgramGen(const ncore::Preset& pr, uint64_t seed, uint64_t sbuf_limit, unsigned psum_noise_words)
      : InsnGenBase(pr, seed), sbuf_limit_(sbuf_limit), noise_words_(psum_noise_words) {}

  std::vector<Insn> program(const ProgramShape& sh) {
    std::vector<Insn> out;
    bool have_ls = false;
    uint32_t k = 0, m = 0;
    Dtype sdt = Dtype::bf16;
    Ap last_dst{};
    bool have_dst = false;
    unsigned left = 0;  // multiplies still to come on this stationary
    while (out.size() < sh.count) {
      if (!have_ls || left == 0) {
        out.push_back(load(sh, k, m, sdt));
        have_ls = true;
        left = chance(8) ? 0 : 1 + below(std::max(1u, sh.mm_per_ls_max));  // 0: back-to-back loads
        if (have_dst && last_dst.num_part != m) have_dst = false;
        continue;
      }
      Insn mm = multiply(sh, k, m, sdt, have_dst ? &last_dst : nullptr);
      last_dst = mm.dst;
      have_dst = true;
      out.push_back(mm);
      --left;
    }
    return out;
  }

 private:
  uint32_t P() const { return static_cast<uint32_t>(pr_.num_partitions); }
  uint32_t bank_words() const { return static_cast<uint32_t>(pr_.psum_bank_bytes / 4); }

  // Fields the engine does not use: junk.
  void junk_fields(Insn& i) {
    g_.junk_control(i, static_cast<uint32_t>(pr_.dma_queues));
    i.imm0 = static_cast<uint32_t>(rng_());
    i.imm1 = static_cast<uint32_t>(rng_());
    g_.junk(i.src1);
    g_.junk(i.s0);
    g_.junk(i.s1);
  }

  std::array<int32_t, 4> strides(const std::array<uint32_t, 4>& sz) {
    std::array<int32_t, 4> st{};
    const unsigned kind = below(10);
    int64_t run = 1;
    for (int d = 0; d < 4; ++d) {
      if (kind < 5) st[d] = static_cast<int32_t>(run);
      else if (kind < 7) st[d] = -static_cast<int32_t>(run);
      else {
        const int32_t mx = static_cast<int32_t>(1 + below(d == 0 ? 4 : 24));
        st[d] = static_cast<int32_t>(below(2 * mx + 1)) - mx;  // incl. zero and negative
      }
      run *= sz[d];
    }
    for (int d = 0; d < 4; ++d)
      if (sz[d] == 1) st[d] = static_cast<int32_t>(below(2001)) - 1000;  // never used
    return st;
  }

  void sbuf_operand(Ap& a, Dtype dt, uint32_t sp, uint32_t np, uint32_t n, bool contiguous) {
    for (;;) {
      a = Ap{};
      a.mem = Buffer::sbuf;
      a.dtype = dt;
      a.start_part = sp;
      a.num_part = np;
      a.size = contiguous ? std::array<uint32_t, 4>{n, 1, 1, 1} : g_.shape(n);
      a.stride = contiguous ? std::array<int32_t, 4>{1, 1, 1, 1} : strides(a.size);
      if (g_.place(a, sbuf_limit_)) return;
    }
  }

  Insn load(const ProgramShape& sh, uint32_t& k, uint32_t& m, Dtype& sdt) {
    Insn i{};
    junk_fields(i);
    g_.junk(i.dst);
    i.opcode = Opcode::load_stationary;
    i.engine = ncore::isa::Engine::pe;
    i.acc = chance(50);
    k = sh.full ? P() : chance(30) ? P() : 1 + below(P());
    m = sh.full ? P() : chance(30) ? P() : 1 + below(P());
    sdt = sh.fixed_dtype ? sh.dtype : static_cast<Dtype>(below(3));
    const uint32_t sp = below(P() - k + 1);
    sbuf_operand(i.src0, sdt, sh.full ? 0 : sp, k, m, sh.full);
    ncore::validate_insn(i, pr_, 4096);
    return i;
  }

  Insn multiply(const ProgramShape& sh, uint32_t k, uint32_t m, Dtype sdt, const Ap* prev_dst) {
    Insn i{};
    junk_fields(i);
    i.opcode = Opcode::multiply_moving;
    i.engine = ncore::isa::Engine::pe;
    const uint32_t bw = bank_words();
    const uint32_t nmax = std::min(sh.n_max ? sh.n_max : bw, bw - noise_words_);
    Dtype mdt = sdt == Dtype::fp32 ? Dtype::fp32 : (chance(50) ? Dtype::bf16 : Dtype::fp16);
    if (sh.fixed_dtype) mdt = sh.dtype;
    if (prev_dst && !sh.full && chance(40)) {
      // accumulate into the previous result (an accumulation group)
      const uint32_t n = static_cast<uint32_t>(ncore::ap_free_elems(*prev_dst));
      sbuf_operand(i.src0, mdt, below(P() - k + 1), k, n, false);
      i.dst = *prev_dst;
      i.acc = !chance(10);
    } else {
      const uint32_t n = sh.full ? nmax : chance(20) ? nmax : 1 + below(nmax);
      sbuf_operand(i.src0, mdt, sh.full ? 0 : below(P() - k + 1), k, n, sh.full);
      Ap& d = i.dst;
      d = Ap{};
      d.mem = Buffer::psum;
      d.dtype = Dtype::fp32;
      d.start_part = sh.full ? 0 : below(P() - m + 1);
      d.num_part = m;
      d.size = g_.shape(n);
      uint32_t run = 1;
      for (int q = 0; q < 4; ++q) {
        d.stride[q] = static_cast<int32_t>(run);
        if (d.size[q] == 1 && chance(50)) d.stride[q] = static_cast<int32_t>(below(100)) - 50;  // unused
        run *= d.size[q];
      }
      const uint32_t banks = static_cast<uint32_t>(pr_.psum_bytes / pr_.psum_bank_bytes);
      const uint32_t bank = below(banks);
      const uint32_t w0 = below(bw - noise_words_ - n + 1);
      d.offset = 4ull * (uint64_t{bank} * bw + w0);
      i.acc = chance(40);
    }
    ncore::validate_insn(i, pr_, 4096);
    ncore::validate_pe_pair(k, m, sdt, i);
    return i;
  }

  uint64_t sbuf_limit_;
  unsigned noise_words_;
};

}  // namespace pe_tb
