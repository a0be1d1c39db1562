// The readable listing and the text forms of operands and instructions.
#include <catch2/catch.hpp>

#include <sstream>

#include "ncore/program.hpp"
#include "kernels/kernel.hpp"

namespace {

namespace isa = ncore::isa;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("format_ap", "[firmware][listing]") {
  // {mem, dtype, start_part, num_part, part_stride, offset, size, stride}
  isa::Ap a{isa::Buffer::sbuf, isa::Dtype::fp32, 0, 128, 0, 0x1f40, {1000, 1, 1, 1}, {1, 0, 0, 0}};
  CHECK(ncore::format_ap(a) == "sbuf[0:128]+0x1f40 fp32 <1000>");

  a = {isa::Buffer::sbuf, isa::Dtype::bf16, 32, 32, 0, 0, {200, 4, 1, 1}, {1, 1000, 0, 0}};
  CHECK(ncore::format_ap(a) == "sbuf[32:64]+0x0 bf16 <4x200 /1000,1>");
  a.stride = {1, 200, 0, 0};  // plain row-major: no strides printed
  CHECK(ncore::format_ap(a) == "sbuf[32:64]+0x0 bf16 <4x200>");

  isa::Ap h{isa::Buffer::hbm, isa::Dtype::fp32, 0, 128, 200, 0x400, {2, 1, 1, 1}, {1, 0, 0, 0}};
  CHECK(ncore::format_ap(h) == "hbm[128 rows/200]+0x400 fp32 <2>");
  h.num_part = 1;
  CHECK(ncore::format_ap(h) == "hbm+0x400 fp32 <2>");
}

TEST_CASE("format_insn shows operands, wait and update", "[firmware][listing]") {
  isa::Insn i{};
  i.opcode = isa::Opcode::tensor_tensor;
  i.engine = isa::Engine::dve;
  for (isa::Ap* a : {&i.dst, &i.src0, &i.src1}) {
    a->mem = isa::Buffer::sbuf;
    a->num_part = 128;
    a->size = {1000, 1, 1, 1};
    a->stride = {1, 0, 0, 0};
  }
  i.src1.offset = 0x40;
  i.op0 = isa::AluOp::add;
  i.wait_sem = 6;
  i.wait_cond = isa::SemCond::ge;
  i.wait_val = 32;
  i.upd_sem = 3;
  i.upd_op = isa::SemOp::inc;
  CHECK(ncore::format_insn(i) ==
        "tensor_tensor dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
        "src1=sbuf[0:128]+0x40 fp32 <1000> op0=add  wait S[6]>=32  upd S[3]+=1@complete");

  isa::Insn s{};
  s.opcode = isa::Opcode::sem_wait;
  s.engine = isa::Engine::dma;
  s.wait_sem = 9;
  s.wait_cond = isa::SemCond::ge;
  s.wait_val = 48;
  CHECK(ncore::format_insn(s) == "sem_wait  wait S[9]>=48");
  s.upd_sem = 9;
  s.upd_op = isa::SemOp::set;
  s.upd_val = 5;
  s.upd_when = isa::SemWhen::read;
  CHECK(ncore::format_insn(s) == "sem_wait  wait S[9]>=48  upd S[9]=5@read");

  isa::Insn t = i;
  t.opcode = isa::Opcode::tensor_scalar;
  t.s0_vec = true;
  t.s0.mem = isa::Buffer::sbuf;
  t.s0.offset = 0x80;
  t.op1 = isa::AluOp::multiply;
  t.imm1 = 0x40000000;  // 2.0f
  t.rev1 = true;
  t.wait_cond = isa::SemCond::none;
  CHECK(ncore::format_insn(t) ==
        "tensor_scalar dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
        "op0=add(sbuf[0:128]+0x80 fp32) op1=multiply(2) rev1  upd S[3]+=1@complete");
  t.op0 = isa::AluOp::divide;
  t.op1 = isa::AluOp::greater_equal;
  CHECK(ncore::format_insn(t) ==
        "tensor_scalar dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
        "op0=divide(sbuf[0:128]+0x80 fp32) op1=greater_equal(2) rev1  upd S[3]+=1@complete");
  t.op0 = isa::AluOp::power;
  t.op1 = isa::AluOp::logical_not;
  CHECK(ncore::format_insn(t) ==
        "tensor_scalar dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
        "op0=power(sbuf[0:128]+0x80 fp32) op1=logical_not(2) rev1  upd S[3]+=1@complete");

  // tensor_reduce: the op and the number of innermost free axes reduced
  isa::Insn r = i;
  r.opcode = isa::Opcode::tensor_reduce;
  r.op0 = isa::AluOp::max;
  r.red_axes = 2;
  r.src0.size = {10, 100, 1, 1};
  r.src0.stride = {1, 10, 0, 0};
  r.dst.size = {1, 1, 1, 1};
  r.upd_op = isa::SemOp::none;
  r.wait_cond = isa::SemCond::none;
  CHECK(ncore::format_insn(r) ==
        "tensor_reduce dst=sbuf[0:128]+0x0 fp32 <1> src0=sbuf[0:128]+0x0 fp32 <100x10> op0=max axes=2");

  // activation: the function, the scale, the bias unless it is the identity -0.0, the add-reduce
  isa::Insn a = r;
  a.opcode = isa::Opcode::activation;
  a.engine = isa::Engine::act;
  a.func = isa::ActFunc::relu;
  a.src0.size = {1000, 1, 1, 1};
  a.dst.size = {1000, 1, 1, 1};
  a.imm0 = 0x3F800000;  // 1.0f
  a.imm1 = 0x80000000;  // -0.0f: no bias
  CHECK(ncore::format_insn(a) ==
        "activation dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> func=relu scale=1");
  a.s1_vec = true;
  a.s1.mem = isa::Buffer::sbuf;
  a.s1.dtype = isa::Dtype::bf16;
  a.s1.offset = 0x10;
  a.dst2 = a.dst;
  a.dst2.mem = isa::Buffer::psum;
  a.dst2.size = {1, 1, 1, 1};
  CHECK(ncore::format_insn(a) ==
        "activation dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> func=relu scale=1 "
        "bias=sbuf[0:128]+0x10 bf16 reduce_res=psum[0:128]+0x0 fp32 <1>");
  a.s1_vec = false;
  a.imm1 = 0x3F000000;  // 0.5f
  a.dst2.num_part = 0;
  a.func = isa::ActFunc::gelu_apprx_tanh;
  CHECK(ncore::format_insn(a) == "activation dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
                                 "func=gelu_apprx_tanh scale=1 bias=0.5");
  a.func = isa::ActFunc::gelu_apprx_sigmoid;
  CHECK(ncore::format_insn(a) == "activation dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> "
                                 "func=gelu_apprx_sigmoid scale=1 bias=0.5");
  a.func = static_cast<isa::ActFunc>(31);
  CHECK(ncore::format_insn(a) ==
        "activation dst=sbuf[0:128]+0x0 fp32 <1000> src0=sbuf[0:128]+0x0 fp32 <1000> func=? scale=1 bias=0.5");

  isa::Insn bad{};
  bad.opcode = static_cast<isa::Opcode>(200);
  bad.wait_cond = static_cast<isa::SemCond>(7);
  bad.dst.mem = static_cast<isa::Buffer>(3);
  CHECK_NOTHROW(ncore::format_insn(bad));
}

TEST_CASE("listing of the naive kernel", "[firmware][listing]") {
  kernels::Args a;
  a.kernel = "naive";
  a.set("n", 128);
  const ncore::Program p = kernels::build(a, *ncore::find_preset("trn2"));
  const std::string text = p.listing();
  const auto lines = lines_of(text);
  // Inputs at 0 and 512 (128 fp32 each, 64-byte aligned), then the output; tiles of 4 bytes
  // per partition at 64-byte aligned offsets 0x0, 0x40 and 0x80 in allocation order.
  CHECK(has_line_starting(lines, "; kernel vector_add_naive  preset trn2  hbm_bytes 1536  instructions 5"));
  CHECK(text.find(";   a_vec  input    fp32 [128]          offset 0x0  bytes 512") != std::string::npos);
  CHECK(text.find(";   b_vec  input    fp32 [128]          offset 0x200  bytes 512") != std::string::npos);
  CHECK(text.find(";   out    output   fp32 [128]          offset 0x400  bytes 512") != std::string::npos);
  CHECK(has_line_starting(lines, "q0[0]  dma_copy q0 dst=sbuf[0:128]+0x0 fp32 <1> src0=hbm[128 rows/1]+0x0 fp32 <1>  "
                                 "upd S[5]+=1@complete  ; kernels/src/vector_add.cpp:"));
  CHECK(has_line_starting(lines, "q1[0]  dma_copy q1 dst=sbuf[0:128]+0x40 fp32 <1> src0=hbm[128 rows/1]+0x200 fp32 <1>  "
                                 "upd S[6]+=1@complete  ; kernels/src/vector_add.cpp:"));
  // The add needs both loads: one sem_wait, one wait on the instruction itself.
  CHECK(has_line_starting(lines, "dve[0]  sem_wait  wait S[5]>=16  ; kernels/src/vector_add.cpp:"));
  CHECK(has_line_starting(lines, "dve[1]  tensor_scalar dst=sbuf[0:128]+0x80 fp32 <1> src0=sbuf[0:128]+0x0 fp32 <1> "
                                 "op0=add(sbuf[0:128]+0x40 fp32)  wait S[6]>=16  upd S[3]+=1@complete  ; "
                                 "kernels/src/vector_add.cpp:"));
  CHECK(has_line_starting(lines, "q2[0]  dma_copy q2 dst=hbm[128 rows/1]+0x400 fp32 <1> src0=sbuf[0:128]+0x80 fp32 <1>  "
                                 "wait S[3]>=1  upd S[7]+=1@complete  ; kernels/src/vector_add.cpp:"));
}

TEST_CASE("listing is stable through an image", "[firmware][listing]") {
  kernels::Args a;
  a.kernel = "stream";
  a.set("n", 25600);
  a.set("free_dim", 20);
  const ncore::Program p = kernels::build(a, *ncore::find_preset("trn2"));
  std::stringstream s;
  p.write_image(s);
  CHECK(ncore::Program::read_image(s).listing() == p.listing());
  CHECK(p.listing() == p.listing());
}

// Found by the fuzz_validate target: the check whether the strides are the plain row-major ones
// multiplied 32-bit sizes and strides in int64 past the mismatch and overflowed. Such an operand
// (only a malformed instruction has one, and its error message formats it) prints every size
// and stride as they are.
TEST_CASE("format_ap of sizes and strides whose products overflow 64 bits", "[firmware][listing]") {
  isa::Ap a{};
  a.mem = isa::Buffer::sbuf;
  a.dtype = isa::Dtype::fp32;
  a.num_part = 1;
  a.size = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  a.stride = {0x7fffffff, 3, 0x7fffffff, INT32_MIN};
  CHECK(ncore::format_ap(a) == "sbuf[0:1]+0x0 fp32 <4294967295x4294967295x4294967295x4294967295 "
                               "/-2147483648,2147483647,3,2147483647>");
  a.size = {0xffffffffu, 2, 1, 1};
  a.stride = {1, -1, 0, 0};
  CHECK(ncore::format_ap(a) == "sbuf[0:1]+0x0 fp32 <2x4294967295 /-1,1>");
}
