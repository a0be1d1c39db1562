// The C++ instruction encoding (isa::encode, firmware/include/ncore/isa_gen.hpp) against the RTL's
// packed struct ncore_isa_pkg::insn_t: random instructions are encoded in C++, driven as the
// isa::kInsnBits-bit input of ncore_isa_tb (Verilator: a VlWide of 32-bit words, word 0 = bits 31:0), and
// the fields the wrapper reads out of the struct must be the ones that were encoded.
#include <catch2/catch.hpp>

#include <memory>
#include <random>

#include "Vncore_isa_tb.h"
#include "ncore/isa_gen.hpp"
#include "verilated.h"

using namespace ncore;

namespace {

// Every field random within its width (enums: any code of the width, valid or not).
isa::Insn random_insn(std::mt19937_64& rng) {
  auto bits = [&](unsigned w) { return rng() & ((w >= 64) ? ~0ull : ((1ull << w) - 1)); };
  auto ap = [&] {
    isa::Ap a;
    a.mem = static_cast<isa::Buffer>(bits(isa::kBufferWidth));
    a.dtype = static_cast<isa::Dtype>(bits(isa::kDtypeWidth));
    a.start_part = uint32_t(bits(8));
    a.num_part = uint32_t(bits(8));
    a.part_stride = int32_t(uint32_t(bits(32)));
    a.offset = bits(40);
    for (auto& s : a.size) s = uint32_t(bits(32));
    for (auto& s : a.stride) s = int32_t(uint32_t(bits(32)));
    return a;
  };
  auto sref = [&] {
    isa::Sref s;
    s.mem = static_cast<isa::Buffer>(bits(isa::kBufferWidth));
    s.dtype = static_cast<isa::Dtype>(bits(isa::kDtypeWidth));
    s.start_part = uint32_t(bits(8));
    s.offset = bits(40);
    return s;
  };
  isa::Insn i;
  i.opcode = static_cast<isa::Opcode>(bits(isa::kOpcodeWidth));
  i.engine = static_cast<isa::Engine>(bits(isa::kEngineWidth));
  i.dma_queue = uint32_t(bits(4));
  i.wait_sem = uint32_t(bits(8));
  i.wait_cond = static_cast<isa::SemCond>(bits(isa::kSemCondWidth));
  i.wait_val = uint32_t(bits(32));
  i.upd_sem = uint32_t(bits(8));
  i.upd_op = static_cast<isa::SemOp>(bits(isa::kSemOpWidth));
  i.upd_when = static_cast<isa::SemWhen>(bits(isa::kSemWhenWidth));
  i.upd_val = uint32_t(bits(32));
  i.op0 = static_cast<isa::AluOp>(bits(isa::kAluOpWidth));
  i.op1 = static_cast<isa::AluOp>(bits(isa::kAluOpWidth));
  i.rev0 = bits(1);
  i.rev1 = bits(1);
  i.s0_vec = bits(1);
  i.s1_vec = bits(1);
  i.imm0 = uint32_t(bits(32));
  i.imm1 = uint32_t(bits(32));
  i.acc = bits(1);
  i.func = static_cast<isa::ActFunc>(bits(isa::kActFuncWidth));
  i.red_axes = uint32_t(bits(3));
  i.dst = ap();
  i.dst2 = ap();
  i.src0 = ap();
  i.src1 = ap();
  i.s0 = sref();
  i.s1 = sref();
  return i;
}

}  // namespace

TEST_CASE("isa::encode matches the RTL's packed insn_t", "[isa]") {
  auto ctx = std::make_unique<VerilatedContext>();
  auto dut = std::make_unique<Vncore_isa_tb>(ctx.get());
  constexpr unsigned kWords = (isa::kInsnBits + 31) / 32;
  STATIC_REQUIRE(kWords == sizeof(dut->insn_i) / sizeof(uint32_t));
  std::mt19937_64 rng(42);
  for (int n = 0; n < 20000; ++n) {
    const isa::Insn i = random_insn(rng);
    uint8_t img[isa::kInsnBytes];
    isa::encode(i, img);
    unsigned parity = 0;
    for (unsigned w = 0; w < kWords; ++w) {
      uint32_t v = 0;
      for (unsigned b = 0; b < 4; ++b) v |= uint32_t{img[4 * w + b]} << (8 * b);
      dut->insn_i[w] = v;
      parity ^= __builtin_popcount(v) & 1;
    }
    dut->eval();
    INFO("instruction " << n);
    REQUIRE(dut->opcode_o == static_cast<unsigned>(i.opcode));
    REQUIRE(dut->dma_queue_o == i.dma_queue);
    REQUIRE(dut->wait_cond_o == static_cast<unsigned>(i.wait_cond));
    REQUIRE(dut->upd_val_o == i.upd_val);
    REQUIRE(dut->imm1_o == i.imm1);
    REQUIRE(dut->dst_offset_o == i.dst.offset);
    REQUIRE(dut->src0_size2_o == i.src0.size[2]);
    REQUIRE(static_cast<int64_t>(dut->src1_stride3_o) == int64_t{i.src1.stride[3]});
    REQUIRE(dut->s1_offset_o == i.s1.offset);
    REQUIRE(dut->func_o == static_cast<unsigned>(i.func));
    REQUIRE(dut->red_axes_o == i.red_axes);
    REQUIRE(dut->dst2_num_part_o == i.dst2.num_part);
    REQUIRE(dut->parity_o == parity);
    // and the image decodes back to the same instruction
    uint8_t again[isa::kInsnBytes];
    isa::encode(isa::decode(img), again);
    REQUIRE(std::equal(img, img + isa::kInsnBytes, again));
  }
}
