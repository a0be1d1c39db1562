// The C++ side of the simulation-only PE array (rtl/sim/ncore_pe_array.sv): the DPI-C
// imports that keep an array's two weight sets and compute a moving column's sums.
//
// PE(k, j)'s step in the RTL (pe_fma, rtl/ncore_fp_pkg.sv) is acc + w * x with the product exact
// and one rounding to nearest even, subnormals kept: IEEE fusedMultiplyAdd, which is fmaf and the
// FMA instruction (the x86 default MXCSR: no flush to zero, no denormals-are-zero). Column j's
// sum is the chain over the rows k in the column's row mask of acc = fma(w[k][j], x[k], acc) from
// acc = +0; a column off in the set passes its +0 through every row. A NaN sum is the canonical
// NaN, as pe_fma makes every NaN it returns. The tests compare these sums, cycles and bits with
// the RTL array (tests/cli/test_fast_pe.sh, tb/unit/fp).
//
// The columns are independent chains, so the rows are the outer loop and the columns are
// vectorised: 8 columns per AVX2 FMA where the CPU has AVX2 and FMA (checked at run time, the
// build does not assume it), one fmaf per column otherwise (glibc's fmaf is exact everywhere and
// uses the FMA instruction where there is one). NCORE_FASTPE_SCALAR=1 forces the scalar loop.
#include <svdpi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/fast_pe.hpp"

namespace ncore::sim::fastpe {
namespace {

constexpr unsigned kMaxP = 128;

struct Array {
  unsigned p;
  alignas(64) float w[2][kMaxP][kMaxP];  // [set][row][column]
  bool off[2][kMaxP];                     // [set][column]
};

float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t as_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// acc[j] for j < p (a multiple of 8 up to kMaxP, or any p for the scalar loop) after the rows
// rows[0..nrows).
void sums_scalar(const Array& a, unsigned set, const unsigned* rows, unsigned nrows, const float* x, float* acc) {
  for (unsigned i = 0; i < nrows; ++i) {
    const unsigned k = rows[i];
    const float xk = x[k];
    const float* wk = a.w[set][k];
    for (unsigned j = 0; j < a.p; ++j) acc[j] = std::fmaf(wk[j], xk, acc[j]);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void sums_avx2(const Array& a, unsigned set, const unsigned* rows,
                                                   unsigned nrows, const float* x, float* acc) {
  // Up to 16 vectors of 8 columns, each its own chain (the loop over them is unrolled: p is 16,
  // 32, 64 or 128 in the presets; other widths take the scalar loop).
  const unsigned nv = a.p / 8;
  __m256 v[kMaxP / 8];
  for (unsigned b = 0; b < kMaxP / 8; ++b) v[b] = _mm256_setzero_ps();
  for (unsigned i = 0; i < nrows; ++i) {
    const unsigned k = rows[i];
    const __m256 xk = _mm256_set1_ps(x[k]);
    const float* wk = a.w[set][k];
    if (nv == 16) {
#pragma GCC unroll 16
      for (unsigned b = 0; b < 16; ++b) v[b] = _mm256_fmadd_ps(_mm256_load_ps(wk + 8 * b), xk, v[b]);
    } else {
      for (unsigned b = 0; b < nv; ++b) v[b] = _mm256_fmadd_ps(_mm256_load_ps(wk + 8 * b), xk, v[b]);
    }
  }
  for (unsigned b = 0; b < nv; ++b) _mm256_storeu_ps(acc + 8 * b, v[b]);
}

#endif

bool g_force_scalar = [] {
  const char* s = std::getenv("NCORE_FASTPE_SCALAR");
  return s && *s && std::strcmp(s, "0") != 0;
}();

#if defined(__x86_64__)
bool use_avx2() {
  static const bool cpu = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return cpu && !g_force_scalar;
}
#endif

}  // namespace

const char* kernel_name() {
#if defined(__x86_64__)
  if (use_avx2()) return "avx2-fma";
#endif
  return "scalar-fmaf";
}

void force_scalar(bool on) { g_force_scalar = on; }

}  // namespace ncore::sim::fastpe

using ncore::sim::fastpe::Array;
using ncore::sim::fastpe::kMaxP;

extern "C" void* ncore_fastpe_new(unsigned p) {
  if (p == 0 || p > kMaxP) std::abort();
  auto* a = new (std::align_val_t(64)) Array{};
  a->p = p;
  return a;
}

extern "C" void ncore_fastpe_free(void* h) {
  ::operator delete(static_cast<Array*>(h), std::align_val_t(64));
}

extern "C" void ncore_fastpe_load(void* h, svBit set, unsigned col, svBit last, const svBitVecVal* data) {
  auto& a = *static_cast<Array*>(h);
  const unsigned s = set & 1;
  if (col >= a.p) return;
  for (unsigned k = 0; k < a.p; ++k) a.w[s][k][col] = ncore::sim::fastpe::as_float(data[k]);
  a.off[s][col] = false;
  if (last)
    for (unsigned j = col + 1; j < a.p; ++j) a.off[s][j] = true;
}

extern "C" void ncore_fastpe_multiply(void* h, svBit set, const svBitVecVal* rows, const svBitVecVal* data,
                                      svBitVecVal* sums) {
  using namespace ncore::sim::fastpe;
  const auto& a = *static_cast<const Array*>(h);
  const unsigned s = set & 1;
  unsigned rl[kMaxP];
  unsigned n = 0;
  for (unsigned k = 0; k < a.p; ++k)
    if ((rows[k / 32] >> (k % 32)) & 1u) rl[n++] = k;
  alignas(32) float x[kMaxP];
  for (unsigned k = 0; k < a.p; ++k) x[k] = as_float(data[k]);
  alignas(32) float acc[kMaxP] = {};
#if defined(__x86_64__)
  if (a.p % 8 == 0 && use_avx2())
    sums_avx2(a, s, rl, n, x, acc);
  else
#endif
    sums_scalar(a, s, rl, n, x, acc);
  for (unsigned j = 0; j < kMaxP; ++j) {
    uint32_t r = 0;
    if (j < a.p && !a.off[s][j]) {
      r = as_bits(acc[j]);
      if (std::isnan(acc[j])) r = 0x7FC00000u;
    }
    sums[j] = r;
  }
}
