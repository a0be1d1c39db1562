// The PSUM bench's view of the PSUM's ports (rtl/ncore_psum.sv, Verilated on its own): the
// numbers of a build (preset and engine port counts), lane sets on Verilated ports, the
// requests of the engine ports and the tensor engine's lanes, and the fp32 values they carry
// (the numerics bench's patterns, or only special values) with the reference of an accumulate.
#pragma once

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_bits.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/numerics.hpp"

namespace psum_tb {

using namespace ncore::tb;
namespace num = ncore::num;

constexpr unsigned kMaxP = 128;
using Lanes = std::bitset<kMaxP>;

inline unsigned log2u(uint64_t v) {
  unsigned n = 0;
  while ((uint64_t{1} << n) < v) ++n;
  return n;
}

// The numbers of one build, from the generated preset header (the RTL takes the same ones from
// ncore_cfg_pkg), and its port counts (the wrapper's -G parameters in CMakeLists.txt).
struct Geometry {
  std::string preset;
  unsigned P, words, bank_words, banks, addr_w, word_w, nr, nw;
};

inline Geometry geometry(const char* preset, unsigned nr, unsigned nw) {
  const ncore::Preset& p = *ncore::find_preset(preset);
  Geometry g;
  g.preset = preset;
  g.P = static_cast<unsigned>(p.num_partitions);
  g.words = static_cast<unsigned>(p.psum_bytes / 4);
  g.bank_words = static_cast<unsigned>(p.psum_bank_bytes / 4);
  g.banks = g.words / g.bank_words;
  g.addr_w = log2u(p.psum_bytes);
  g.word_w = g.addr_w - 2;
  g.nr = nr;
  g.nw = nw;
  if (g.P > kMaxP || nr > 64 || nw > 64) throw std::runtime_error("psum bench: more lanes or ports than it holds");
  return g;
}

// ---- lane sets on Verilated ports --------------------------------------------------------------
template <class T>
void put_lanes(T& port, unsigned lsb, unsigned n, const Lanes& l) {
  for (unsigned i = 0; i < n; i += 64) {
    const unsigned w = std::min(64u, n - i);
    uint64_t v = 0;
    for (unsigned k = 0; k < w; ++k)
      if (l[i + k]) v |= uint64_t{1} << k;
    put_bits(port, lsb + i, w, v);
  }
}

template <class T>
Lanes get_lanes(const T& port, unsigned lsb, unsigned n) {
  Lanes l;
  for (unsigned i = 0; i < n; i += 64) {
    const unsigned w = std::min(64u, n - i);
    const uint64_t v = get_bits(port, lsb + i, w);
    for (unsigned k = 0; k < w; ++k)
      if ((v >> k) & 1) l.set(i + k);
  }
  return l;
}

// ---- values --------------------------------------------------------------------------------------
// Zeros of both signs, infinities, NaNs (quiet and signalling, both signs, payloads), the
// smallest and largest subnormals, the smallest normals, the largest finite values, and values
// whose sums are rounding ties or cancel.
constexpr uint32_t kSpecial[] = {
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
    0x7FC00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
    0xFF7FFFFF, 0x73000000, 0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0x34400000, 0x00400000,
};

inline uint32_t special_f32(std::mt19937_64& rng) { return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])]; }

// The reference of one accumulate: the golden numerics' fp32 add (host binary32 arithmetic).
inline uint32_t ref_add(uint32_t old, uint32_t data) { return num::alu(ncore::isa::AluOp::add, old, data); }

inline bool is_nan(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
inline bool is_inf(uint32_t b) { return (b & 0x7FFFFFFFu) == 0x7F800000u; }
inline bool is_sub(uint32_t b) { return (b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0; }

// ---- requests ------------------------------------------------------------------------------------
struct RdReq {
  bool on = false;
  uint32_t addr = 0;  // byte address
  Lanes mask;
  uint64_t wait = 0;
};
struct WrReq {
  bool on = false;
  uint32_t addr = 0;  // byte address: the element lands at byte addr % 4 of the word
  Lanes mask;
  uint8_t ben = 0;
  std::vector<uint32_t> data;  // per lane, the element in the low bits
  uint64_t wait = 0;
};
struct PeLane {
  bool valid = false;
  uint32_t word = 0;
  uint32_t data = 0;
  bool acc = false;
};

// The two builds of the bench (CMakeLists.txt).
inline const Geometry& tiny_geo() {
  static const Geometry g = geometry("tiny", 3, 2);
  return g;
}
inline const Geometry& trn2_geo() {
  static const Geometry g = geometry("trn2", 1, 1);
  return g;
}

}  // namespace psum_tb
