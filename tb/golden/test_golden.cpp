// Tests of the golden instruction-level model against answers worked out by hand: every
// instruction (tensor_reduce and activation included), access patterns (partition stride, strides, negative strides), in-place operands,
// the semaphore run order, deadlock detection, out-of-range operands and first_mismatch.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "golden_model.hpp"
#include "ncore/ap.hpp"
#include "ncore/error.hpp"

using namespace ncore;
using isa::AluOp;
using isa::Buffer;
using isa::Dtype;
using isa::Opcode;

namespace {

const Preset& tiny() { return *find_preset("tiny"); }  // 16 partitions x 4096 B, 2 DMA engines

isa::Insn make(Opcode op) {
  isa::Insn i;
  i.opcode = op;
  i.engine = op == Opcode::dma_copy ? isa::Engine::dma : op == Opcode::sem_wait ? isa::Engine::sp : isa::Engine::dve;
  return i;
}

// An instruction op from src to dst.
isa::Insn make(Opcode op, const isa::Ap& src, const isa::Ap& dst) {
  isa::Insn i = make(op);
  i.src0 = src;
  i.dst = dst;
  return i;
}

isa::Insn dma(const isa::Ap& src, const isa::Ap& dst) { return make(Opcode::dma_copy, src, dst); }

void put(GoldenModel& m, Buffer b, uint32_t part, int64_t addr, Dtype dt, const std::vector<uint32_t>& bits) {
  const unsigned nb = isa::dtype_bytes(dt);
  for (size_t k = 0; k < bits.size(); ++k) m.write_bits(b, part, addr + int64_t(k * nb), nb, bits[k]);
}

std::vector<uint32_t> get(const GoldenModel& m, Buffer b, uint32_t part, int64_t addr, Dtype dt, size_t n) {
  const unsigned nb = isa::dtype_bytes(dt);
  std::vector<uint32_t> out;
  for (size_t k = 0; k < n; ++k) out.push_back(m.read_bits(b, part, addr + int64_t(k * nb), nb));
  return out;
}

using V = std::vector<uint32_t>;

}  // namespace

TEST_CASE("memories start zeroed and are sized by the preset", "[golden]") {
  GoldenModel m(tiny(), 1024);
  CHECK(m.hbm_bytes() == 1024);
  CHECK(m.hbm()[1023] == 0);
  CHECK(m.sbuf(15)[4095] == 0);
  CHECK(m.sbuf(1) - m.sbuf(0) == 4096);
  CHECK_THROWS_AS(m.sbuf(16), SimError);
}

TEST_CASE("dma_copy HBM to SBUF with a partition stride keeps bits exactly", "[golden]") {
  GoldenModel m(tiny(), 1024);
  // Two HBM rows of three fp32, rows 4 elements apart, starting at byte 64.
  put(m, Buffer::hbm, 0, 64, Dtype::fp32, {0x3F800000, 0x7F800001, 0x80000000, 0xDEADBEEF,  // row 0 (+pad)
                                          0xFFC12345, 0x00000001, 0x7F7FFFFF});              // row 1
  m.execute(dma(hbm_ap(Dtype::fp32, 2, 4, 64, 3), sbuf_ap(Dtype::fp32, 2, 2, 8, 3)));
  CHECK(get(m, Buffer::sbuf, 2, 8, Dtype::fp32, 3) == V{0x3F800000, 0x7F800001, 0x80000000});  // NaN payload kept
  CHECK(get(m, Buffer::sbuf, 3, 8, Dtype::fp32, 3) == V{0xFFC12345, 0x00000001, 0x7F7FFFFF});
  CHECK(get(m, Buffer::sbuf, 2, 4, Dtype::fp32, 1) == V{0});   // nothing before the operand
  CHECK(get(m, Buffer::sbuf, 2, 20, Dtype::fp32, 1) == V{0});  // nor after it
  CHECK(get(m, Buffer::sbuf, 4, 8, Dtype::fp32, 1) == V{0});

  // And back out to HBM as one row of six (SBUF -> HBM, rows 3 apart).
  m.execute(dma(sbuf_ap(Dtype::fp32, 2, 2, 8, 3), hbm_ap(Dtype::fp32, 2, 3, 512, 3)));
  CHECK(get(m, Buffer::hbm, 0, 512, Dtype::fp32, 6) ==
        V{0x3F800000, 0x7F800001, 0x80000000, 0xFFC12345, 0x00000001, 0x7F7FFFFF});
}

TEST_CASE("dma_copy between dtypes casts through fp32 with RNE", "[golden]") {
  GoldenModel m(tiny(), 1024);
  put(m, Buffer::hbm, 0, 0, Dtype::fp32,
      {0x3F800000,    // 1.0              -> bf16 3F80, fp16 3C00
       0x3F808000,    // 1 + 2^-8: bf16 tie, down to 3F80; fp16 3C04 exactly
       0x3F818000,    // 1 + 3*2^-8: bf16 tie, up to 3F82; fp16 3C0C exactly
       0x477FF000,    // 65520: bf16 4780; fp16 tie to inf 7C00
       0x7F800001,    // sNaN -> 7FC0 / 7E00
       0x33000001});  // just above 2^-25: bf16 3300, fp16 min subnormal 0001
  const isa::Ap src = hbm_ap(Dtype::fp32, 1, 0, 0, 6);
  m.execute(dma(src, sbuf_ap(Dtype::bf16, 0, 1, 0, 6)));
  CHECK(get(m, Buffer::sbuf, 0, 0, Dtype::bf16, 6) == V{0x3F80, 0x3F80, 0x3F82, 0x4780, 0x7FC0, 0x3300});
  m.execute(dma(src, sbuf_ap(Dtype::fp16, 1, 1, 0, 6)));
  CHECK(get(m, Buffer::sbuf, 1, 0, Dtype::fp16, 6) == V{0x3C00, 0x3C04, 0x3C0C, 0x7C00, 0x7E00, 0x0001});
  // fp16 -> fp32 is exact.
  m.execute(dma(sbuf_ap(Dtype::fp16, 1, 1, 0, 6), hbm_ap(Dtype::fp32, 1, 0, 256, 6)));
  CHECK(get(m, Buffer::hbm, 0, 256, Dtype::fp32, 6) ==
        V{0x3F800000, 0x3F808000, 0x3F818000, 0x7F800000, 0x7FC00000, 0x33800000});
}

TEST_CASE("access patterns: 2-D strides and a negative stride", "[golden]") {
  GoldenModel m(tiny(), 1024);
  // A 3x4 row-major fp32 matrix with value 10*r + c.
  V mat;
  for (uint32_t r = 0; r < 3; ++r)
    for (uint32_t c = 0; c < 4; ++c) mat.push_back(num::float_to_bits(float(10 * r + c)));
  put(m, Buffer::hbm, 0, 0, Dtype::fp32, mat);

  // Read it column by column: innermost dim walks rows (stride 4), the next walks columns.
  isa::Insn t = make(Opcode::dma_copy);
  t.src0 = hbm_ap(Dtype::fp32, 1, 0, 0, 3);
  t.src0.size = {3, 4, 1, 1};
  t.src0.stride = {4, 1, 0, 0};
  t.dst = sbuf_ap(Dtype::fp32, 0, 1, 0, 12);
  m.execute(t);
  V want;
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t r = 0; r < 3; ++r) want.push_back(num::float_to_bits(float(10 * r + c)));
  CHECK(get(m, Buffer::sbuf, 0, 0, Dtype::fp32, 12) == want);

  // Reverse row 1: start at its last element, stride -1.
  isa::Insn rv = make(Opcode::dma_copy);
  rv.src0 = hbm_ap(Dtype::fp32, 1, 0, 4 * 7, 4);
  rv.src0.stride = {-1, 0, 0, 0};
  rv.dst = sbuf_ap(Dtype::fp32, 5, 1, 64, 4);
  m.execute(rv);
  CHECK(get(m, Buffer::sbuf, 5, 64, Dtype::fp32, 4) ==
        V{num::float_to_bits(13.f), num::float_to_bits(12.f), num::float_to_bits(11.f), num::float_to_bits(10.f)});
}

TEST_CASE("tensor_tensor: every op, fp32 in and out", "[golden]") {
  GoldenModel m(tiny(), 64);
  const V a = {0x3FC00000, 0x80000000, 0x40400000, 0x7F800001, 0x7F000000, 0x00000001};  // 1.5 -0 3 sNaN 2^127 minsub
  const V b = {0x40100000, 0x00000000, 0xC0A00000, 0x3F800000, 0x7F000000, 0x00000001};  // 2.25 +0 -5 1 2^127 minsub
  put(m, Buffer::sbuf, 4, 0, Dtype::fp32, a);
  put(m, Buffer::sbuf, 4, 64, Dtype::fp32, b);
  auto run = [&](AluOp op) {
    isa::Insn i = make(Opcode::tensor_tensor);
    i.op0 = op;
    i.src0 = sbuf_ap(Dtype::fp32, 4, 1, 0, 6);
    i.src1 = sbuf_ap(Dtype::fp32, 4, 1, 64, 6);
    i.dst = sbuf_ap(Dtype::fp32, 4, 1, 128, 6);
    m.execute(i);
    return get(m, Buffer::sbuf, 4, 128, Dtype::fp32, 6);
  };
  // 3.75, +0, -2, NaN, inf, 2*minsub
  CHECK(run(AluOp::add) == V{0x40700000, 0x00000000, 0xC0000000, 0x7FC00000, 0x7F800000, 0x00000002});
  // -0.75, -0, 8, NaN, +0, +0
  CHECK(run(AluOp::subtract) == V{0xBF400000, 0x80000000, 0x41000000, 0x7FC00000, 0x00000000, 0x00000000});
  // 3.375, -0, -15, NaN, inf, 2^-298 rounds to +0
  CHECK(run(AluOp::multiply) == V{0x40580000, 0x80000000, 0xC1700000, 0x7FC00000, 0x7F800000, 0x00000000});
  CHECK(run(AluOp::max) == V{0x40100000, 0x00000000, 0x40400000, 0x7FC00000, 0x7F000000, 0x00000001});
  CHECK(run(AluOp::min) == V{0x3FC00000, 0x80000000, 0xC0A00000, 0x7FC00000, 0x7F000000, 0x00000001});
}

TEST_CASE("tensor_tensor: mixed input dtypes, one rounding to the destination", "[golden]") {
  GoldenModel m(tiny(), 64);
  put(m, Buffer::sbuf, 0, 0, Dtype::fp16, {0x3C01, 0x3C00, 0x7BFF, 0x0001});  // 1+2^-10, 1, 65504, 2^-24
  put(m, Buffer::sbuf, 0, 32, Dtype::bf16, {0x3A00, 0x3A00, 0x4170, 0x3380});  // 2^-11, 2^-11, 15, 2^-24
  isa::Insn i = make(Opcode::tensor_tensor, sbuf_ap(Dtype::fp16, 0, 1, 0, 4), sbuf_ap(Dtype::fp16, 0, 1, 64, 4));
  i.op0 = AluOp::add;
  i.src1 = sbuf_ap(Dtype::bf16, 0, 1, 32, 4);
  m.execute(i);
  // 1 + 1.5 ulp: tie, up to even 3C02; 1 + 0.5 ulp: tie, down to 3C00; 65519: below 65520, stays
  // 7BFF; 2^-23 = fp16 subnormal 2.
  CHECK(get(m, Buffer::sbuf, 0, 64, Dtype::fp16, 4) == V{0x3C02, 0x3C00, 0x7BFF, 0x0002});
}

TEST_CASE("tensor_scalar: immediates, reversed operands, per-partition operands, bypass", "[golden]") {
  GoldenModel m(tiny(), 64);
  put(m, Buffer::sbuf, 6, 0, Dtype::fp32, {0x3F800000, 0x40000000});  // partition 6: 1, 2
  put(m, Buffer::sbuf, 7, 0, Dtype::fp32, {0x40400000, 0x40800000});  // partition 7: 3, 4

  SECTION("(10 - x) * 0.5 with immediates") {
    isa::Insn i = make(Opcode::tensor_scalar);
    i.src0 = sbuf_ap(Dtype::fp32, 6, 2, 0, 2);
    i.dst = sbuf_ap(Dtype::fp32, 6, 2, 16, 2);
    i.op0 = AluOp::subtract;
    i.rev0 = true;
    i.imm0 = 0x41200000;  // 10
    i.op1 = AluOp::multiply;
    i.imm1 = 0x3F000000;  // 0.5
    m.execute(i);
    CHECK(get(m, Buffer::sbuf, 6, 16, Dtype::fp32, 2) == V{0x40900000, 0x40800000});  // 4.5, 4
    CHECK(get(m, Buffer::sbuf, 7, 16, Dtype::fp32, 2) == V{0x40600000, 0x40400000});  // 3.5, 3
  }
  SECTION("x - s0[p] per partition, then max with s1[p] reversed, bf16 out") {
    put(m, Buffer::sbuf, 6, 100, Dtype::bf16, {0x3F80});  // s0: 1 on partition 6
    put(m, Buffer::sbuf, 7, 100, Dtype::bf16, {0xC2C8});  //     -100 on partition 7
    put(m, Buffer::sbuf, 6, 200, Dtype::fp16, {0x3C00});  // s1: 1 on partition 6
    put(m, Buffer::sbuf, 7, 200, Dtype::fp16, {0x5C04});  //     257 on partition 7
    isa::Insn i = make(Opcode::tensor_scalar);
    i.src0 = sbuf_ap(Dtype::fp32, 6, 2, 0, 2);
    i.dst = sbuf_ap(Dtype::bf16, 6, 2, 32, 2);
    i.op0 = AluOp::subtract;
    i.s0_vec = true;
    i.s0 = {Buffer::sbuf, Dtype::bf16, 6, 100};
    i.op1 = AluOp::max;
    i.rev1 = true;
    i.s1_vec = true;
    i.s1 = {Buffer::sbuf, Dtype::fp16, 6, 200};
    i.imm0 = 0x7F800001;  // ignored: s0_vec
    m.execute(i);
    // p6: max(1, 1-1=0) = 1, max(1, 2-1=1) = 1.  p7: max(257, 103) = 257 -> bf16 tie to 256 (0x4380), max(257, 104).
    CHECK(get(m, Buffer::sbuf, 6, 32, Dtype::bf16, 2) == V{0x3F80, 0x3F80});
    CHECK(get(m, Buffer::sbuf, 7, 32, Dtype::bf16, 2) == V{0x4380, 0x4380});
  }
  SECTION("op1 = bypass leaves the first result; op0 = bypass passes x") {
    isa::Insn i = make(Opcode::tensor_scalar);
    i.src0 = sbuf_ap(Dtype::fp32, 6, 1, 0, 2);
    i.dst = sbuf_ap(Dtype::fp16, 6, 1, 48, 2);
    i.op0 = AluOp::bypass;
    i.imm0 = 0x7FC00000;
    i.op1 = AluOp::add;
    i.imm1 = 0x3A800000;  // 2^-10: 1 + 2^-10 = 0x3C01, 2 + 2^-10 = tie -> 0x4000
    m.execute(i);
    CHECK(get(m, Buffer::sbuf, 6, 48, Dtype::fp16, 2) == V{0x3C01, 0x4000});
    i.op0 = AluOp::multiply;
    i.imm0 = 0xC0000000;  // -2
    i.op1 = AluOp::bypass;
    i.imm1 = 0x7F800001;
    m.execute(i);
    CHECK(get(m, Buffer::sbuf, 6, 48, Dtype::fp16, 2) == V{0xC000, 0xC400});  // -2, -4
  }
}

TEST_CASE("tensor_reduce: trailing axes, fold order from the first element, one rounding", "[golden]") {
  GoldenModel m(tiny(), 64);
  // partition 3: a (2, 2, 3) fp32 tile, innermost 3: 1 2 3 | 4 5 6 || -1 -2 -3 | 0.5 NaN 7
  put(m, Buffer::sbuf, 3, 0, Dtype::fp32,
      {0x3F800000, 0x40000000, 0x40400000, 0x40800000, 0x40A00000, 0x40C00000, 0xBF800000, 0xC0000000, 0xC0400000,
       0x3F000000, 0x7FC00001, 0x40E00000});
  auto reduce = [&](AluOp op, uint32_t axes, Dtype dt, uint32_t n_out) {
    isa::Insn i = make(Opcode::tensor_reduce);
    i.op0 = op;
    i.red_axes = axes;
    i.src0 = sbuf_ap(Dtype::fp32, 3, 1, 0, 3);
    i.src0.size = {3, 2, 2, 1};
    i.src0.stride = {1, 3, 6, 0};
    i.dst = sbuf_ap(dt, 3, 1, 256, n_out);
    m.execute(i);
    return get(m, Buffer::sbuf, 3, 256, dt, n_out);
  };
  CHECK(reduce(AluOp::add, 1, Dtype::fp32, 4) == V{0x40C00000, 0x41700000, 0xC0C00000, 0x7FC00000});  // 6 15 -6 NaN
  CHECK(reduce(AluOp::max, 2, Dtype::fp32, 2) == V{0x40C00000, 0x7FC00000});                        // 6, NaN wins
  CHECK(reduce(AluOp::min, 3, Dtype::bf16, 1) == V{0x7FC0});
  CHECK(reduce(AluOp::min, 4, Dtype::fp32, 1) == V{0x7FC00000});
  // left to right from the first element: 2^24 + 1 + 1 stays 2^24 (each step a tie to even),
  // and 1 + 3 * 2^-8 is exact in fp32 but a tie in bf16, rounded once to the even 0x3F82
  put(m, Buffer::sbuf, 4, 0, Dtype::fp32, {0x4B800000, 0x3F800000, 0x3F800000});
  put(m, Buffer::sbuf, 4, 16, Dtype::fp32, {0x3F800000, 0x3B800000, 0x3B800000, 0x3B800000});
  isa::Insn i = make(Opcode::tensor_reduce);
  i.op0 = AluOp::add;
  i.red_axes = 1;
  i.src0 = sbuf_ap(Dtype::fp32, 4, 1, 0, 3);
  i.dst = sbuf_ap(Dtype::fp32, 4, 1, 64, 1);
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 4, 64, Dtype::fp32, 1) == V{0x4B800000});
  i.src0 = sbuf_ap(Dtype::fp32, 4, 1, 16, 4);
  i.dst = sbuf_ap(Dtype::bf16, 4, 1, 68, 1);
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 4, 68, Dtype::bf16, 1) == V{0x3F82});
  // one element per group: the element through fp32 (NaN canonical), -0 kept
  put(m, Buffer::sbuf, 4, 32, Dtype::fp32, {0x80000000, 0x7F800001});
  i.src0 = sbuf_ap(Dtype::fp32, 4, 1, 32, 1);
  i.src0.size = {1, 2, 1, 1};
  i.src0.stride = {1, 1, 0, 0};
  i.dst = sbuf_ap(Dtype::fp32, 4, 1, 72, 2);
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 4, 72, Dtype::fp32, 2) == V{0x80000000, 0x7FC00000});
}

TEST_CASE("activation: func(x * scale + bias), rounding order, add-reduce", "[golden]") {
  GoldenModel m(tiny(), 64);
  // partitions 5, 6: bf16 1, -2, -0, NaN; scale (fp32) 3 and 2; bias (bf16) 0.5 and -0.5
  for (uint32_t p = 5; p <= 6; ++p) put(m, Buffer::sbuf, p, 0, Dtype::bf16, {0x3F80, 0xC000, 0x8000, 0x7FC1});
  put(m, Buffer::sbuf, 5, 64, Dtype::fp32, {0x40400000});
  put(m, Buffer::sbuf, 6, 64, Dtype::fp32, {0x40000000});
  put(m, Buffer::sbuf, 5, 80, Dtype::bf16, {0x3F00});
  put(m, Buffer::sbuf, 6, 80, Dtype::bf16, {0xBF00});
  auto act = [&](isa::ActFunc f, uint32_t n, bool reduce) {
    isa::Insn i = make(Opcode::activation);
    i.engine = isa::Engine::act;
    i.func = f;
    i.src0 = sbuf_ap(Dtype::bf16, 5, 2, 0, n);
    i.dst = sbuf_ap(Dtype::fp32, 5, 2, 128, n);
    i.s0_vec = i.s1_vec = true;
    i.s0 = {Buffer::sbuf, Dtype::fp32, 5, 64};
    i.s1 = {Buffer::sbuf, Dtype::bf16, 5, 80};
    if (reduce) {
      i.dst2 = sbuf_ap(Dtype::fp32, 5, 2, 8, 1);
      i.dst2.mem = Buffer::psum;
    }
    m.execute(i);
    return i;
  };
  act(isa::ActFunc::copy, 4, false);
  // 1*3+0.5, -2*3+0.5, -0*3+0.5, NaN | 1*2-0.5, -2*2-0.5, -0*2-0.5, NaN
  CHECK(get(m, Buffer::sbuf, 5, 128, Dtype::fp32, 4) == V{0x40600000, 0xC0B00000, 0x3F000000, 0x7FC00000});
  CHECK(get(m, Buffer::sbuf, 6, 128, Dtype::fp32, 4) == V{0x3FC00000, 0xC0900000, 0xBF000000, 0x7FC00000});
  act(isa::ActFunc::relu, 4, false);
  CHECK(get(m, Buffer::sbuf, 5, 128, Dtype::fp32, 4) == V{0x40600000, 0x00000000, 0x3F000000, 0x7FC00000});
  CHECK(get(m, Buffer::sbuf, 6, 128, Dtype::fp32, 4) == V{0x3FC00000, 0x00000000, 0x00000000, 0x7FC00000});
  // add-reduce of func's fp32 outputs into PSUM: 3.5 - 5.5 + 0.5 = -1.5 and 1.5 - 4.5 - 0.5 = -3.5
  act(isa::ActFunc::copy, 3, true);
  CHECK(get(m, Buffer::psum, 5, 8, Dtype::fp32, 1) == V{0xBFC00000});
  CHECK(get(m, Buffer::psum, 6, 8, Dtype::fp32, 1) == V{0xC0600000});
  act(isa::ActFunc::relu, 3, true);  // 3.5 + 0 + 0.5 = 4 and 1.5 + 0 + 0 = 1.5
  CHECK(get(m, Buffer::psum, 5, 8, Dtype::fp32, 1) == V{0x40800000});
  CHECK(get(m, Buffer::psum, 6, 8, Dtype::fp32, 1) == V{0x3FC00000});
  // immediates: scale 2, no bias (-0.0) keeps -0; a bias of +0.0 makes it +0
  isa::Insn i = make(Opcode::activation);
  i.engine = isa::Engine::act;
  i.src0 = sbuf_ap(Dtype::bf16, 5, 1, 0, 3);
  i.dst = sbuf_ap(Dtype::bf16, 5, 1, 256, 3);
  i.imm0 = 0x40000000;
  i.imm1 = 0x80000000;
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 5, 256, Dtype::bf16, 3) == V{0x4000, 0xC080, 0x8000});
  i.imm1 = 0x00000000;
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 5, 256, Dtype::bf16, 3) == V{0x4000, 0xC080, 0x0000});
}

TEST_CASE("tensor_copy: bit copy for equal dtypes, cast otherwise", "[golden]") {
  GoldenModel m(tiny(), 64);
  put(m, Buffer::sbuf, 9, 0, Dtype::fp16, {0x7E01, 0xFC01, 0x0001, 0xFBFF});
  const isa::Ap fp16_in = sbuf_ap(Dtype::fp16, 9, 1, 0, 4), fp32_copy = sbuf_ap(Dtype::fp32, 9, 1, 32, 4);
  m.execute(make(Opcode::tensor_copy, fp16_in, sbuf_ap(Dtype::fp16, 9, 1, 16, 4)));
  CHECK(get(m, Buffer::sbuf, 9, 16, Dtype::fp16, 4) == V{0x7E01, 0xFC01, 0x0001, 0xFBFF});
  m.execute(make(Opcode::tensor_copy, fp16_in, fp32_copy));
  CHECK(get(m, Buffer::sbuf, 9, 32, Dtype::fp32, 4) == V{0x7FC00000, 0x7FC00000, 0x33800000, 0xC77FE000});
  m.execute(make(Opcode::tensor_copy, fp32_copy, sbuf_ap(Dtype::bf16, 9, 1, 64, 4)));
  CHECK(get(m, Buffer::sbuf, 9, 64, Dtype::bf16, 4) == V{0x7FC0, 0x7FC0, 0x3380, 0xC780});
}

TEST_CASE("memset writes imm0 rounded to the destination, and nothing else", "[golden]") {
  GoldenModel m(tiny(), 64);
  std::memset(m.sbuf(3), 0xAB, 64);
  isa::Insn i = make(Opcode::memset);
  i.dst = sbuf_ap(Dtype::bf16, 3, 1, 4, 3);
  i.imm0 = 0x3F818000;  // bf16 tie, up to 3F82
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 3, 0, Dtype::bf16, 6) == V{0xABAB, 0xABAB, 0x3F82, 0x3F82, 0x3F82, 0xABAB});
  i.dst = sbuf_ap(Dtype::fp16, 3, 1, 16, 2);
  i.imm0 = 0x477FF000;  // 65520 -> inf
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 3, 16, Dtype::fp16, 2) == V{0x7C00, 0x7C00});
  i.dst = sbuf_ap(Dtype::fp32, 3, 1, 32, 1);
  i.imm0 = 0xFF800001;  // NaN -> canonical
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 3, 32, Dtype::fp32, 1) == V{0x7FC00000});
}

TEST_CASE("operands are in place or apart: partial overlap is refused", "[golden]") {
  GoldenModel m(tiny(), 64);
  put(m, Buffer::sbuf, 0, 0, Dtype::fp32, {0x3F800000, 0x40000000, 0x40400000, 0x40800000});  // 1 2 3 4
  isa::Insn i = make(Opcode::tensor_tensor);
  i.op0 = AluOp::add;
  i.src0 = sbuf_ap(Dtype::fp32, 0, 1, 0, 4);
  i.src1 = i.src0;
  i.dst = sbuf_ap(Dtype::fp32, 0, 1, 4, 4);  // one element on: overlaps the sources in part
  CHECK_THROWS_WITH(m.execute(i), Catch::Contains("overlaps operand src0"));
  CHECK(get(m, Buffer::sbuf, 0, 0, Dtype::fp32, 4) == V{0x3F800000, 0x40000000, 0x40400000, 0x40800000});
  i.dst = i.src0;  // exactly in place: each element doubles
  m.execute(i);
  CHECK(get(m, Buffer::sbuf, 0, 0, Dtype::fp32, 4) == V{0x40000000, 0x40800000, 0x40C00000, 0x41000000});

  put(m, Buffer::sbuf, 1, 0, Dtype::fp16, {0x3C00, 0x4000, 0x4200});
  isa::Insn c = make(Opcode::tensor_copy);
  c.src0 = sbuf_ap(Dtype::fp16, 1, 1, 0, 3);
  c.dst = sbuf_ap(Dtype::fp16, 1, 1, 4, 3);
  c.dst.stride = {-1, 0, 0, 0};  // reversed on top of itself: the same bytes, another order
  CHECK_THROWS_WITH(m.execute(c), Catch::Contains("overlaps operand src0"));
  c.dst = sbuf_ap(Dtype::fp16, 1, 1, 10, 3);  // reversed, apart
  c.dst.stride = {-1, 0, 0, 0};
  m.execute(c);
  CHECK(get(m, Buffer::sbuf, 1, 6, Dtype::fp16, 3) == V{0x4200, 0x4000, 0x3C00});
}

TEST_CASE("out-of-range operands throw SimError and change nothing", "[golden]") {
  GoldenModel m(tiny(), 256);
  put(m, Buffer::hbm, 0, 0, Dtype::fp32, {0x3F800000});
  isa::Insn i = dma(hbm_ap(Dtype::fp32, 2, 4, 0, 4), sbuf_ap(Dtype::fp32, 15, 2, 0, 4));  // partitions 15..16 of 16
  CHECK_THROWS_AS(m.execute(i), SimError);
  CHECK(m.sbuf(15)[0] == 0);
  i.dst = sbuf_ap(Dtype::fp32, 0, 2, 4096 - 8, 4);  // past the end of a partition
  CHECK_THROWS_AS(m.execute(i), SimError);
  i.dst = sbuf_ap(Dtype::fp32, 0, 2, 0, 4);
  i.src0 = hbm_ap(Dtype::fp32, 2, 61, 0, 4);  // row 1 ends at byte 260 > 256
  CHECK_THROWS_AS(m.execute(i), SimError);
  i.src0 = hbm_ap(Dtype::fp32, 2, 4, 2, 4);  // misaligned
  CHECK_THROWS_AS(m.execute(i), SimError);
  i.src0 = hbm_ap(Dtype::fp32, 2, 4, 0, 4);
  i.engine = isa::Engine::dve;  // dma_copy on the wrong engine
  CHECK_THROWS_AS(m.execute(i), SimError);
  i.engine = isa::Engine::dma;
  m.execute(i);  // the valid one works
  CHECK(m.read_bits(Buffer::sbuf, 0, 0, 4) == 0x3F800000u);
  CHECK_THROWS_AS(m.read_bits(Buffer::hbm, 0, 254, 4), SimError);
  CHECK_THROWS_AS(m.read_bits(Buffer::sbuf, 16, 0, 4), SimError);
}

namespace {

// A Program with the five engine streams and `queues` DMA queue streams.
Program empty_program(unsigned queues) {
  Program p;
  p.kernel = "test";
  p.preset = "tiny";
  for (const char* n : {"pe", "act", "pool", "dve", "sp"}) p.streams.push_back(Stream{n, isa::Engine::none, 0, {}});
  p.streams[0].engine = isa::Engine::pe;
  p.streams[1].engine = isa::Engine::act;
  p.streams[2].engine = isa::Engine::pool;
  p.streams[3].engine = isa::Engine::dve;
  p.streams[4].engine = isa::Engine::sp;
  for (unsigned q = 0; q < queues; ++q) p.streams.push_back(Stream{"q" + std::to_string(q), isa::Engine::dma, q, {}});
  return p;
}

void wait(isa::Insn& i, uint32_t sem, isa::SemCond c, uint32_t v) {
  i.wait_sem = sem;
  i.wait_cond = c;
  i.wait_val = v;
}

void update(isa::Insn& i, uint32_t sem, isa::SemOp op, uint32_t v = 0) {
  i.upd_sem = sem;
  i.upd_op = op;
  i.upd_val = v;
}

}  // namespace

TEST_CASE("run honours semaphores: load, compute, store", "[golden]") {
  // dve (stream 3, semaphore 3) comes before q0 (stream 5, semaphore 5) in the stream order, so
  // ignoring the waits would add 1 to zeros and store before loading.
  Program p = empty_program(1);
  isa::Insn load = dma(hbm_ap(Dtype::fp32, 2, 2, 0, 2), sbuf_ap(Dtype::fp32, 0, 2, 0, 2));
  update(load, 5, isa::SemOp::inc);
  isa::Insn add = make(Opcode::tensor_scalar);
  add.src0 = sbuf_ap(Dtype::fp32, 0, 2, 0, 2);
  add.dst = sbuf_ap(Dtype::bf16, 0, 2, 64, 2);
  add.op0 = AluOp::add;
  add.imm0 = 0x3F800000;
  wait(add, 5, isa::SemCond::ge, 2);  // both DMA engines of the tiny preset
  update(add, 3, isa::SemOp::inc);
  isa::Insn store = dma(sbuf_ap(Dtype::bf16, 0, 2, 64, 2), hbm_ap(Dtype::fp32, 2, 2, 64, 2));
  wait(store, 3, isa::SemCond::ge, 1);
  update(store, 5, isa::SemOp::inc);
  p.streams[3].insns.push_back({add, 0});
  p.streams[5].insns.push_back({load, 0});
  p.streams[5].insns.push_back({store, 0});

  GoldenModel m(tiny(), 128);
  put(m, Buffer::hbm, 0, 0, Dtype::fp32, {0x3F800000, 0x40000000, 0x40400000, 0x43800000});  // 1 2 3 256
  const auto st = m.run(p);
  CHECK(st.instructions == 3);
  CHECK(st.dma_transfers == 2);
  // 2 3 4 257 -> bf16 (257 ties to 256) -> fp32
  CHECK(get(m, Buffer::hbm, 0, 64, Dtype::fp32, 4) == V{0x40000000, 0x40400000, 0x40800000, 0x43800000});
  CHECK(m.semaphores()[5] == 4);  // two transfers x two DMA engines
  CHECK(m.semaphores()[3] == 1);
}

TEST_CASE("run: every semaphore condition and update", "[golden]") {
  Program p = empty_program(0);
  auto sw = [](uint32_t ws, isa::SemCond c, uint32_t wv, uint32_t us, isa::SemOp op, uint32_t uv) {
    isa::Insn i = make(Opcode::sem_wait);
    wait(i, ws, c, wv);
    update(i, us, op, uv);
    return Instruction{i, 0};
  };
  using C = isa::SemCond;
  using O = isa::SemOp;
  // sp drives S[10] through set/add/sub/dec/inc; act follows with the other conditions on S[10]
  // and records each step in S[20]. The wait values force one order.
  auto& sp = p.streams[4].insns;
  auto& act = p.streams[1].insns;
  sp.push_back(sw(0, C::none, 0, 10, O::set, 7));    // S10 = 7
  act.push_back(sw(10, C::eq, 7, 20, O::inc, 0));    // S20 = 1
  sp.push_back(sw(20, C::ge, 1, 10, O::add, 5));     // S10 = 12
  act.push_back(sw(10, C::gt, 11, 20, O::inc, 0));   // S20 = 2
  sp.push_back(sw(20, C::ne, 1, 10, O::sub, 10));    // S10 = 2
  act.push_back(sw(10, C::lt, 3, 20, O::inc, 0));    // S20 = 3
  sp.push_back(sw(20, C::eq, 3, 10, O::dec, 0));     // S10 = 1
  act.push_back(sw(10, C::le, 1, 20, O::add, 100));  // S20 = 103
  sp.push_back(sw(20, C::gt, 102, 10, O::inc, 0));   // S10 = 2
  GoldenModel m(tiny(), 0);
  const auto st = m.run(p);
  CHECK(st.instructions == 9);
  CHECK(st.dma_transfers == 0);
  CHECK(m.semaphores()[10] == 2);
  CHECK(m.semaphores()[20] == 103);
  CHECK(sem_apply(O::dec, 0, 0) == 0xFFFFFFFFu);  // wraps like the hardware counter
}

TEST_CASE("run detects deadlock and names the blocked streams", "[golden]") {
  Program p = empty_program(2);
  isa::Insn a = make(Opcode::sem_wait);
  wait(a, 6, isa::SemCond::ge, 1);
  update(a, 1, isa::SemOp::inc);
  isa::Insn b = make(Opcode::sem_wait);
  wait(b, 1, isa::SemCond::ge, 1);
  update(b, 6, isa::SemOp::inc);
  isa::Insn free_insn = make(Opcode::sem_wait);
  update(free_insn, 7, isa::SemOp::inc);
  p.streams[1].insns.push_back({a, 0});          // act waits on q1
  p.streams[6].insns.push_back({free_insn, 0});  // q1 first does something that can run,
  p.streams[6].insns.push_back({b, 0});          // then waits on act
  GoldenModel m(tiny(), 0);
  try {
    m.run(p);
    FAIL("no deadlock reported");
  } catch (const SimError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("deadlock") != std::string::npos);
    CHECK(msg.find("stream act instruction 0") != std::string::npos);
    CHECK(msg.find("stream q1 instruction 1") != std::string::npos);
  }
  CHECK(m.semaphores()[7] == 1);
}

TEST_CASE("first_mismatch finds the first differing element of an operand", "[golden]") {
  GoldenModel exp(tiny(), 256), act(tiny(), 256);
  isa::Ap ap = sbuf_ap(Dtype::fp16, 2, 3, 10, 4);  // partitions 2..4, bytes 10..17
  auto reader = [](const GoldenModel& m, Buffer b) {
    return [&m, b](uint32_t part, int64_t addr, unsigned nb) { return m.read_bits(b, part, addr, nb); };
  };
  CHECK_FALSE(first_mismatch(ap, reader(exp, Buffer::sbuf), reader(act, Buffer::sbuf)).has_value());
  act.write_bits(Buffer::sbuf, 5, 12, 2, 0x1234);  // outside the operand's partitions
  act.write_bits(Buffer::sbuf, 3, 18, 2, 0x1234);  // outside its bytes
  CHECK_FALSE(first_mismatch(ap, reader(exp, Buffer::sbuf), reader(act, Buffer::sbuf)).has_value());
  act.write_bits(Buffer::sbuf, 4, 12, 2, 0x0001);
  act.write_bits(Buffer::sbuf, 3, 14, 2, 0xBEEF);  // the first in iteration order
  const auto mm = first_mismatch(ap, reader(exp, Buffer::sbuf), reader(act, Buffer::sbuf));
  REQUIRE(mm.has_value());
  CHECK(mm->partition == 3);
  CHECK(mm->index == 1 * 4 + 2);
  CHECK(mm->byte_addr == 14);
  CHECK(mm->expected_bits == 0);
  CHECK(mm->actual_bits == 0xBEEF);

  isa::Ap h = hbm_ap(Dtype::fp32, 2, 8, 0, 2);  // rows at bytes 0 and 32
  exp.write_bits(Buffer::hbm, 0, 36, 4, 0x3F800000);
  const auto mh = first_mismatch(h, reader(exp, Buffer::hbm), reader(act, Buffer::hbm));
  REQUIRE(mh.has_value());
  CHECK(mh->partition == 1);
  CHECK(mh->index == 3);
  CHECK(mh->byte_addr == 36);
  CHECK(mh->expected_bits == 0x3F800000u);
  CHECK(mh->actual_bits == 0u);
}
