// Access patterns: how many elements an operand has, where each one lives, and the box of
// memory it can touch. Shared by the scheduler (dependency regions), the golden model, the
// checkers and the listing, so that all of them read an ncore::isa::Ap the same way the RTL
// address generators do.
#pragma once

#include <cstdint>

#include "ncore/isa_gen.hpp"

namespace ncore {

// n contiguous elements of dt from byte `offset` of partitions [start_part, start_part + num_part)
// of an on-chip buffer: one free dimension.
inline isa::Ap sbuf_ap(isa::Dtype dt, uint32_t start_part, uint32_t num_part, uint64_t offset, uint32_t n,
                       isa::Buffer mem = isa::Buffer::sbuf) {
  return {mem, dt, start_part, num_part, 0, offset, {n, 1, 1, 1}, {1, 0, 0, 0}};
}

// rows x n contiguous elements of dt in HBM from byte `offset`, the rows `row_stride` elements apart.
inline isa::Ap hbm_ap(isa::Dtype dt, uint32_t rows, int32_t row_stride, uint64_t offset, uint32_t n) {
  return {isa::Buffer::hbm, dt, 0, rows, row_stride, offset, {n, 1, 1, 1}, {1, 0, 0, 0}};
}

// Elements per partition: the product of the free sizes.
inline uint64_t ap_free_elems(const isa::Ap& ap) {
  uint64_t n = 1;
  for (auto s : ap.size) n *= s;
  return n;
}

// The free dimensions in use: 1 + the outermost one whose size is not 1 (at least 1).
inline int ap_used_dims(const isa::Ap& ap) {
  for (int d = 3; d > 0; --d)
    if (ap.size[d] != 1) return d + 1;
  return 1;
}

// All elements (partitions x free).
inline uint64_t ap_elems(const isa::Ap& ap) { return ap_free_elems(ap) * ap.num_part; }

// Calls f(p, i, addr) for every element in iteration order: partition p (relative to
// start_part), free index i (0 .. ap_free_elems-1, innermost dimension fastest) and the
// element's byte address: within partition start_part + p for SBUF/PSUM, absolute for HBM.
// Addresses are signed so that a bad pattern can be detected rather than wrap.
template <class F>
void ap_for_each(const isa::Ap& ap, F&& f) {
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  const bool hbm = ap.mem == isa::Buffer::hbm;
  for (uint32_t p = 0; p < ap.num_part; ++p) {
    const int64_t base = static_cast<int64_t>(ap.offset) + (hbm ? esz * int64_t{ap.part_stride} * p : 0);
    uint64_t i = 0;
    for (uint32_t i3 = 0; i3 < ap.size[3]; ++i3)
      for (uint32_t i2 = 0; i2 < ap.size[2]; ++i2)
        for (uint32_t i1 = 0; i1 < ap.size[1]; ++i1)
          for (uint32_t i0 = 0; i0 < ap.size[0]; ++i0, ++i) {
            const int64_t e = int64_t{i3} * ap.stride[3] + int64_t{i2} * ap.stride[2] + int64_t{i1} * ap.stride[1] +
                              int64_t{i0} * ap.stride[0];
            f(p, i, base + e * esz);
          }
  }
}

// The box an operand can touch: partitions [p_lo, p_hi) and bytes [lo, hi) within each of
// them (for HBM: p_lo = 0, p_hi = 1 and absolute bytes). Empty operands give lo == hi.
struct Box {
  uint32_t p_lo = 0, p_hi = 0;
  int64_t lo = 0, hi = 0;
  bool empty() const { return p_lo >= p_hi || lo >= hi; }
  bool overlaps(const Box& o) const {
    return !empty() && !o.empty() && p_lo < o.p_hi && o.p_lo < p_hi && lo < o.hi && o.lo < hi;
  }
};

inline Box ap_box(const isa::Ap& ap) {
  Box b;
  if (ap.num_part == 0 || ap_free_elems(ap) == 0) return b;
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  int64_t lo = 0, hi = 0;  // element offsets of the extreme elements
  for (int d = 0; d < 4; ++d) {
    const int64_t span = int64_t{ap.stride[d]} * (int64_t{ap.size[d]} - 1);
    (span < 0 ? lo : hi) += span;
  }
  if (ap.mem == isa::Buffer::hbm) {
    const int64_t pspan = int64_t{ap.part_stride} * (int64_t{ap.num_part} - 1);
    (pspan < 0 ? lo : hi) += pspan;
    b.p_lo = 0;
    b.p_hi = 1;
  } else {
    b.p_lo = ap.start_part;
    b.p_hi = ap.start_part + ap.num_part;
  }
  b.lo = static_cast<int64_t>(ap.offset) + lo * esz;
  b.hi = static_cast<int64_t>(ap.offset) + hi * esz + esz;
  return b;
}

}  // namespace ncore
