// Text forms of access patterns and instructions, for the listing and for error messages.
//
// An operand prints as its buffer and partitions, byte offset, dtype and free sizes:
//
//   sbuf[0:128]+0x1f40 fp32 <1000>          partitions 0..127, 1000 contiguous elements each
//   sbuf[32:64]+0x0 bf16 <4x200 /1000,1>    4 x 200 elements, strides 1000 and 1 (outer first)
//   hbm[128 rows/200]+0x400 fp32 <2>        128 rows of 2 elements, rows 200 elements apart
//
// A multiply_moving ends in acc=1 when it adds into PSUM and acc=0 when it overwrites. A
// tensor_reduce names its op and how many innermost free axes it reduces (axes=2); an
// activation its function, scale and bias (left out when it is the identity -0.0) and, with an
// add-reduce, its (P,1) result: activation ... func=relu scale=sbuf[0:128]+0x40 fp32 reduce_res=...
//
// Free sizes are listed outermost first, as a tensor shape is written; strides (in elements)
// follow a slash only when they are not the plain row-major ones. Unused outer dimensions
// (size 1) are left out. These functions must never fail: validation messages call them on
// instructions that are malformed in every field.
#include <fmt/format.h>

#include <string>

#include "ncore/ap.hpp"
#include "ncore/float_bits.hpp"
#include "ncore/program.hpp"

namespace ncore {
namespace {

using num::bits_to_float;

std::string free_dims(const isa::Ap& ap) {
  const int used = ap_used_dims(ap);
  std::string s = "<";
  for (int d = used - 1; d >= 0; --d) {
    s += std::to_string(ap.size[d]);
    if (d) s += 'x';
  }
  bool natural = ap.stride[0] == 1 || (used == 1 && ap.size[0] == 1);
  // In 128 bits: the product of four 32-bit sizes and a stride overflows 64 (this also prints garbage).
  __int128 expect = __int128{ap.stride[0]} * ap.size[0];
  for (int d = 1; d < used && natural; ++d) {
    if (ap.stride[d] != expect) natural = false;
    expect *= ap.size[d];
  }
  if (!natural) {
    s += " /";
    for (int d = used - 1; d >= 0; --d) {
      s += std::to_string(ap.stride[d]);
      if (d) s += ',';
    }
  }
  s += '>';
  return s;
}

std::string sref(const isa::Sref& s, uint32_t num_part) {
  return fmt::format("{}[{}:{}]+0x{:x} {}", isa::to_string(s.mem), s.start_part, uint64_t{s.start_part} + num_part,
                     s.offset, isa::to_string(s.dtype));
}

std::string operand(const isa::Insn& i, bool vec, const isa::Sref& s, uint32_t imm) {
  if (vec) return sref(s, i.src0.num_part);
  return fmt::format("{}", bits_to_float(imm));
}

const char* cond_text(isa::SemCond c) {
  switch (c) {
    case isa::SemCond::none: return "?";
    case isa::SemCond::eq: return "==";
    case isa::SemCond::ne: return "!=";
    case isa::SemCond::ge: return ">=";
    case isa::SemCond::gt: return ">";
    case isa::SemCond::le: return "<=";
    case isa::SemCond::lt: return "<";
  }
  return "?";
}

std::string update_text(const isa::Insn& i) {
  std::string op;
  switch (i.upd_op) {
    case isa::SemOp::none: return "";
    case isa::SemOp::inc: op = "+=1"; break;
    case isa::SemOp::dec: op = "-=1"; break;
    case isa::SemOp::add: op = fmt::format("+={}", i.upd_val); break;
    case isa::SemOp::sub: op = fmt::format("-={}", i.upd_val); break;
    case isa::SemOp::set: op = fmt::format("={}", i.upd_val); break;
    default: op = fmt::format("?op{}", static_cast<unsigned>(i.upd_op)); break;
  }
  return fmt::format("upd S[{}]{}@{}", i.upd_sem, op, isa::to_string(i.upd_when));
}

}  // namespace

std::string format_ap(const isa::Ap& ap) {
  std::string where;
  if (ap.mem == isa::Buffer::hbm) {
    where = ap.num_part == 1 ? std::string("hbm") : fmt::format("hbm[{} rows/{}]", ap.num_part, ap.part_stride);
  } else {
    where = fmt::format("{}[{}:{}]", isa::to_string(ap.mem), ap.start_part, uint64_t{ap.start_part} + ap.num_part);
  }
  return fmt::format("{}+0x{:x} {} {}", where, ap.offset, isa::to_string(ap.dtype), free_dims(ap));
}

std::string format_insn(const isa::Insn& i) {
  std::string s = isa::is_valid(i.opcode) ? isa::to_string(i.opcode)
                                          : fmt::format("opcode({})", static_cast<unsigned>(i.opcode));
  switch (i.opcode) {
    case isa::Opcode::sem_wait:
      break;
    case isa::Opcode::dma_copy:
      s += fmt::format(" q{} dst={} src0={}", i.dma_queue, format_ap(i.dst), format_ap(i.src0));
      break;
    case isa::Opcode::tensor_tensor:
      s += fmt::format(" dst={} src0={} src1={} op0={}", format_ap(i.dst), format_ap(i.src0), format_ap(i.src1),
                       isa::to_string(i.op0));
      break;
    case isa::Opcode::tensor_scalar:
      s += fmt::format(" dst={} src0={} op0={}({}){}", format_ap(i.dst), format_ap(i.src0), isa::to_string(i.op0),
                       operand(i, i.s0_vec, i.s0, i.imm0), i.rev0 ? " rev0" : "");
      if (i.op1 != isa::AluOp::bypass)
        s += fmt::format(" op1={}({}){}", isa::to_string(i.op1), operand(i, i.s1_vec, i.s1, i.imm1),
                         i.rev1 ? " rev1" : "");
      break;
    case isa::Opcode::tensor_copy:
      s += fmt::format(" dst={} src0={}", format_ap(i.dst), format_ap(i.src0));
      break;
    case isa::Opcode::memset:
      s += fmt::format(" dst={} value={}", format_ap(i.dst), bits_to_float(i.imm0));
      break;
    case isa::Opcode::tensor_reduce:
      s += fmt::format(" dst={} src0={} op0={} axes={}", format_ap(i.dst), format_ap(i.src0), isa::to_string(i.op0),
                       i.red_axes);
      break;
    case isa::Opcode::activation:
      s += fmt::format(" dst={} src0={} func={} scale={}", format_ap(i.dst), format_ap(i.src0), isa::to_string(i.func),
                       operand(i, i.s0_vec, i.s0, i.imm0));
      if (i.s1_vec || i.imm1 != 0x80000000u) s += fmt::format(" bias={}", operand(i, i.s1_vec, i.s1, i.imm1));
      if (i.dst2.num_part != 0) s += fmt::format(" reduce_res={}", format_ap(i.dst2));
      break;
    case isa::Opcode::load_stationary:
      s += fmt::format(" src0={}", format_ap(i.src0));
      break;
    case isa::Opcode::multiply_moving:
      s += fmt::format(" dst={} src0={} acc={}", format_ap(i.dst), format_ap(i.src0), i.acc ? 1 : 0);
      break;
    default:
      s += fmt::format(" engine={} dst={} src0={} src1={}", isa::to_string(i.engine), format_ap(i.dst),
                       format_ap(i.src0), format_ap(i.src1));
      break;
  }
  if (i.wait_cond != isa::SemCond::none)
    s += fmt::format("  wait S[{}]{}{}", i.wait_sem, cond_text(i.wait_cond), i.wait_val);
  if (i.upd_op != isa::SemOp::none) s += "  " + update_text(i);
  return s;
}

std::string format_wait(const isa::Insn& i) {
  return i.wait_cond == isa::SemCond::none ? "" : fmt::format("S[{}]{}{}", i.wait_sem, cond_text(i.wait_cond), i.wait_val);
}

std::string format_update(const isa::Insn& i) {
  return i.upd_op == isa::SemOp::none ? "" : update_text(i).substr(4);  // without "upd "
}

}  // namespace ncore
