// Instruction checks; see validate.hpp.
#include "ncore/validate.hpp"

#include <algorithm>
#include <optional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_kinds.hpp"
#include "ncore/program.hpp"

namespace ncore {
namespace {

[[noreturn]] void bad(const isa::Insn& insn, const std::string& what) {
  throw SimError(fmt::format("invalid instruction '{}': {}", format_insn(insn), what));
}

const isa::Ap* ap_field(const isa::Insn& insn, const char* f) {
  const std::string n = f;
  if (n == "dst") return &insn.dst;
  if (n == "src0") return &insn.src0;
  if (n == "src1") return &insn.src1;
  if (n == "dst2") return &insn.dst2;
  return nullptr;
}

bool buffer_allowed(const isa::OperandInfo& o, isa::Buffer b) {
  switch (b) {
    case isa::Buffer::hbm: return o.hbm;
    case isa::Buffer::sbuf: return o.sbuf;
    case isa::Buffer::psum: return o.psum;
  }
  return false;
}

// Sizes and strides are 32-bit fields: the element count and the byte span of an operand need
// more than 64 bits in the worst case. Both are bounded here (in 128-bit arithmetic) far below
// what 64-bit arithmetic holds and above any memory, so that ap_box, ap_free_elems and the
// checks after them cannot overflow or wrap on garbage. nullptr when the operand is within.
const char* bad_extent(const isa::Ap& ap) {
  constexpr __int128 kLimit = __int128{1} << 44;
  __int128 elems = 1, span = 0;
  for (int d = 0; d < 4; ++d) {
    elems *= ap.size[d];
    if (elems > kLimit) return "its free sizes hold more elements than any memory";
    const __int128 st = ap.stride[d] < 0 ? -__int128{ap.stride[d]} : __int128{ap.stride[d]};
    span += st * (__int128{ap.size[d]} - 1);
  }
  const __int128 ps = ap.part_stride < 0 ? -__int128{ap.part_stride} : __int128{ap.part_stride};
  span += ps * (__int128{ap.num_part} - 1);
  if (span * 4 >= kLimit) return "its strides span more bytes than any memory holds";
  return nullptr;
}

void check_ap(const isa::Insn& insn, const char* name, const isa::Ap& ap, const Preset& pr, uint64_t hbm_bytes) {
  if (!isa::is_valid(ap.mem)) bad(insn, fmt::format("operand {} has an unknown buffer", name));
  if (!isa::is_valid(ap.dtype)) bad(insn, fmt::format("operand {} has an unknown dtype", name));
  if (ap.num_part == 0 || ap.num_part > pr.num_partitions)
    bad(insn, fmt::format("operand {}: partition count {} is outside 1..{}", name, ap.num_part, pr.num_partitions));
  for (int d = 0; d < 4; ++d)
    if (ap.size[d] == 0) bad(insn, fmt::format("operand {}: free dimension {} has size 0", name, d));
  const unsigned esz = isa::dtype_bytes(ap.dtype);
  if (ap.offset % esz != 0)
    bad(insn, fmt::format("operand {}: byte offset {} is not a multiple of the {}-byte {} element", name, ap.offset, esz,
                          isa::to_string(ap.dtype)));
  if (const char* what = bad_extent(ap)) bad(insn, fmt::format("operand {}: {}", name, what));
  const Box b = ap_box(ap);
  if (ap.mem == isa::Buffer::hbm) {
    if (ap.start_part != 0) bad(insn, fmt::format("operand {}: an HBM operand must have start partition 0", name));
    if (b.lo < 0 || static_cast<uint64_t>(b.hi) > hbm_bytes)
      bad(insn, fmt::format("operand {}: HBM bytes [{}, {}) are outside the {} bytes of HBM", name, b.lo, b.hi, hbm_bytes));
  } else {  // SBUF or PSUM
    const bool sbuf = ap.mem == isa::Buffer::sbuf;
    const char* mem = sbuf ? "SBUF" : "PSUM";
    const uint64_t bytes = sbuf ? pr.sbuf_bytes : pr.psum_bytes;
    if (ap.part_stride != 0) bad(insn, fmt::format("operand {}: partition stride is only for HBM operands", name));
    if (b.p_hi > pr.num_partitions)
      bad(insn, fmt::format("operand {}: partitions [{}, {}) exceed the {} {} partitions", name, b.p_lo, b.p_hi,
                            pr.num_partitions, mem));
    if (b.lo < 0 || static_cast<uint64_t>(b.hi) > bytes)
      bad(insn, fmt::format("operand {}: {} bytes [{}, {}) are outside the {} bytes of a partition", name, mem, b.lo,
                            b.hi, bytes));
  }
}

void check_sref(const isa::Insn& insn, const char* name, const isa::Sref& s, const isa::Ap& data, const Preset& pr) {
  if (s.mem != isa::Buffer::sbuf) bad(insn, fmt::format("operand {}: a per-partition operand must be in SBUF", name));
  if (!isa::is_valid(s.dtype)) bad(insn, fmt::format("operand {} has an unknown dtype", name));
  const unsigned esz = isa::dtype_bytes(s.dtype);
  if (s.offset % esz != 0) bad(insn, fmt::format("operand {}: byte offset {} is not a multiple of {}", name, s.offset, esz));
  if (s.start_part + data.num_part > pr.num_partitions)
    bad(insn, fmt::format("operand {}: partitions [{}, {}) exceed the {} partitions", name, s.start_part,
                          s.start_part + data.num_part, pr.num_partitions));
  if (s.offset + esz > pr.sbuf_bytes)
    bad(insn, fmt::format("operand {}: byte {} is outside the {} bytes of a partition", name, s.offset, pr.sbuf_bytes));
}

// The tensor engine multiplies floating-point operands only (fp32, tf32, bf16, fp16, the fp8 types).
void check_pe_dtype(const isa::Insn& insn, const char* role, isa::Dtype dt) {
  if (!isa::is_fp32_class(dt) && dt != isa::Dtype::bf16 && dt != isa::Dtype::fp16 && dt != isa::Dtype::fp8_e4m3 &&
      dt != isa::Dtype::fp8_e5m2)
    bad(insn, fmt::format("the {} operand is {}: the tensor engine multiplies float32, tfloat32, bfloat16, float16, "
                          "float8_e4m3 or float8_e5m2",
                          role, isa::to_string(dt)));
}

// A tile's shape as NKI prints it, partitions first, then the free sizes outermost first:
// [128, 4, 512] (unused outer dimensions of size 1 left out).
std::string shape_text(const isa::Ap& ap) {
  const int used = ap_used_dims(ap);
  std::string s = fmt::format("[{}", ap.num_part);
  for (int d = used - 1; d >= 0; --d) s += fmt::format(", {}", ap.size[d]);
  return s + "]";
}

// NKI's err_num_partition_mismatch, for an engine instruction's tensor operands.
void check_partitions(const isa::Insn& insn, const char* nki_name, const isa::Ap& a, const char* an, const isa::Ap& b,
                      const char* bn) {
  if (a.num_part != b.num_part)
    bad(insn, fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) of '{}'",
                          an, shape_text(a), bn, shape_text(b), nki_name));
  if (a.start_part != b.start_part)
    bad(insn, fmt::format("operands {} and {} of '{}' must start at the same partition (lane p reads and writes "
                          "partition start_part + p), got {} and {}",
                          an, bn, nki_name, a.start_part, b.start_part));
}

// A bitvec op (bitwise_and ... right_shift) works on the elements' bits: every operand and the
// result one integer dtype, and in tensor_scalar no arithmetic op beside it.
void check_bitvec(const isa::Insn& insn) {
  const bool ts = insn.opcode == isa::Opcode::tensor_scalar;
  const bool bv0 = isa::is_bitvec(insn.op0), bv1 = ts && isa::is_bitvec(insn.op1);
  if (!bv0 && !bv1) return;
  const isa::AluOp op = bv0 ? insn.op0 : insn.op1;
  if (ts && ((bv0 && !bv1 && insn.op1 != isa::AluOp::bypass) || (bv1 && !bv0 && insn.op0 != isa::AluOp::bypass)))
    bad(insn, fmt::format("the bitvec op {} cannot be combined with the arithmetic op {} in one tensor_scalar",
                          isa::to_string(op), isa::to_string(bv0 ? insn.op1 : insn.op0)));
  const isa::Dtype dt = insn.dst.dtype;
  if (!isa::is_integer(dt))
    bad(insn, fmt::format("the bitvec op {} needs every operand of one integer dtype; dst is {}", isa::to_string(op),
                          isa::to_string(dt)));
  auto same = [&](isa::Dtype d, const char* what) {
    if (d != dt)
      bad(insn, fmt::format("the bitvec op {} needs every operand of one integer dtype; dst is {}, {} is {}",
                            isa::to_string(op), isa::to_string(dt), what, isa::to_string(d)));
  };
  same(insn.src0.dtype, "src0");
  if (insn.opcode == isa::Opcode::tensor_tensor) same(insn.src1.dtype, "src1");
  if (ts && insn.s0_vec) same(insn.s0.dtype, "s0");
  if (ts && insn.s1_vec) same(insn.s1.dtype, "s1");
}

// tensor_reduce: dst[p, outer] = op over the red_axes innermost free dimensions of src0.
void check_tensor_reduce(const isa::Insn& insn) {
  const isa::Ap& s = insn.src0;
  const isa::Ap& d = insn.dst;
  switch (insn.op0) {
    case isa::AluOp::add:
    case isa::AluOp::multiply:
    case isa::AluOp::max:
    case isa::AluOp::min:
    case isa::AluOp::bitwise_and:
    case isa::AluOp::bitwise_or:
    case isa::AluOp::bitwise_xor:
      break;
    default:
      bad(insn, fmt::format("reduce op '{}' of 'tensor_reduce' is not supported by the vector engine; use add, "
                            "multiply, max, min, bitwise_and, bitwise_or or bitwise_xor",
                            isa::to_string(insn.op0)));
  }
  if (insn.red_axes < 1 || insn.red_axes > 4)
    bad(insn, fmt::format("'tensor_reduce' reduces the last 1 to 4 free axes of src0{}; {} axes is outside 1..4",
                          shape_text(s), insn.red_axes));
  check_partitions(insn, "tensor_reduce", d, "dst", s, "data");
  uint64_t outer = 1;
  for (unsigned k = insn.red_axes; k < 4; ++k) outer *= s.size[k];
  if (ap_free_elems(d) != outer)
    bad(insn, fmt::format("dst{} of 'tensor_reduce' has {} elements per partition, but reducing the last {} free "
                          "axes of data{} leaves {}",
                          shape_text(d), ap_free_elems(d), insn.red_axes, shape_text(s), outer));
}

// activation: dst = func(src0 * scale + bias), optionally the add-reduce into dst2.
void check_activation(const isa::Insn& insn, const Preset& pr) {
  if (!isa::is_valid(insn.func))
    bad(insn, fmt::format("unknown activation function {} of 'activation'", static_cast<unsigned>(insn.func)));
  check_partitions(insn, "activation", insn.dst, "dst", insn.src0, "data");
  if (ap_free_elems(insn.src0) != ap_free_elems(insn.dst))
    bad(insn, fmt::format("dst{} of 'activation' has {} elements per partition but data{} has {}",
                          shape_text(insn.dst), ap_free_elems(insn.dst), shape_text(insn.src0),
                          ap_free_elems(insn.src0)));
  if (insn.s0_vec) {
    check_sref(insn, "s0 (scale)", insn.s0, insn.src0, pr);
    if (insn.s0.dtype != isa::Dtype::fp32)
      bad(insn, fmt::format("scale of 'activation' must be an fp32 scalar or an fp32 (P, 1) vector; s0 is {}",
                            isa::to_string(insn.s0.dtype)));
  }
  if (insn.s1_vec) check_sref(insn, "s1 (bias)", insn.s1, insn.src0, pr);
  if ((insn.s0_vec && insn.s0.start_part != insn.src0.start_part) ||
      (insn.s1_vec && insn.s1.start_part != insn.src0.start_part))
    bad(insn, "a per-partition operand (scale, bias) must start at the data operand's partition");
  const isa::Ap& r = insn.dst2;
  if (r.num_part != 0) {
    check_partitions(insn, "activation", r, "reduce_res", insn.src0, "data");
    if (ap_free_elems(r) != 1)
      bad(insn, fmt::format("reduce_res (dst2){} of 'activation' must have shape (P, 1): one element per partition",
                            shape_text(r)));
  }
}

// Same elements in the same order: an in-place operation.
bool same_elements(const isa::Ap& a, const isa::Ap& b) {
  return a.mem == b.mem && a.start_part == b.start_part && a.num_part == b.num_part && a.offset == b.offset &&
         isa::dtype_bytes(a.dtype) == isa::dtype_bytes(b.dtype) && a.size == b.size && a.stride == b.stride &&
         (a.mem != isa::Buffer::hbm || a.part_stride == b.part_stride);
}

// The byte ranges an operand touches, one per run of its innermost dimension (a run is one
// range when that dimension is contiguous, else one range per element), keyed by partition.
// None when there are more than `cap` ranges.
std::optional<std::vector<std::pair<int64_t, int64_t>>> byte_ranges(const isa::Ap& ap, size_t cap) {
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  const bool hbm = ap.mem == isa::Buffer::hbm;
  const bool contiguous = ap.stride[0] == 1 || ap.stride[0] == 0;  // a run, or one element read again
  const uint64_t per_run = contiguous ? 1 : ap.size[0];
  const uint64_t runs = uint64_t{ap.num_part} * ap.size[1] * ap.size[2] * ap.size[3] * per_run;
  if (runs > cap) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> r;
  r.reserve(runs);
  for (uint32_t p = 0; p < ap.num_part; ++p) {
    // an SBUF/PSUM offset is far below 2^40
    const int64_t base = static_cast<int64_t>(ap.offset) + (hbm ? esz * int64_t{ap.part_stride} * p
                                                                : static_cast<int64_t>(ap.start_part + p) << 40);
    for (uint32_t i3 = 0; i3 < ap.size[3]; ++i3)
      for (uint32_t i2 = 0; i2 < ap.size[2]; ++i2)
        for (uint32_t i1 = 0; i1 < ap.size[1]; ++i1) {
          const int64_t e = int64_t{i3} * ap.stride[3] + int64_t{i2} * ap.stride[2] + int64_t{i1} * ap.stride[1];
          if (contiguous) {
            r.emplace_back(base + e * esz, base + (e + (ap.stride[0] == 0 ? 1 : ap.size[0])) * esz);
            continue;
          }
          for (uint32_t i0 = 0; i0 < ap.size[0]; ++i0) {
            const int64_t a = base + (e + int64_t{i0} * ap.stride[0]) * esz;
            r.emplace_back(a, a + esz);
          }
        }
  }
  return r;
}

// Operands of more byte ranges than this (non-contiguous innermost dimensions) are not compared
// byte by byte when their boxes overlap: the instruction is refused as unchecked.
constexpr size_t kMaxOverlapRanges = size_t{1} << 20;

// Whether some byte of `a` is a byte of `b`; none when either has more than kMaxOverlapRanges
// ranges. Called only when their boxes overlap (rare): sorts and merges a's byte ranges and
// looks each of b's up.
std::optional<bool> bytes_overlap(const isa::Ap& a, const isa::Ap& b) {
  auto ra_ = byte_ranges(a, kMaxOverlapRanges);
  const auto rb = byte_ranges(b, kMaxOverlapRanges);
  if (!ra_ || !rb) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>>& ra = *ra_;
  std::sort(ra.begin(), ra.end());
  size_t n = 0;  // merge overlapping ranges: disjoint and sorted after
  for (const auto& x : ra) {
    if (n > 0 && x.first <= ra[n - 1].second)
      ra[n - 1].second = std::max(ra[n - 1].second, x.second);
    else
      ra[n++] = x;
  }
  ra.resize(n);
  for (const auto& [lo, hi] : *rb) {
    auto it = std::lower_bound(ra.begin(), ra.end(), std::make_pair(lo, std::numeric_limits<int64_t>::min()));
    if (it != ra.end() && it->first < hi) return true;
    if (it != ra.begin() && std::prev(it)->second > lo) return true;
  }
  return false;
}

// Engines and DMA stream their elements: a destination that overlaps a source only in part
// would read elements it has already overwritten. Exactly in place, or apart, is allowed.
void check_overlap(const isa::Insn& insn, const isa::Ap& src, const char* name) {
  if (src.mem != insn.dst.mem || same_elements(src, insn.dst)) return;
  if (!ap_box(src).overlaps(ap_box(insn.dst))) return;
  const std::optional<bool> hit = bytes_overlap(src, insn.dst);
  if (!hit)
    bad(insn, fmt::format("the destination and operand {} span overlapping regions in more than {} separate byte "
                          "ranges, too many to check that they are apart; give them regions that do not overlap",
                          name, kMaxOverlapRanges));
  if (*hit)
    bad(insn, fmt::format("the destination overlaps operand {} without being the same elements; operands must be "
                          "exactly in place or apart",
                          name));
}

}  // namespace

void validate_insn(const isa::Insn& insn, const Preset& pr, uint64_t hbm_bytes) {
  const isa::InsnInfo* info = isa::find_info(insn.opcode);
  if (!info) bad(insn, fmt::format("unknown opcode {}", static_cast<unsigned>(insn.opcode)));
  if (!isa::is_valid(insn.engine)) bad(insn, "unknown engine");
  if (info->engine != isa::Engine::none && insn.engine != info->engine)
    bad(insn, fmt::format("{} runs on engine {}, not {}", info->name, isa::to_string(info->engine), isa::to_string(insn.engine)));
  if (insn.dma_queue >= pr.dma_queues) bad(insn, fmt::format("DMA queue {} is outside 0..{}", insn.dma_queue, pr.dma_queues - 1));
  if (!isa::is_valid(insn.wait_cond) || !isa::is_valid(insn.upd_op) || !isa::is_valid(insn.upd_when))
    bad(insn, "unknown semaphore condition or update");
  if (!isa::is_valid(insn.op0) || !isa::is_valid(insn.op1)) bad(insn, "unknown ALU op");
  for (unsigned k = 0; k < info->num_operands; ++k) {
    const isa::OperandInfo& o = info->operands[k];
    if (const isa::Ap* ap = ap_field(insn, o.field)) {
      if (o.optional && ap->num_part == 0) continue;  // an absent operand
      if (!buffer_allowed(o, ap->mem))
        bad(insn, fmt::format("operand {} of {} may not be in {}", o.field, info->name, isa::to_string(ap->mem)));
      check_ap(insn, o.field, *ap, pr, hbm_bytes);
    }
  }
  switch (insn.opcode) {
    case isa::Opcode::dma_copy:
    case isa::Opcode::tensor_copy:
    case isa::Opcode::tensor_tensor:
    case isa::Opcode::tensor_scalar: {
      auto same_shape = [&](const isa::Ap& a, const char* an) {
        if (a.num_part != insn.dst.num_part || ap_free_elems(a) != ap_free_elems(insn.dst))
          bad(insn, fmt::format("operand {} has {} partitions x {} elements but dst has {} x {}", an, a.num_part,
                                ap_free_elems(a), insn.dst.num_part, ap_free_elems(insn.dst)));
      };
      same_shape(insn.src0, "src0");
      check_overlap(insn, insn.src0, "src0");
      if (insn.opcode == isa::Opcode::tensor_tensor) {
        same_shape(insn.src1, "src1");
        check_overlap(insn, insn.src1, "src1");
        if (insn.src0.mem == isa::Buffer::psum && insn.src1.mem == isa::Buffer::psum)
          bad(insn, "tensor_tensor cannot read both inputs from PSUM");
      }
      if (insn.opcode != isa::Opcode::dma_copy && (insn.src0.start_part != insn.dst.start_part ||
                                                   (insn.opcode == isa::Opcode::tensor_tensor &&
                                                    insn.src1.start_part != insn.dst.start_part)))
        bad(insn, "engine operands must use the same partitions (lane p reads and writes partition start_part + p)");
      check_bitvec(insn);
      if (insn.opcode == isa::Opcode::tensor_scalar) {
        if (insn.s0_vec) check_sref(insn, "s0", insn.s0, insn.src0, pr);
        if (insn.s1_vec) check_sref(insn, "s1", insn.s1, insn.src0, pr);
        if ((insn.s0_vec && insn.s0.start_part != insn.src0.start_part) ||
            (insn.s1_vec && insn.s1.start_part != insn.src0.start_part))
          bad(insn, "a per-partition operand must start at the data operand's partition");
      }
      break;
    }
    case isa::Opcode::tensor_reduce:
      check_tensor_reduce(insn);
      check_bitvec(insn);
      check_overlap(insn, insn.src0, "src0");
      break;
    case isa::Opcode::activation:
      check_activation(insn, pr);
      check_overlap(insn, insn.src0, "src0");
      break;
    case isa::Opcode::load_stationary: {
      const isa::Ap& a = insn.src0;
      check_pe_dtype(insn, "stationary", a.dtype);
      if (ap_free_elems(a) > pr.num_partitions)
        bad(insn, fmt::format("the stationary operand has {} free elements; the array has {} columns",
                              ap_free_elems(a), pr.num_partitions));
      break;
    }
    case isa::Opcode::multiply_moving: {
      const isa::Ap& d = insn.dst;
      check_pe_dtype(insn, "moving", insn.src0.dtype);
      const uint64_t n = ap_free_elems(insn.src0);
      const uint64_t bank_elems = pr.psum_bank_bytes / 4;
      if (n > bank_elems)
        bad(insn, fmt::format("the moving operand has {} free elements; one PSUM bank holds {} fp32", n, bank_elems));
      if (d.dtype != isa::Dtype::fp32) bad(insn, "a matmul writes fp32 to PSUM");
      // The result is one contiguous run of fp32 within one bank.
      uint64_t span = 1;
      for (int k = 0; k < 4; ++k) {
        if (d.size[k] > 1 && static_cast<uint64_t>(d.stride[k]) != span)
          bad(insn, "the PSUM result must be contiguous (strides 1, then the product of the inner sizes)");
        span *= d.size[k];
      }
      if (d.offset / pr.psum_bank_bytes != (d.offset + 4 * span - 1) / pr.psum_bank_bytes)
        bad(insn, fmt::format("the PSUM result [{}, {}) crosses a {}-byte bank boundary", d.offset, d.offset + 4 * span,
                              pr.psum_bank_bytes));
      break;
    }
    default:
      break;
  }
}

void validate_pe_pair(uint32_t k, uint32_t m, isa::Dtype sdt, const isa::Insn& mm) {
  const isa::Ap& mv = mm.src0;
  if (mv.num_part != k)
    bad(mm, fmt::format("the moving operand has {} partitions, the stationary operand {} (the contraction dimension)",
                        mv.num_part, k));
  if (mm.dst.num_part != m)
    bad(mm, fmt::format("the PSUM result has {} partitions, the stationary operand {} columns", mm.dst.num_part, m));
  if (ap_free_elems(mm.dst) != ap_free_elems(mv))
    bad(mm, fmt::format("the PSUM result has {} elements per partition, the moving operand {}", ap_free_elems(mm.dst),
                        ap_free_elems(mv)));
  if (isa::is_fp32_class(sdt) != isa::is_fp32_class(mv.dtype))
    bad(mm, fmt::format("a {} stationary operand cannot multiply a {} moving operand: fp32 and tf32 pair only with "
                        "fp32 or tf32",
                        isa::to_string(sdt), isa::to_string(mv.dtype)));
}

void validate_program(const Program& prog, const Preset& pr) {
  for (const auto& s : prog.streams)
    for (const auto& in : s.insns) validate_insn(in.insn, pr, prog.hbm_bytes);
  const Stream& pe = prog.streams.at(Program::stream_index(isa::Engine::pe, 0));
  bool loaded = false;
  uint32_t k = 0, m = 0;
  isa::Dtype dt{};
  for (const auto& in : pe.insns) {
    if (in.insn.opcode == isa::Opcode::load_stationary) {
      loaded = true;
      k = in.insn.src0.num_part;
      m = static_cast<uint32_t>(ap_free_elems(in.insn.src0));
      dt = in.insn.src0.dtype;
    } else if (in.insn.opcode == isa::Opcode::multiply_moving) {
      if (!loaded) bad(in.insn, "no load_stationary precedes this multiply on the tensor engine's stream");
      validate_pe_pair(k, m, dt, in.insn);
    }
  }
}

}  // namespace ncore
