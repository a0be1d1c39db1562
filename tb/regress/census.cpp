// What a Program exercises; see program_gen.hpp.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/isa_kinds.hpp"
#include "program_gen.hpp"

namespace ncore::regress {
namespace {

using isa::Ap;
using isa::Opcode;

constexpr const char* kStreamKinds[] = {"pe", "act", "pool", "dve", "sp"};

void count_ap(std::map<std::string, uint64_t>& c, const Ap& a, uint64_t partitions) {
  unsigned dims = 0;
  bool neg = false, zero = false;
  for (int d = 0; d < 4; ++d) {
    if (a.size[d] <= 1) continue;
    ++dims;
    neg |= a.stride[d] < 0;
    zero |= a.stride[d] == 0;
  }
  ++c[fmt::format("ap.dims.{}", std::max(dims, 1u))];
  if (neg) ++c["ap.negative_stride"];
  if (zero) ++c["ap.zero_stride"];
  if (a.mem != isa::Buffer::hbm && a.num_part < partitions) ++c["ap.partial_partitions"];
  if (a.mem == isa::Buffer::hbm && a.num_part > 1) {
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < 4; ++d) {
      const int64_t span = int64_t{a.stride[d]} * (int64_t{a.size[d]} - 1);
      (span < 0 ? lo : hi) += span;
    }
    if (std::abs(int64_t{a.part_stride}) <= hi - lo) ++c["hbm.row_overlap"];
  }
}

}  // namespace

std::map<std::string, uint64_t> census(const Program& prog) {
  std::map<std::string, uint64_t> c;
  const Preset* pr = find_preset(prog.preset);
  const uint64_t P = pr ? pr->num_partitions : 0;
  for (size_t s = 0; s < prog.streams.size(); ++s) {
    for (const Instruction& in : prog.streams[s].insns) {
      const isa::Insn& i = in.insn;
      ++c[fmt::format("opcode.{}", isa::to_string(i.opcode))];
      if (i.upd_op != isa::SemOp::none) ++c[fmt::format("sem.op.{}", isa::to_string(i.upd_op))];
      if (i.wait_cond != isa::SemCond::none) ++c[fmt::format("sem.cond.{}", isa::to_string(i.wait_cond))];
      if (i.upd_op != isa::SemOp::none && i.upd_when == isa::SemWhen::read && i.opcode != Opcode::sem_wait)
        ++c["sem.when.read"];
      if (i.opcode == Opcode::sem_wait) {
        ++c[fmt::format("sem_wait.{}", s < kNumEngineStreams ? kStreamKinds[s] : "dma")];
        continue;
      }
      const auto op = isa::to_string(i.opcode);
      const isa::Dtype dt = i.opcode == Opcode::load_stationary ? i.src0.dtype : i.dst.dtype;
      ++c[fmt::format("dtype.{}.{}", op, isa::to_string(dt))];
      const isa::InsnInfo* info = isa::find_info(i.opcode);
      bool psum = false;
      for (unsigned k = 0; k < info->num_operands; ++k) {
        const std::string f = info->operands[k].field;
        const Ap* a = f == "dst" ? &i.dst : f == "src0" ? &i.src0 : f == "src1" ? &i.src1 : f == "dst2" ? &i.dst2 : nullptr;
        if (!a || a->num_part == 0) continue;
        count_ap(c, *a, P);
        psum |= a->mem == isa::Buffer::psum;
      }
      switch (i.opcode) {
        case Opcode::dma_copy:
          ++c[fmt::format("dma.{}->{}", isa::to_string(i.src0.mem), isa::to_string(i.dst.mem))];
          ++c[fmt::format("dma.cast.{}->{}", isa::to_string(i.src0.dtype), isa::to_string(i.dst.dtype))];
          ++c[fmt::format("dma.queue.{}", i.dma_queue)];
          break;
        case Opcode::tensor_tensor:
          ++c[fmt::format("tensor_tensor.{}", isa::to_string(i.op0))];
          break;
        case Opcode::tensor_scalar:
          ++c[fmt::format("tensor_scalar.op0.{}", isa::to_string(i.op0))];
          ++c[fmt::format("tensor_scalar.op1.{}", isa::to_string(i.op1))];
          if (i.s0_vec) ++c["tensor_scalar.s0_vec"];
          if (i.s1_vec) ++c["tensor_scalar.s1_vec"];
          if (i.rev0) ++c["tensor_scalar.rev0"];
          if (i.rev1) ++c["tensor_scalar.rev1"];
          break;
        case Opcode::tensor_reduce:
          ++c[fmt::format("reduce.axes.{}", i.red_axes)];
          ++c[fmt::format("reduce.{}", isa::to_string(i.op0))];
          break;
        case Opcode::activation:
          ++c[fmt::format("activation.{}", isa::to_string(i.func))];
          if (i.s0_vec) ++c["activation.s0_vec"];
          if (i.s1_vec) ++c["activation.s1_vec"];
          if (i.dst2.num_part) ++c["activation.dst2"];
          break;
        case Opcode::multiply_moving:
          ++c[i.acc ? "pe.accumulate" : "pe.overwrite"];
          break;
        default:
          break;
      }
      if (psum && i.engine != isa::Engine::pe) ++c[fmt::format("psum.{}", op)];
    }
  }
  return c;
}

std::vector<std::string> census_bins(const Preset& preset) {
  std::vector<std::string> b;
  const char* dtypes[] = {"fp32", "bf16", "fp16"};
  for (const auto& info : isa::kInsnInfo) {
    b.push_back(fmt::format("opcode.{}", info.name));
    if (info.opcode == Opcode::sem_wait) continue;
    for (const char* d : dtypes)
      if (info.opcode != Opcode::multiply_moving || std::string(d) == "fp32") b.push_back(fmt::format("dtype.{}.{}", info.name, d));
    if (info.engine == isa::Engine::dve || info.engine == isa::Engine::act) b.push_back(fmt::format("psum.{}", info.name));
  }
  for (const char* s : {"hbm", "sbuf"})
    for (const char* d : {"hbm", "sbuf"}) b.push_back(fmt::format("dma.{}->{}", s, d));
  for (const char* s : dtypes)
    for (const char* d : dtypes) b.push_back(fmt::format("dma.cast.{}->{}", s, d));
  // The integer dtypes: every lane and DMA instruction writes each; DMA copies each bit for bit
  // and to and from fp32.
  for (isa::Dtype dt : isa::kDtypeValues) {
    if (!isa::is_integer(dt)) continue;
    const char* t = isa::to_string(dt);
    for (const auto& info : isa::kInsnInfo)
      if ((info.engine == isa::Engine::dve || info.engine == isa::Engine::act || info.engine == isa::Engine::dma) &&
          info.opcode != Opcode::sem_wait)
        b.push_back(fmt::format("dtype.{}.{}", info.name, t));
    for (const std::string& c : {fmt::format("{}->{}", t, t), fmt::format("{}->fp32", t), fmt::format("fp32->{}", t)})
      b.push_back("dma.cast." + c);
  }
  for (unsigned q = 0; q < preset.dma_queues; ++q) b.push_back(fmt::format("dma.queue.{}", q));
  for (unsigned n = 1; n <= 4; ++n) {
    b.push_back(fmt::format("ap.dims.{}", n));
    b.push_back(fmt::format("reduce.axes.{}", n));
  }
  for (const char* x : {"ap.negative_stride", "ap.zero_stride", "ap.partial_partitions", "hbm.row_overlap",
                        "tensor_scalar.s0_vec", "tensor_scalar.s1_vec", "tensor_scalar.rev0", "tensor_scalar.rev1",
                        "activation.s0_vec", "activation.s1_vec",
                        "activation.dst2", "pe.overwrite", "pe.accumulate", "sem.when.read"})
    b.push_back(x);
  for (isa::AluOp op : isa::kAluOpValues) {  // every ALU op of the ISA
    if (op != isa::AluOp::bypass) b.push_back(fmt::format("tensor_tensor.{}", isa::to_string(op)));
    b.push_back(fmt::format("tensor_scalar.op0.{}", isa::to_string(op)));
    b.push_back(fmt::format("tensor_scalar.op1.{}", isa::to_string(op)));
  }
  for (isa::ActFunc f : isa::kActFuncValues) b.push_back(fmt::format("activation.{}", isa::to_string(f)));
  for (const char* op : {"add", "multiply", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor"})
    b.push_back(fmt::format("reduce.{}", op));
  for (unsigned v = 1; v <= 5; ++v) b.push_back(fmt::format("sem.op.{}", isa::to_string(static_cast<isa::SemOp>(v))));
  for (unsigned v = 1; v <= 6; ++v) b.push_back(fmt::format("sem.cond.{}", isa::to_string(static_cast<isa::SemCond>(v))));
  for (const char* s : {"pe", "act", "pool", "dve", "sp", "dma"}) b.push_back(fmt::format("sem_wait.{}", s));
  return b;
}

}  // namespace ncore::regress
