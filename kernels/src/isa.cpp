// nki.isa instructions: operand checks in NKI's words, lowering and emission. See isa.hpp.
#include "nki/isa.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "tracer_impl.hpp"

namespace nki {
namespace {

using detail::Ctx;
using detail::Lowered;
using detail::TracerImpl;
namespace isa = ncore::isa;

// Elements per partition of one engine instruction (handout: "the second dimension for a
// single SBUF vector instruction can be up to 64K elements").
constexpr uint64_t kMaxFreeElems = 65536;

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::string shape_of(const Tensor& t) { return detail::shape_str(t.view().size.data(), t.view().nd); }

// An access of n partitions must start on a boundary that depends on n (spec 1.6): more than
// half the partitions start at 0, more than a quarter at 0 or the middle, the rest at a
// quarter boundary (0/32/64/96 with 128 partitions).
void check_start(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t, const isa::Ap& ap) {
  const uint32_t q = static_cast<uint32_t>(tr.preset().num_partitions / 4);
  if (q == 0) return;
  const uint32_t n = ap.num_part, s = ap.start_part;
  bool ok;
  std::string rule;
  if (n > 2 * q) {
    ok = s == 0;
    rule = fmt::format("an access of {}-{} partitions must start at partition 0", 2 * q + 1, 4 * q);
  } else if (n > q) {
    ok = s == 0 || s == 2 * q;
    rule = fmt::format("an access of {}-{} partitions must start at partition 0 or {}", q + 1, 2 * q, 2 * q);
  } else {
    ok = s % q == 0;
    rule = fmt::format("an access of 1-{} partitions must start at partition 0, {}, {} or {}", q, q, 2 * q, 3 * q);
  }
  if (!ok)
    tr.fail(c.loc, fmt::format("{} ({}) starts at partition {}, but {}", detail::operand_str(c, param), t.str(), s,
                               rule));
}

// An operand of an engine instruction: on chip, at most 64K elements per partition, on an
// allowed start partition.
Lowered engine_operand(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t) {
  tr.check_alive(t, c, param);
  if (!t.on_chip())
    tr.fail(c.loc, fmt::format("Expected operand '{}' of '{}' to be in address space 'sbuf' or 'psum', but got a "
                               "tile in '{}' instead.",
                               param, c.op, to_string(t.buffer())));
  Lowered l = tr.lower_onchip(t, c, param);
  const uint64_t fe = ncore::ap_free_elems(l.ap);
  if (fe > kMaxFreeElems)
    tr.fail(c.loc, fmt::format("free size of {} ({}) is {} elements per partition, exceeding the architecture "
                               "limitation of {}.",
                               detail::operand_str(c, param), t.str(), fe, kMaxFreeElems));
  check_start(tr, c, param, t, l.ap);
  return l;
}

// Two engine operands: same partition count, same elements per partition, same partitions.
void same_tile_shape(TracerImpl& tr, const Ctx& c, const char* pa, const Tensor& a, const Lowered& la, const char* pb,
                     const Tensor& b, const Lowered& lb) {
  if (la.ap.num_part != lb.ap.num_part)
    tr.fail(c.loc, fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) "
                               "of '{}'",
                               pa, shape_of(a), pb, shape_of(b), c.op));
  if (ncore::ap_free_elems(la.ap) != ncore::ap_free_elems(lb.ap))
    tr.fail(c.loc, fmt::format("number of elements per partition mismatch in parameters ({}{}, {}{}) of '{}': {} vs {}",
                               pa, shape_of(a), pb, shape_of(b), c.op, ncore::ap_free_elems(la.ap),
                               ncore::ap_free_elems(lb.ap)));
  if (la.ap.start_part != lb.ap.start_part)
    tr.fail(c.loc, fmt::format("operands of '{}' must be on the same partitions (each lane reads and writes its own "
                               "partition): {} ({}) starts at partition {}, {} ({}) at partition {}",
                               c.op, pa, a.str(), la.ap.start_part, pb, b.str(), lb.ap.start_part));
}

isa::Insn engine_insn(isa::Opcode op) {
  isa::Insn i{};
  i.opcode = op;
  i.engine = isa::Engine::dve;
  return i;
}

const unsigned kDveStream = ncore::Program::stream_index(isa::Engine::dve, 0);

// The logical shape of an on-chip view as (partitions, free dims...), block dims dropped.
Shape tile_shape(const Tensor& t) {
  const detail::View& v = t.view();
  Shape s;
  bool part = false;
  for (int d = 0; d < v.nd; ++d) part |= v.kind[d] == detail::DimKind::part;
  if (!part) s.push_back(1);
  for (int d = 0; d < v.nd; ++d)
    if (v.kind[d] != detail::DimKind::block) s.push_back(v.size[d]);
  return s;
}

// HBM view rows and elements per row, as lower_hbm will see them.
std::pair<int64_t, int64_t> hbm_rows(const Tensor& t) {
  const detail::View& v = t.view();
  if (v.nd == 0) return {1, 1};
  int64_t per = 1;
  for (int d = 1; d < v.nd; ++d) per *= v.size[d];
  return {v.size[0], per};
}

int64_t elements(const Tensor& t) {
  int64_t e = 1;
  for (int d = 0; d < t.view().nd; ++d) e *= t.view().size[d];
  return e;
}

[[noreturn]] void illegal_assignment(TracerImpl& tr, const Ctx& c, const Tensor& dst, const Tensor& src,
                                     const std::string& why) {
  tr.fail(c.loc, fmt::format("Illegal assignment destination shape in '{}': dst {} cannot receive src {}: {}", c.op,
                             dst.str(), src.str(), why));
}

// The HBM side `h` of a copy whose other side has `rows` partitions of `per` elements, reshaped
// to `target` if its own rows differ.
Tensor fit_hbm(TracerImpl& tr, const Ctx& c, const Tensor& h, const Shape& target, int64_t rows, int64_t per,
               const Tensor& dst, const Tensor& src) {
  const auto hr = hbm_rows(h);
  if (hr.first == rows && hr.second == per) return h;
  if (elements(h) != rows * per)
    illegal_assignment(tr, c, dst, src,
                       fmt::format("{} elements vs {} ({} partitions x {} elements)", elements(h), rows * per, rows,
                                   per));
  try {
    return h.reshape(target, c.loc);
  } catch (const ncore::KernelError&) {
    illegal_assignment(tr, c, dst, src,
                       fmt::format("the HBM view {} cannot be read as {} without a copy", h.str(), target.str()));
  }
}

Tensor tensor_tensor_impl(const Tensor* dst_in, const Tensor& data1, const Tensor& data2, AluOp op, Dtype dtype,
                          const Loc& loc) {
  TracerImpl& tr = detail::require("tensor_tensor", loc);
  const Ctx c{"tensor_tensor", loc};
  if (!isa::is_valid(op)) tr.fail(loc, "invalid ALU op for 'tensor_tensor'");
  const Lowered l1 = engine_operand(tr, c, "data1", data1);
  const Lowered l2 = engine_operand(tr, c, "data2", data2);
  same_tile_shape(tr, c, "data1", data1, l1, "data2", data2, l2);
  if (l1.ap.mem == isa::Buffer::psum && l2.ap.mem == isa::Buffer::psum)
    tr.fail(loc, "'tensor_tensor' cannot read both data1 and data2 from PSUM");
  const Tensor dst = dst_in ? *dst_in : tr.new_result(data1, dtype, "tensor_tensor", loc);
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  same_tile_shape(tr, c, "dst", dst, ld, "data1", data1, l1);
  isa::Insn i = engine_insn(isa::Opcode::tensor_tensor);
  i.dst = ld.ap;
  i.src0 = l1.ap;
  i.src1 = l2.ap;
  i.op0 = op;
  const ncore::Access acc[3] = {{l1.region, false}, {l2.region, false}, {ld.region, true}};
  tr.emit(kDveStream, i, loc, acc, 3);
  return dst;
}

// One tensor_scalar operand: nothing, an immediate, or a (P, 1) tile on data's partitions.
void scalar_operand(TracerImpl& tr, const Ctx& c, const char* param, const Operand& o, const Tensor& data,
                    const Lowered& ld, bool& vec, isa::Sref& s, uint32_t& imm, ncore::Access& acc, bool& has_acc) {
  vec = false;
  has_acc = false;
  if (o.is_imm()) {
    imm = float_bits(o.value());
    return;
  }
  if (!o.is_tile()) return;
  const Tensor& t = o.tensor();
  tr.check_alive(t, c, param);
  if (!t.on_chip())
    tr.fail(c.loc, fmt::format("Expected operand '{}' of '{}' to be in address space 'sbuf' or 'psum', but got a "
                               "tile in '{}' instead.",
                               param, c.op, to_string(t.buffer())));
  const Lowered l = tr.lower_onchip(t, c, param);
  if (l.ap.num_part != ld.ap.num_part || ncore::ap_free_elems(l.ap) != 1)
    tr.fail(c.loc, fmt::format("{} of '{}' must be a scalar or a tile of shape (P, 1) with P = {} (the partitions of "
                               "data {}), but got {}",
                               param, c.op, ld.ap.num_part, data.str(), t.str()));
  if (l.ap.start_part != ld.ap.start_part)
    tr.fail(c.loc, fmt::format("{} ({}) of '{}' must be on the partitions of data {}: it starts at partition {}, "
                               "data at {}",
                               param, t.str(), c.op, data.str(), l.ap.start_part, ld.ap.start_part));
  vec = true;
  s.mem = l.ap.mem;
  s.dtype = l.ap.dtype;
  s.start_part = l.ap.start_part;
  s.offset = l.ap.offset;
  acc = ncore::Access{ncore::region_of(s, ld.ap.num_part), false};
  has_acc = true;
}

Tensor tensor_scalar_impl(const Tensor* dst_in, const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0,
                          AluOp op1, const Operand& operand1, bool reverse1, const Loc& loc) {
  TracerImpl& tr = detail::require("tensor_scalar", loc);
  const Ctx c{"tensor_scalar", loc};
  if (!isa::is_valid(op0) || !isa::is_valid(op1)) tr.fail(loc, "invalid ALU op for 'tensor_scalar'");
  if (op0 != AluOp::bypass && operand0.none()) tr.fail(loc, "op0 of 'tensor_scalar' needs operand0");
  if (op1 != AluOp::bypass && operand1.none()) tr.fail(loc, "op1 of 'tensor_scalar' needs operand1");
  const Lowered lx = engine_operand(tr, c, "data", data);
  isa::Insn i = engine_insn(isa::Opcode::tensor_scalar);
  ncore::Access acc[4];
  size_t n = 0;
  acc[n++] = ncore::Access{lx.region, false};
  bool has = false;
  scalar_operand(tr, c, "operand0", operand0, data, lx, i.s0_vec, i.s0, i.imm0, acc[n], has);
  n += has;
  if (op1 != AluOp::bypass) {
    scalar_operand(tr, c, "operand1", operand1, data, lx, i.s1_vec, i.s1, i.imm1, acc[n], has);
    n += has;
  }
  const Tensor dst = dst_in ? *dst_in : tr.new_result(data, data.dtype(), "tensor_scalar", loc);
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  same_tile_shape(tr, c, "dst", dst, ld, "data", data, lx);
  i.dst = ld.ap;
  i.src0 = lx.ap;
  i.op0 = op0;
  i.op1 = op1;
  i.rev0 = reverse0;
  i.rev1 = reverse1;
  acc[n++] = ncore::Access{ld.region, true};
  tr.emit(kDveStream, i, loc, acc, n);
  return dst;
}

Tensor tensor_copy_impl(const Tensor* dst_in, const Tensor& src, Dtype dtype, const Loc& loc) {
  TracerImpl& tr = detail::require("tensor_copy", loc);
  const Ctx c{"tensor_copy", loc};
  const Lowered ls = engine_operand(tr, c, "src", src);
  const Tensor dst = dst_in ? *dst_in : tr.new_result(src, dtype, "tensor_copy", loc);
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  same_tile_shape(tr, c, "dst", dst, ld, "src", src, ls);
  isa::Insn i = engine_insn(isa::Opcode::tensor_copy);
  i.dst = ld.ap;
  i.src0 = ls.ap;
  const ncore::Access acc[2] = {{ls.region, false}, {ld.region, true}};
  tr.emit(kDveStream, i, loc, acc, 2);
  return dst;
}

}  // namespace

namespace nisa {

void dma_copy(const Tensor& dst_in, const Tensor& src_in, Loc loc) {
  TracerImpl& tr = detail::require("dma_copy", loc);
  const Ctx c{"dma_copy", loc};
  tr.check_alive(dst_in, c, "dst");
  tr.check_alive(src_in, c, "src");
  for (const auto& side : {std::make_pair("dst", &dst_in), std::make_pair("src", &src_in)})
    if (side.second->buffer() == BufferKind::psum)
      tr.fail(loc, fmt::format("Expected operand '{}' of 'dma_copy' to be in address space 'hbm' or 'sbuf', but got "
                               "a tile in 'psum' instead.",
                               side.first));
  Tensor dst = dst_in, src = src_in;
  Lowered ld, ls;
  if (dst.on_chip() && src.on_chip()) {
    ld = tr.lower_onchip(dst, c, "dst");
    ls = tr.lower_onchip(src, c, "src");
    if (ld.ap.num_part != ls.ap.num_part)
      tr.fail(loc, fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (dst{}, src{}) "
                               "of 'dma_copy'",
                               shape_of(dst), shape_of(src)));
    if (ncore::ap_free_elems(ld.ap) != ncore::ap_free_elems(ls.ap))
      illegal_assignment(tr, c, dst, src,
                         fmt::format("{} vs {} elements per partition", ncore::ap_free_elems(ld.ap),
                                     ncore::ap_free_elems(ls.ap)));
  } else if (dst.on_chip()) {
    ld = tr.lower_onchip(dst, c, "dst");
    src = fit_hbm(tr, c, src, tile_shape(dst), ld.ap.num_part, static_cast<int64_t>(ncore::ap_free_elems(ld.ap)), dst,
                  src_in);
    ls = tr.lower_hbm(src, c, "src");
  } else if (src.on_chip()) {
    ls = tr.lower_onchip(src, c, "src");
    dst = fit_hbm(tr, c, dst, tile_shape(src), ls.ap.num_part, static_cast<int64_t>(ncore::ap_free_elems(ls.ap)),
                  dst_in, src);
    ld = tr.lower_hbm(dst, c, "dst");
  } else {
    const auto dr = hbm_rows(dst);
    src = fit_hbm(tr, c, src, dst.shape(), dr.first, dr.second, dst, src_in);
    if (dr.first > static_cast<int64_t>(tr.preset().num_partitions))
      tr.fail(loc, fmt::format("an HBM-to-HBM 'dma_copy' of {} rows ({}): at most {} rows per transfer", dr.first,
                               dst.str(), tr.preset().num_partitions));
    ld = tr.lower_hbm(dst, c, "dst");
    ls = tr.lower_hbm(src, c, "src");
  }
  isa::Insn i{};
  i.opcode = isa::Opcode::dma_copy;
  i.engine = isa::Engine::dma;
  i.dma_queue = tr.next_dma_queue();
  i.dst = ld.ap;
  i.src0 = ls.ap;
  const ncore::Access acc[2] = {{ls.region, false}, {ld.region, true}};
  tr.emit(ncore::Program::stream_index(isa::Engine::dma, i.dma_queue), i, loc, acc, 2);
}

Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Loc loc) {
  return tensor_tensor_impl(nullptr, data1, data2, op, data1.dtype(), loc);
}

Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Dtype dtype, Loc loc) {
  return tensor_tensor_impl(nullptr, data1, data2, op, dtype, loc);
}

void tensor_tensor(const Tensor& dst, const Tensor& data1, const Tensor& data2, AluOp op, Loc loc) {
  tensor_tensor_impl(&dst, data1, data2, op, dst.dtype(), loc);
}

Tensor tensor_scalar(const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0, AluOp op1,
                     const Operand& operand1, bool reverse1, Loc loc) {
  return tensor_scalar_impl(nullptr, data, op0, operand0, reverse0, op1, operand1, reverse1, loc);
}

void tensor_scalar(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0,
                   AluOp op1, const Operand& operand1, bool reverse1, Loc loc) {
  tensor_scalar_impl(&dst, data, op0, operand0, reverse0, op1, operand1, reverse1, loc);
}

Tensor tensor_copy(const Tensor& src, Loc loc) { return tensor_copy_impl(nullptr, src, src.dtype(), loc); }

Tensor tensor_copy(const Tensor& src, Dtype dtype, Loc loc) { return tensor_copy_impl(nullptr, src, dtype, loc); }

void tensor_copy(const Tensor& dst, const Tensor& src, Loc loc) { tensor_copy_impl(&dst, src, dst.dtype(), loc); }

void memset(const Tensor& dst, float value, Loc loc) {
  TracerImpl& tr = detail::require("memset", loc);
  const Ctx c{"memset", loc};
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  isa::Insn i = engine_insn(isa::Opcode::memset);
  i.dst = ld.ap;
  i.imm0 = float_bits(value);
  const ncore::Access acc[1] = {{ld.region, true}};
  tr.emit(kDveStream, i, loc, acc, 1);
}

}  // namespace nisa
}  // namespace nki
