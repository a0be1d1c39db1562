// The golden model's tensor-engine arithmetic, fast: the column sums of one multiply_moving,
// each an fma chain down k = 0..K-1 from +0 (the PE array's order, one rounding per step).
//
// Fused multiply-adds are exactly rounded however they are computed, so the AVX2 version (8
// columns per instruction, 4 x 16 sums held in registers, the rows split over the machine's
// cores) gives the same bits as std::fma in a loop, which is what runs on a CPU without AVX2 and
// FMA. A NaN anywhere in a chain stays NaN to its end; the sums are returned with every NaN made
// the canonical 0x7FC00000, as num::pe_fma makes them at each step.
#pragma once

#include <cstdint>

namespace ncore::golden {

// out[j * n + c] = sum over k of w[k * m + j] * x[k * n + c], for j < m, c < n.
void pe_matmul(const float* w, const float* x, float* out, uint32_t k, uint32_t m, uint64_t n);

}  // namespace ncore::golden
