// Tests of numerics.hpp on its own: hand-computed special cases of every conversion and ALU op,
// and a rounding cross-check of the bf16 / fp16 conversions against a third, slow reference that
// picks the nearest representable value by distance (in double, exact for these formats).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ncore/numerics.hpp"

using ncore::isa::AluOp;
using ncore::isa::Dtype;
namespace num = ncore::num;

namespace {

// Nearest-even rounding of a finite float to a 16-bit format, by distance: all finite
// non-negative patterns of the format sorted by value, the two neighbours of |v| compared.
struct DistanceRef {
  std::vector<std::pair<double, uint16_t>> pos;  // (value, bits) of finite values >= 0
  double overflow;                               // |v| >= overflow rounds to infinity
  uint16_t inf;
  DistanceRef(Dtype dt, double ovf, uint16_t inf_bits) : overflow(ovf), inf(inf_bits) {
    for (uint32_t b = 0; b < 0x8000; ++b) {
      const float f = num::to_float(b, dt);
      if (std::isfinite(f)) pos.emplace_back(double(f), uint16_t(b));
    }
    std::sort(pos.begin(), pos.end());
  }
  uint16_t round(float f) const {
    const double v = std::fabs(double(f));
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    if (v >= overflow) return sign | inf;
    auto hi = std::lower_bound(pos.begin(), pos.end(), std::make_pair(v, uint16_t{0}));
    if (hi == pos.end()) return sign | pos.back().second;  // above the largest, below overflow
    if (hi->first == v) return sign | hi->second;
    auto lo = hi - 1;
    const double dl = v - lo->first, dh = hi->first - v;
    if (dl < dh) return sign | lo->second;
    if (dh < dl) return sign | hi->second;
    return sign | ((lo->second & 1) ? hi->second : lo->second);
  }
};

uint32_t f2b(float f) { return num::float_to_bits(f); }

}  // namespace

TEST_CASE("to_f32_bits widens exactly and canonicalises NaN", "[numerics]") {
  CHECK(num::to_f32_bits(0x3C00, Dtype::fp16) == 0x3F800000u);  // 1.0
  CHECK(num::to_f32_bits(0x0001, Dtype::fp16) == 0x33800000u);  // 2^-24, min subnormal
  CHECK(num::to_f32_bits(0x03FF, Dtype::fp16) == 0x387FC000u);  // 1023 * 2^-24
  CHECK(num::to_f32_bits(0x0400, Dtype::fp16) == 0x38800000u);  // 2^-14, min normal
  CHECK(num::to_f32_bits(0x7BFF, Dtype::fp16) == 0x477FE000u);  // 65504
  CHECK(num::to_f32_bits(0x8000, Dtype::fp16) == 0x80000000u);  // -0
  CHECK(num::to_f32_bits(0xFC00, Dtype::fp16) == 0xFF800000u);  // -inf
  CHECK(num::to_f32_bits(0x7C01, Dtype::fp16) == 0x7FC00000u);  // sNaN
  CHECK(num::to_f32_bits(0xFE00, Dtype::fp16) == 0x7FC00000u);  // negative qNaN
  CHECK(num::to_f32_bits(0xABCD3C00, Dtype::fp16) == 0x3F800000u);  // upper bits ignored
  CHECK(num::to_f32_bits(0x3F80, Dtype::bf16) == 0x3F800000u);
  CHECK(num::to_f32_bits(0x0001, Dtype::bf16) == 0x00010000u);  // subnormal kept
  CHECK(num::to_f32_bits(0xFF80, Dtype::bf16) == 0xFF800000u);
  CHECK(num::to_f32_bits(0xFF81, Dtype::bf16) == 0x7FC00000u);
  CHECK(num::to_f32_bits(0x12343F80, Dtype::bf16) == 0x3F800000u);
  CHECK(num::to_f32_bits(0x00000001, Dtype::fp32) == 0x00000001u);
  CHECK(num::to_f32_bits(0x7F800001, Dtype::fp32) == 0x7FC00000u);
  CHECK(num::to_f32_bits(0xFFFFFFFF, Dtype::fp32) == 0x7FC00000u);
}

TEST_CASE("from_f32_bits rounds to nearest even", "[numerics]") {
  // fp16
  CHECK(num::from_f32_bits(0x477FE000, Dtype::fp16) == 0x7BFFu);  // 65504
  CHECK(num::from_f32_bits(0x477FEFFF, Dtype::fp16) == 0x7BFFu);  // just below 65520
  CHECK(num::from_f32_bits(0x477FF000, Dtype::fp16) == 0x7C00u);  // 65520: tie, to inf
  CHECK(num::from_f32_bits(0xC77FF000, Dtype::fp16) == 0xFC00u);
  CHECK(num::from_f32_bits(f2b(1e10f), Dtype::fp16) == 0x7C00u);
  CHECK(num::from_f32_bits(0x3F801000, Dtype::fp16) == 0x3C00u);  // 1 + 2^-11: tie to even (down)
  CHECK(num::from_f32_bits(0x3F803000, Dtype::fp16) == 0x3C02u);  // 1 + 3*2^-11: tie to even (up)
  CHECK(num::from_f32_bits(0x3F801001, Dtype::fp16) == 0x3C01u);
  CHECK(num::from_f32_bits(0x33000000, Dtype::fp16) == 0x0000u);  // 2^-25: tie with 0
  CHECK(num::from_f32_bits(0x33000001, Dtype::fp16) == 0x0001u);
  CHECK(num::from_f32_bits(0x33C00000, Dtype::fp16) == 0x0002u);  // 1.5 * 2^-24: tie, to 2
  CHECK(num::from_f32_bits(0x387FE000, Dtype::fp16) == 0x0400u);  // 1023.5 * 2^-24: tie, to min normal
  CHECK(num::from_f32_bits(0x00000001, Dtype::fp16) == 0x0000u);
  CHECK(num::from_f32_bits(0x80000000, Dtype::fp16) == 0x8000u);
  CHECK(num::from_f32_bits(0xFF800000, Dtype::fp16) == 0xFC00u);
  CHECK(num::from_f32_bits(0x7F800001, Dtype::fp16) == 0x7E00u);
  CHECK(num::from_f32_bits(0xFFC00000, Dtype::fp16) == 0x7E00u);
  // bf16
  CHECK(num::from_f32_bits(0x3F808000, Dtype::bf16) == 0x3F80u);  // tie, down to even
  CHECK(num::from_f32_bits(0x3F818000, Dtype::bf16) == 0x3F82u);  // tie, up to even
  CHECK(num::from_f32_bits(0x3F808001, Dtype::bf16) == 0x3F81u);
  CHECK(num::from_f32_bits(0x3F807FFF, Dtype::bf16) == 0x3F80u);
  CHECK(num::from_f32_bits(0x7F7F8000, Dtype::bf16) == 0x7F80u);  // overflow to inf
  CHECK(num::from_f32_bits(0x7F7F7FFF, Dtype::bf16) == 0x7F7Fu);
  CHECK(num::from_f32_bits(0x00008000, Dtype::bf16) == 0x0000u);  // subnormal tie
  CHECK(num::from_f32_bits(0x00018000, Dtype::bf16) == 0x0002u);
  CHECK(num::from_f32_bits(0x807FFFFF, Dtype::bf16) == 0x8080u);  // max subnormal up to -min normal
  CHECK(num::from_f32_bits(0xFF800000, Dtype::bf16) == 0xFF80u);
  CHECK(num::from_f32_bits(0x7F800001, Dtype::bf16) == 0x7FC0u);
  CHECK(num::from_f32_bits(0xFFFFFFFF, Dtype::bf16) == 0x7FC0u);
  // fp32
  CHECK(num::from_f32_bits(0x00000001, Dtype::fp32) == 0x00000001u);
  CHECK(num::from_f32_bits(0xFF800000, Dtype::fp32) == 0xFF800000u);
  CHECK(num::from_f32_bits(0xFF800001, Dtype::fp32) == 0x7FC00000u);
}

TEST_CASE("alu: IEEE binary32 RNE with subnormals and canonical NaN", "[numerics]") {
  using num::alu;
  CHECK(alu(AluOp::add, 0x3FC00000, 0x40100000) == 0x40700000u);       // 1.5 + 2.25 = 3.75
  CHECK(alu(AluOp::subtract, 0x3FC00000, 0x40100000) == 0xBF400000u);  // 1.5 - 2.25 = -0.75
  CHECK(alu(AluOp::multiply, 0x3FC00000, 0x40100000) == 0x40580000u);  // 3.375
  CHECK(alu(AluOp::add, 0x00000001, 0x00000001) == 0x00000002u);       // no flush-to-zero
  CHECK(alu(AluOp::subtract, 0x00800000, 0x00000001) == 0x007FFFFFu);
  CHECK(alu(AluOp::multiply, 0x00000001, 0x3F000000) == 0x00000000u);  // 0.5 min subnormal: tie to 0
  CHECK(alu(AluOp::multiply, 0x00000003, 0x3F000000) == 0x00000002u);  // 1.5: tie to 2
  CHECK(alu(AluOp::multiply, 0x80000003, 0x3F000000) == 0x80000002u);
  CHECK(alu(AluOp::multiply, 0x00800000, 0x3F000000) == 0x00400000u);  // min normal / 2
  CHECK(alu(AluOp::add, 0x3F800000, 0x33800000) == 0x3F800000u);       // 1 + 2^-24: tie, down
  CHECK(alu(AluOp::add, 0x3F800000, 0x34400000) == 0x3F800002u);       // 1 + 3*2^-24: tie, up
  CHECK(alu(AluOp::add, 0x7F7FFFFF, 0x7F7FFFFF) == 0x7F800000u);       // overflow
  CHECK(alu(AluOp::multiply, 0x7F000000, 0xC0000000) == 0xFF800000u);  // 2^127 * -2
  CHECK(alu(AluOp::add, 0x3F800000, 0xBF800000) == 0x00000000u);       // x - x = +0
  CHECK(alu(AluOp::add, 0x80000000, 0x80000000) == 0x80000000u);       // -0 + -0
  CHECK(alu(AluOp::add, 0x80000000, 0x00000000) == 0x00000000u);
  CHECK(alu(AluOp::subtract, 0x80000000, 0x00000000) == 0x80000000u);  // -0 - +0
  CHECK(alu(AluOp::multiply, 0x80000000, 0x3F800000) == 0x80000000u);
  CHECK(alu(AluOp::add, 0x7F800000, 0xFF800000) == 0x7FC00000u);       // inf - inf
  CHECK(alu(AluOp::subtract, 0x7F800000, 0x7F800000) == 0x7FC00000u);
  CHECK(alu(AluOp::multiply, 0x00000000, 0xFF800000) == 0x7FC00000u);  // 0 * inf
  CHECK(alu(AluOp::add, 0x7F800001, 0x3F800000) == 0x7FC00000u);       // sNaN
  CHECK(alu(AluOp::multiply, 0xFFC00001, 0x3F800000) == 0x7FC00000u);  // negative NaN payload
  CHECK(alu(AluOp::max, 0x80000000, 0x00000000) == 0x00000000u);
  CHECK(alu(AluOp::max, 0x00000000, 0x80000000) == 0x00000000u);
  CHECK(alu(AluOp::min, 0x80000000, 0x00000000) == 0x80000000u);
  CHECK(alu(AluOp::min, 0x00000000, 0x80000000) == 0x80000000u);
  CHECK(alu(AluOp::max, 0xFF800000, 0xBF800000) == 0xBF800000u);  // max(-inf, -1)
  CHECK(alu(AluOp::min, 0xFF800000, 0xBF800000) == 0xFF800000u);
  CHECK(alu(AluOp::max, 0x00000001, 0x80000001) == 0x00000001u);
  CHECK(alu(AluOp::max, 0x7FC00000, 0x3F800000) == 0x7FC00000u);
  CHECK(alu(AluOp::min, 0x3F800000, 0x7F800001) == 0x7FC00000u);
  CHECK(alu(AluOp::bypass, 0x7F800001, 0x3F800000) == 0x7F800001u);  // bypass: a untouched
}

TEST_CASE("the host float environment is IEEE (no FTZ/DAZ, RNE)", "[numerics]") {
  CHECK(num::host_float_is_ieee());
}

TEST_CASE("load/store elements little-endian", "[numerics]") {
  uint8_t buf[4] = {0, 0, 0, 0};
  num::store_elem(buf, Dtype::fp32, 0x11223344);
  CHECK((buf[0] == 0x44 && buf[1] == 0x33 && buf[2] == 0x22 && buf[3] == 0x11));
  CHECK(num::load_elem(buf, Dtype::fp32) == 0x11223344u);
  CHECK(num::load_elem(buf, Dtype::fp16) == 0x3344u);
  num::store_elem(buf, Dtype::bf16, 0xAABBCCDD);
  CHECK((buf[0] == 0xDD && buf[1] == 0xCC && buf[2] == 0x22 && buf[3] == 0x11));
  CHECK(num::load_bytes(buf, 2) == 0xCCDDu);
  CHECK(num::dtype_bytes(Dtype::bf16) == 2);
}

TEST_CASE("integer dtypes: 1-byte elements, exact widening, nearest-even rounding, saturation", "[numerics]") {
  uint8_t buf[4] = {0x11, 0x22, 0x33, 0x44};
  num::store_elem(buf, Dtype::int8, 0xFFFFFF80u);
  CHECK((buf[0] == 0x80 && buf[1] == 0x22));
  CHECK(num::load_elem(buf, Dtype::uint8) == 0x80u);
  auto f = [](float x) { return num::float_to_bits(x); };
  // widening
  CHECK(num::to_float(0x80, Dtype::int8) == -128.0f);
  CHECK(num::to_float(0x80, Dtype::uint8) == 128.0f);
  CHECK(num::to_float(0xFFFF, Dtype::int16) == -1.0f);
  CHECK(num::to_float(0xFFFF, Dtype::uint16) == 65535.0f);
  CHECK(num::to_float(0x80000000u, Dtype::int32) == -2147483648.0f);
  CHECK(num::to_float(0xFFFFFFFFu, Dtype::uint32) == 4294967296.0f);  // 2^32 - 1 rounds up
  CHECK(num::to_float(16777217u, Dtype::int32) == 16777216.0f);       // 2^24 + 1: tie to even
  CHECK(num::to_float(16777219u, Dtype::int32) == 16777220.0f);       // 2^24 + 3: tie to even (up)
  // rounding: to nearest, ties to even
  CHECK(num::from_f32_bits(f(2.5f), Dtype::int32) == 2u);
  CHECK(num::from_f32_bits(f(3.5f), Dtype::int32) == 4u);
  CHECK(num::from_f32_bits(f(-2.5f), Dtype::int32) == static_cast<uint32_t>(-2));
  CHECK(num::from_f32_bits(f(0.5f), Dtype::int8) == 0u);
  CHECK(num::from_f32_bits(f(0.75f), Dtype::int8) == 1u);
  CHECK(num::from_f32_bits(f(-0.75f), Dtype::int8) == 0xFFu);
  CHECK(num::from_f32_bits(f(-0.0f), Dtype::uint8) == 0u);
  // saturation and NaN
  CHECK(num::from_f32_bits(f(300.0f), Dtype::int8) == 0x7Fu);
  CHECK(num::from_f32_bits(f(-300.0f), Dtype::int8) == 0x80u);
  CHECK(num::from_f32_bits(f(-1.0f), Dtype::uint8) == 0u);
  CHECK(num::from_f32_bits(f(70000.0f), Dtype::uint16) == 0xFFFFu);
  CHECK(num::from_f32_bits(f(-40000.0f), Dtype::int16) == 0x8000u);
  CHECK(num::from_f32_bits(f(2147483648.0f), Dtype::int32) == 0x7FFFFFFFu);
  CHECK(num::from_f32_bits(f(-2147483648.0f), Dtype::int32) == 0x80000000u);
  CHECK(num::from_f32_bits(f(4294967040.0f), Dtype::uint32) == 4294967040u);
  CHECK(num::from_f32_bits(f(1e30f), Dtype::uint32) == 0xFFFFFFFFu);
  CHECK(num::from_f32_bits(0x7F800000u, Dtype::int32) == 0x7FFFFFFFu);  // +inf
  CHECK(num::from_f32_bits(0xFF800000u, Dtype::int32) == 0x80000000u);  // -inf
  CHECK(num::from_f32_bits(0x7FC00000u, Dtype::int32) == 0u);           // NaN
  CHECK(num::from_f32_bits(0xFFC00001u, Dtype::uint8) == 0u);
}

TEST_CASE("bf16 and fp16 rounding agree with a nearest-by-distance reference", "[numerics]") {
  const DistanceRef bf16(Dtype::bf16, std::ldexp(2.0 - std::ldexp(1.0, -8), 127), 0x7F80);
  const DistanceRef fp16(Dtype::fp16, 65520.0, 0x7C00);
  std::mt19937 rng(12345);
  uint64_t bad_bf = 0, bad_fp = 0, n = 0;
  auto check = [&](uint32_t f) {
    if (num::f32_bits_is_nan(f)) return;
    const float x = num::bits_to_float(f);
    const uint32_t gb = num::from_f32_bits(f, Dtype::bf16), wb = bf16.round(x);
    const uint32_t gh = num::from_f32_bits(f, Dtype::fp16), wh = fp16.round(x);
    if ((gb != wb || gh != wh) && bad_bf + bad_fp < 10) UNSCOPED_INFO(std::hex << f << ": bf16 " << gb << " vs " << wb << ", fp16 " << gh << " vs " << wh);
    bad_bf += gb != wb;
    bad_fp += gh != wh;
    ++n;
  };
  // Every exponent, ties and their neighbours at both formats' rounding points, random rest.
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t hi = 0; hi < 1024; ++hi)
      for (uint32_t lo : {0x0u, 0x1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu, uint32_t(rng() & 0x1FFF)}) {
        const uint32_t m = hi << 13 | lo;
        check(e << 23 | m);
        check(0x80000000u | e << 23 | (m ^ 0x8000u));  // moves the bf16 tie bit too
      }
  for (int k = 0; k < 1000000; ++k) check(static_cast<uint32_t>(rng()));
  INFO("values checked: " << n);
  CHECK(bad_bf == 0);
  CHECK(bad_fp == 0);
}

TEST_CASE("fp8: hand-computed values, ties, subnormals, overflow and NaN", "[numerics]") {
  const Dtype e4 = Dtype::fp8_e4m3, e5 = Dtype::fp8_e5m2;
  // widening: 1.0, the largest finite, the smallest subnormal, infinities, a NaN
  CHECK(num::to_float(0x38, e4) == 1.0f);
  CHECK(num::to_float(0x3C, e5) == 1.0f);
  CHECK(num::to_float(0x77, e4) == 240.0f);
  CHECK(num::to_float(0x7B, e5) == 57344.0f);
  CHECK(num::to_float(0x01, e4) == std::ldexp(1.0f, -9));
  CHECK(num::to_float(0x81, e5) == -std::ldexp(1.0f, -16));
  CHECK(num::to_float(0x07, e4) == 7 * std::ldexp(1.0f, -9));  // the largest subnormal
  CHECK(num::to_f32_bits(0x78, e4) == 0x7F800000u);
  CHECK(num::to_f32_bits(0xFC, e5) == 0xFF800000u);
  CHECK(num::to_f32_bits(0x79, e4) == num::kF32CanonNan);
  CHECK(num::to_f32_bits(0x7F, e5) == num::kF32CanonNan);
  CHECK(num::to_f32_bits(0x1238, e4) == f2b(1.0f));  // bits above the byte are not the element's
  // rounding: ties to even (1 + 1/16 lies between 1 and 1.125 in e4m3; 1 + 3/16 between 1.125 and 1.25)
  CHECK(num::from_f32_bits(f2b(1.0625f), e4) == 0x38u);
  CHECK(num::from_f32_bits(f2b(1.1875f), e4) == 0x3Au);
  CHECK(num::from_f32_bits(f2b(1.0626f), e4) == 0x39u);
  CHECK(num::from_f32_bits(f2b(-1.125f), e5) == 0xBCu);   // e5m2: 1, 1.25: a tie to 1
  CHECK(num::from_f32_bits(f2b(1.375f), e5) == 0x3Eu);    // between 1.25 and 1.5: to 1.5
  // subnormals: half the smallest is a tie to 0, a little more rounds up
  CHECK(num::from_f32_bits(f2b(std::ldexp(1.0f, -10)), e4) == 0x00u);
  CHECK(num::from_f32_bits(f2b(std::ldexp(1.5f, -10)), e4) == 0x01u);
  CHECK(num::from_f32_bits(f2b(-std::ldexp(1.0f, -30)), e4) == 0x80u);  // -0
  CHECK(num::from_f32_bits(f2b(std::ldexp(15.0f, -10)), e4) == 0x08u);  // 7.5 subnormal steps: to 8, the smallest normal
  // overflow: up to the largest finite plus half a step stays finite; from there, infinity
  CHECK(num::from_f32_bits(f2b(247.9f), e4) == 0x77u);
  CHECK(num::from_f32_bits(f2b(248.0f), e4) == 0x78u);
  CHECK(num::from_f32_bits(f2b(-1e6f), e4) == 0xF8u);
  CHECK(num::from_f32_bits(f2b(61439.0f), e5) == 0x7Bu);
  CHECK(num::from_f32_bits(f2b(61440.0f), e5) == 0x7Cu);
  CHECK(num::from_f32_bits(0x7F800000u, e5) == 0x7Cu);
  CHECK(num::from_f32_bits(0xFFC00001u, e4) == 0x7Cu);  // NaN: the canonical one
  CHECK(num::from_f32_bits(0x7FC00000u, e5) == 0x7Eu);
}

TEST_CASE("tf32: ten mantissa bits, nearest even, subnormals, overflow, the low bits ignored when read", "[numerics]") {
  const Dtype t = Dtype::tf32;
  CHECK(num::from_f32_bits(0x3F800FFFu, t) == 0x3F800000u);  // below half a step
  CHECK(num::from_f32_bits(0x3F801000u, t) == 0x3F800000u);  // a tie to the even 1.0
  CHECK(num::from_f32_bits(0x3F803000u, t) == 0x3F804000u);  // a tie from an odd step: up
  CHECK(num::from_f32_bits(0x3F801001u, t) == 0x3F802000u);  // above half a step
  CHECK(num::from_f32_bits(0x3FFFF000u, t) == 0x40000000u);  // a carry into the exponent
  CHECK(num::from_f32_bits(0x7F7FFFFFu, t) == 0x7F800000u);  // past the largest finite: infinity
  CHECK(num::from_f32_bits(0x7F7FE000u, t) == 0x7F7FE000u);  // the largest finite
  CHECK(num::from_f32_bits(0x00001000u, t) == 0x00000000u);  // half the smallest subnormal step: to 0
  CHECK(num::from_f32_bits(0x00003000u, t) == 0x00004000u);  // 1.5 steps: to 2
  CHECK(num::from_f32_bits(0xFFC00001u, t) == num::kF32CanonNan);
  CHECK(num::to_f32_bits(0x3F801FFFu, t) == 0x3F800000u);
  CHECK(num::to_f32_bits(0x7F800001u, t) == 0x7F800000u);    // a payload only in the low bits: infinity
}
