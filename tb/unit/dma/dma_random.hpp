// Random memory contents and random dma_copy transfers for the DMA bench.
//
// Transfers: HBM->SBUF, SBUF->HBM, SBUF->SBUF and HBM->HBM; 1-16 partition rows from a random
// start partition (separately on each SBUF side); 1-4 free dims per side, shaped independently
// (same element count); strides unit, reversed, random (negative, non-unit) and zero (broadcast
// sources); HBM rows a random partition stride apart (also negative, also overlapping rows
// for sources); every dtype pair (casts through fp32). SBUF operands stay out of the last
// kNoiseBytes of each partition (the bench's other traffic writes there).
//
// The golden model executes a transfer when it completes, so transfers in flight at the same
// time must not depend on each other, and a transfer must not overwrite its own source: the
// generator keeps a footprint (bytes read, bytes written) per transfer; a new transfer may not
// write what another in flight reads or writes, nor read what one writes, nor read what it
// writes itself. A destination touches no byte twice (two engines, or two rows, writing one
// byte would race).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "dma_bench.hpp"
#include "operand_gen.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"

namespace dma_tb {

// ---- footprints ------------------------------------------------------------------------------
struct Footprint {
  std::vector<bool> sbuf_rd, sbuf_wr, hbm_rd, hbm_wr;  // [partition * bytes + byte], [byte]
  bool dst_repeats = false;                            // the destination touches a byte twice
};

inline bool intersects(const std::vector<bool>& a, const std::vector<bool>& b) {
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] && b[k]) return true;
  return false;
}

inline Footprint footprint(const Insn& i, uint64_t hbm_bytes) {
  const size_t sb = tiny().sbuf_bytes;
  Footprint f;
  f.sbuf_rd.assign(kP * sb, false);
  f.sbuf_wr.assign(kP * sb, false);
  f.hbm_rd.assign(hbm_bytes, false);
  f.hbm_wr.assign(hbm_bytes, false);
  auto mark = [&](const Ap& a, bool wr) {
    const unsigned nb = ncore::isa::dtype_bytes(a.dtype);
    ncore::ap_for_each(a, [&](uint32_t p, uint64_t, int64_t addr) {
      for (unsigned k = 0; k < nb; ++k) {
        std::vector<bool>& m = a.mem == Buffer::hbm ? (wr ? f.hbm_wr : f.hbm_rd) : (wr ? f.sbuf_wr : f.sbuf_rd);
        const size_t at = a.mem == Buffer::hbm ? size_t(addr + k) : (a.start_part + p) * sb + size_t(addr + k);
        if (wr && m[at]) f.dst_repeats = true;
        m[at] = true;
      }
    });
  };
  mark(i.src0, false);
  mark(i.dst, true);
  return f;
}

// Whether `n` may run while `o` is in flight (and the reverse), and whether it may run at all.
inline bool independent(const Footprint& n, const Footprint& o) {
  return !intersects(n.sbuf_wr, o.sbuf_wr) && !intersects(n.sbuf_wr, o.sbuf_rd) && !intersects(n.sbuf_rd, o.sbuf_wr) &&
         !intersects(n.hbm_wr, o.hbm_wr) && !intersects(n.hbm_wr, o.hbm_rd) && !intersects(n.hbm_rd, o.hbm_wr);
}
inline bool self_consistent(const Footprint& f) {
  return !f.dst_repeats && !intersects(f.sbuf_wr, f.sbuf_rd) && !intersects(f.hbm_wr, f.hbm_rd);
}

// ---- transfers ------------------------------------------------------------------------------
enum class Dir { hbm_to_sbuf, sbuf_to_hbm, sbuf_to_sbuf, hbm_to_hbm };
inline const char* to_string(Dir d) {
  switch (d) {
    case Dir::hbm_to_sbuf: return "HBM->SBUF";
    case Dir::sbuf_to_hbm: return "SBUF->HBM";
    case Dir::sbuf_to_sbuf: return "SBUF->SBUF";
    default: return "HBM->HBM";
  }
}
inline Dir dir_of(const Insn& i) {
  const bool s = i.src0.mem == Buffer::hbm, d = i.dst.mem == Buffer::hbm;
  return s ? (d ? Dir::hbm_to_hbm : Dir::hbm_to_sbuf) : (d ? Dir::sbuf_to_hbm : Dir::sbuf_to_sbuf);
}

class XferGen {
 public:
  XferGen(uint64_t hbm_bytes, uint64_t seed) : hbm_bytes_(hbm_bytes), rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }

  // A random transfer on `queue` (may fail to place: nullopt-like false).
  bool make(Insn& i, unsigned queue, uint32_t max_free = 512) {
    i = Insn{};
    i.opcode = Opcode::dma_copy;
    i.engine = ncore::isa::Engine::dma;
    i.dma_queue = queue;
    i.upd_sem = below(256);
    i.upd_op = ncore::isa::SemOp::inc;
    const Dir dir = static_cast<Dir>(below(4));
    const bool s_hbm = dir == Dir::hbm_to_sbuf || dir == Dir::hbm_to_hbm;
    const bool d_hbm = dir == Dir::sbuf_to_hbm || dir == Dir::hbm_to_hbm;
    const uint32_t np = chance(25) ? kP : chance(15) ? 1 + below(kP / kE) : 1 + below(kP);
    uint32_t n;
    switch (below(10)) {
      case 0: case 1: case 2: n = 1 + below(16); break;
      case 3: case 4: case 5: case 6: n = 17 + below(112); break;
      default: n = 129 + below(std::max<uint32_t>(1, max_free - 128)); break;
    }
    n = std::min(n, max_free);
    const Dtype sdt = dtype();
    const Dtype ddt = chance(50) ? sdt : dtype();
    if (!operand(i.src0, s_hbm, sdt, np, n, true)) return false;
    if (!operand(i.dst, d_hbm, ddt, np, n, false)) return false;
    return true;
  }

 private:
  uint32_t below(uint64_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(unsigned pct) { return below(100) < pct; }
  Dtype dtype() { return static_cast<Dtype>(below(3)); }

  bool operand(Ap& a, bool hbm, Dtype dt, uint32_t np, uint32_t n, bool source) {
    a = Ap{};
    a.mem = hbm ? Buffer::hbm : Buffer::sbuf;
    a.dtype = dt;
    a.num_part = np;
    a.start_part = hbm ? 0 : below(kP - np + 1);
    a.size = g_.shape(n, 20);
    const unsigned kind = below(10);
    int64_t run = 1;
    for (int d = 0; d < 4; ++d) {
      if (kind < 5) a.stride[d] = int32_t(run);                      // row-major (multi-element chunks)
      else if (kind < 6) a.stride[d] = -int32_t(run);                // reversed
      else {
        const int32_t m = int32_t(1 + below(d == 0 ? 3 : 24));
        a.stride[d] = int32_t(below(2 * m + 1)) - m;                 // random, negative, zero
        if (a.stride[d] == 0 && !(source && chance(50))) a.stride[d] = 1;
      }
      run *= a.size[d];
    }
    for (int d = 0; d < 4; ++d)
      if (a.size[d] == 1) a.stride[d] = int32_t(below(201)) - 100;   // never used
    // element span of one row
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < 4; ++d) {
      const int64_t span = int64_t{a.stride[d]} * (int64_t{a.size[d]} - 1);
      (span < 0 ? lo : hi) += span;
    }
    const int64_t esz = ncore::isa::dtype_bytes(dt);
    if (hbm) {
      // rows: one row's span apart (plus a gap) either way, or anything for a source
      const int64_t width = hi - lo + 1;
      if (source && chance(20)) a.part_stride = int32_t(below(2 * width + 1)) - int32_t(width);
      else a.part_stride = int32_t((width + below(8)) * (chance(20) ? -1 : 1));
      const int64_t pspan = int64_t{a.part_stride} * (int64_t{np} - 1);
      (pspan < 0 ? lo : hi) += pspan;
    }
    const int64_t limit = hbm ? int64_t(hbm_bytes_) / esz : int64_t(tiny().sbuf_bytes - kNoiseBytes) / esz;
    const int64_t first = -lo, last = limit - 1 - hi;
    if (first > last) return false;
    a.offset = uint64_t((first + int64_t(rng_() % uint64_t(last - first + 1))) * esz);
    return true;
  }

  uint64_t hbm_bytes_;
  std::mt19937_64 rng_;
  ApGen g_{rng_};
};

}  // namespace dma_tb
