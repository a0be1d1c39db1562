// nki.isa instructions: operand checks in NKI's words, lowering and emission. See isa.hpp.
#include "nki/isa.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_kinds.hpp"
#include "nki/language.hpp"
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
  tr.require_on_chip(t, c, param);
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

using detail::tile_shape;
using detail::tile_str;

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

// A bitvec op (bitwise_and ... right_shift) works on the elements' bits: the tiles it reads and
// writes must share one integer dtype.
void check_bitvec(TracerImpl& tr, const Ctx& c, AluOp op, std::initializer_list<std::pair<const char*, const Tensor*>> ts) {
  if (!isa::is_bitvec(op)) return;
  const std::pair<const char*, const Tensor*>* first = nullptr;
  for (const auto& e : ts) {
    const auto& [param, t] = e;
    if (!t) continue;
    if (!isa::is_integer(to_isa(t->dtype())) || (first && t->dtype() != first->second->dtype()))
      tr.fail(c.loc, fmt::format("'{}' of '{}' is a bitwise operation on integers: its operands and result must have "
                                 "one integer dtype, but {} is {}{}",
                                 isa::to_string(op), c.op, param, to_string(t->dtype()),
                                 first ? fmt::format(" and {} is {}", first->first, to_string(first->second->dtype()))
                                       : ""));
    if (!first) first = &e;
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
  check_bitvec(tr, c, op, {{"data1", &data1}, {"data2", &data2}, {"dst", &dst}});
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

// One tensor_scalar operand: nothing, an immediate, or a (P, 1) tile on data's partitions. A bitvec
// op's immediate is an integer, given as its bits.
void scalar_operand(TracerImpl& tr, const Ctx& c, const char* param, const Operand& o, const Tensor& data,
                    const Lowered& ld, bool& vec, isa::Sref& s, uint32_t& imm, ncore::Access& acc, bool& has_acc,
                    bool bits = false) {
  vec = false;
  has_acc = false;
  if (o.is_imm()) {
    const double v = o.value();
    if (bits && (v != std::floor(v) || v < -2147483648.0 || v > 4294967295.0))
      tr.fail(c.loc, fmt::format("{} of '{}' must be an integer for a bitwise operation, got {}", param, c.op, v));
    imm = bits ? static_cast<uint32_t>(static_cast<int64_t>(v)) : float_bits(o.value());
    return;
  }
  if (!o.is_tile()) return;
  const Tensor& t = o.tensor();
  tr.check_alive(t, c, param);
  tr.require_on_chip(t, c, param);
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
  const bool bits = isa::is_bitvec(op0) || isa::is_bitvec(op1);
  if (bits && op0 != AluOp::bypass && op1 != AluOp::bypass && isa::is_bitvec(op0) != isa::is_bitvec(op1))
    tr.fail(loc, fmt::format("'tensor_scalar' cannot combine the bitwise operation '{}' with the arithmetic operation "
                             "'{}' (the first works on integer bits, the second in float32): issue two instructions",
                             isa::to_string(isa::is_bitvec(op0) ? op0 : op1), isa::to_string(isa::is_bitvec(op0) ? op1 : op0)));
  scalar_operand(tr, c, "operand0", operand0, data, lx, i.s0_vec, i.s0, i.imm0, acc[n], has, bits);
  n += has;
  if (op1 != AluOp::bypass) {
    scalar_operand(tr, c, "operand1", operand1, data, lx, i.s1_vec, i.s1, i.imm1, acc[n], has, bits);
    n += has;
  }
  const Tensor dst = dst_in ? *dst_in : tr.new_result(data, data.dtype(), "tensor_scalar", loc);
  for (AluOp op : {op0, op1})
    check_bitvec(tr, c, op, {{"data", &data}, {"dst", &dst},
                             {"operand0", operand0.is_tile() ? &operand0.tensor() : nullptr},
                             {"operand1", operand1.is_tile() ? &operand1.tensor() : nullptr}});
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

// tensor_reduce: op over the trailing free axes of data. The lowered access pattern's innermost
// dimensions must hold exactly the reduced elements; where lowering merged a reduced dimension
// with an outer one (contiguous in memory), that dimension is split again.
Tensor tensor_reduce_impl(const Tensor* dst_in, AluOp op, const Tensor& data, const nisa::Axes& axis, Dtype dtype,
                          bool keepdims, const Loc& loc) {
  TracerImpl& tr = detail::require("tensor_reduce", loc);
  const Ctx c{"tensor_reduce", loc};
  if (op != AluOp::add && op != AluOp::multiply && op != AluOp::max && op != AluOp::min &&
      op != AluOp::bitwise_and && op != AluOp::bitwise_or && op != AluOp::bitwise_xor)
    tr.fail(loc, fmt::format("op '{}' of 'tensor_reduce' is not supported: use nl::add, nl::multiply, nl::maximum, "
                             "nl::minimum, nl::bitwise_and, nl::bitwise_or or nl::bitwise_xor",
                             isa::is_valid(op) ? isa::to_string(op) : "?"));
  Lowered lx = engine_operand(tr, c, "data", data);
  const Shape s = tile_shape(data);
  const int nd = static_cast<int>(s.size());
  std::vector<int> ax = axis.v;
  for (int& a : ax)
    if (a < 0) a += nd;  // Python-style negative axes
  std::sort(ax.begin(), ax.end());
  ax.erase(std::unique(ax.begin(), ax.end()), ax.end());
  if (ax.empty() || ax.front() < 1 || ax.back() >= nd)
    tr.fail(loc, fmt::format("axis of 'tensor_reduce' must be free dimensions of data {} (1 to {}; dimension 0 is the "
                             "partition dimension); got ({})",
                             tile_str(data), nd - 1, fmt::join(axis.v, ", ")));
  bool trailing = ax.back() == nd - 1;
  for (size_t k = 1; k < ax.size(); ++k) trailing &= ax[k] == ax[k - 1] + 1;
  if (!trailing && data.ndim() == static_cast<size_t>(nd)) {
    // Other axes: the data read in an order with the reduced ones innermost (a view; the
    // engine's access pattern walks it), the kept ones first, each group in its own order.
    std::vector<int> order{0};
    for (int d = 1; d < nd; ++d)
      if (!std::binary_search(ax.begin(), ax.end(), d)) order.push_back(d);
    for (int a : ax) order.push_back(a);
    const Tensor moved = data.permute(order, loc);
    std::vector<int> inner;
    for (int d = nd - static_cast<int>(ax.size()); d < nd; ++d) inner.push_back(d);
    const nisa::Axes ia(inner);
    if (dst_in || !keepdims) return tensor_reduce_impl(dst_in, op, moved, ia, dtype, false, loc);
    // keepdims: the result shaped like data with the reduced axes of size 1.
    Tensor r = tensor_reduce_impl(nullptr, op, moved, ia, dtype, false, loc);
    Shape keep;
    for (int d = 0; d < nd; ++d) keep.push_back(std::binary_search(ax.begin(), ax.end(), d) ? 1 : s[d]);
    return r.reshape(keep, loc);
  }
  if (!trailing)
    tr.fail(loc, fmt::format("axis of 'tensor_reduce' must be the last free dimensions of data {} (dimension 0 is the "
                             "partition dimension), e.g. {} or ({}, {}); got ({})",
                             tile_str(data), nd - 1, nd - 2, nd - 1, fmt::join(axis.v, ", ")));
  uint64_t r = 1;
  for (int a : ax) r *= static_cast<uint64_t>(s[a]);
  // Innermost k dimensions of the access pattern = the reduced elements.
  isa::Ap& ap = lx.ap;
  int used = 0;
  for (int k = 0; k < 4; ++k)
    if (ap.size[k] > 1) used = k + 1;
  int k = 0;
  uint64_t prod = 1;
  while (k < used && prod * ap.size[k] <= r && prod < r) prod *= ap.size[k++];
  if (prod != r) {
    const uint64_t x = r / prod;
    if (r % prod != 0 || ap.size[k] % x != 0 || used >= 4)
      tr.fail(loc, fmt::format("data {} of 'tensor_reduce' has a layout whose access pattern cannot separate the "
                               "reduced axes from the others",
                               tile_str(data)));
    for (int d = 3; d > k; --d) {
      ap.size[d] = ap.size[d - 1];
      ap.stride[d] = ap.stride[d - 1];
    }
    ap.size[k + 1] = static_cast<uint32_t>(ap.size[k] / x);
    ap.stride[k + 1] = static_cast<int32_t>(ap.stride[k] * static_cast<int64_t>(x));
    ap.size[k] = static_cast<uint32_t>(x);
    ++k;
  }
  if (k == 0) {
    // Every reduced axis has size 1: reduce a size-1 innermost dimension (a copy of each element).
    if (used >= 4)
      tr.fail(loc, fmt::format("data {} of 'tensor_reduce' needs 4 free dimensions besides the reduced one; an access "
                               "pattern has at most 4",
                               tile_str(data)));
    for (int d = 3; d > 0; --d) {
      ap.size[d] = ap.size[d - 1];
      ap.stride[d] = ap.stride[d - 1];
    }
    ap.size[0] = 1;
    ap.stride[0] = 1;
    k = 1;
  }
  Shape out;
  out.push_back(s[0]);
  for (int d = 1; d < nd; ++d) {
    const bool reduced = d >= ax.front();
    if (!reduced) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  if (out.size() == 1) out.push_back(1);
  const Tensor dst = dst_in ? *dst_in : tr.new_tile(out, dtype, BufferKind::sbuf, "tensor_reduce_result", loc, ap.start_part);
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  if (ld.ap.num_part != ap.num_part || ld.ap.start_part != ap.start_part)
    tr.fail(loc, fmt::format("dst {} of 'tensor_reduce' must be on the partitions of data {} ({} from partition {})",
                             tile_str(dst), tile_str(data), ap.num_part, ap.start_part));
  if (ncore::ap_free_elems(ld.ap) * r != ncore::ap_free_elems(ap))
    tr.fail(loc, fmt::format("dst {} of 'tensor_reduce' has {} elements per partition, but reducing axis ({}) of data "
                             "{} leaves {}",
                             tile_str(dst), ncore::ap_free_elems(ld.ap), fmt::join(axis.v, ", "), tile_str(data),
                             ncore::ap_free_elems(ap) / r));
  isa::Insn i = engine_insn(isa::Opcode::tensor_reduce);
  i.op0 = op;
  i.red_axes = static_cast<uint32_t>(k);
  i.src0 = ap;
  i.dst = ld.ap;
  const ncore::Access acc[2] = {{lx.region, false}, {ld.region, true}};
  tr.emit(kDveStream, i, loc, acc, 2);
  return dst;
}

const unsigned kActStream = ncore::Program::stream_index(isa::Engine::act, 0);

// activation / activation_reduce on the scalar engine.
Tensor activation_impl(const Tensor* dst_in, ActFunc op, const Tensor& data, const Operand& bias, const Operand& scale,
                       Dtype dtype, const Tensor* reduce_res, AluOp reduce_op, const Loc& loc) {
  const char* name = reduce_res ? "activation_reduce" : "activation";
  TracerImpl& tr = detail::require(name, loc);
  const Ctx c{name, loc};
  if (!isa::is_valid(op)) tr.fail(loc, fmt::format("invalid activation function for '{}'", name));
  const Lowered lx = engine_operand(tr, c, "data", data);
  isa::Insn i{};
  i.opcode = isa::Opcode::activation;
  i.engine = isa::Engine::act;
  i.func = op;
  ncore::Access acc[5];
  size_t n = 0;
  acc[n++] = ncore::Access{lx.region, false};
  bool has = false;
  if (scale.none()) {
    i.imm0 = float_bits(1.0f);
  } else {
    scalar_operand(tr, c, "scale", scale, data, lx, i.s0_vec, i.s0, i.imm0, acc[n], has);
    if (has && i.s0.dtype != isa::Dtype::fp32)
      tr.fail(loc, fmt::format("scale of '{}' must be a float32 scalar or a float32 tile of shape (P, 1), but got {} "
                               "of {}",
                               name, scale.tensor().str(), to_string(scale.tensor().dtype())));
    n += has;
  }
  if (bias.none()) {
    i.imm1 = 0x80000000u;  // -0.0: x + (-0) = x for every x, the ISA's "no bias"
  } else {
    scalar_operand(tr, c, "bias", bias, data, lx, i.s1_vec, i.s1, i.imm1, acc[n], has);
    n += has;
  }
  const Tensor dst = dst_in ? *dst_in : tr.new_result(data, dtype, name, loc);
  const Lowered ld = engine_operand(tr, c, "dst", dst);
  same_tile_shape(tr, c, "dst", dst, ld, "data", data, lx);
  i.dst = ld.ap;
  i.src0 = lx.ap;
  acc[n++] = ncore::Access{ld.region, true};
  if (reduce_res) {
    if (reduce_op != AluOp::add)
      tr.fail(loc, fmt::format("reduce_op of '{}' must be nl::add, the scalar engine's accumulators only add", name));
    const Lowered lr = engine_operand(tr, c, "reduce_res", *reduce_res);
    if (lr.ap.num_part != lx.ap.num_part || lr.ap.start_part != lx.ap.start_part ||
        ncore::ap_free_elems(lr.ap) != 1)
      tr.fail(loc, fmt::format("reduce_res {} of '{}' must be a tile of shape (P, 1) on the partitions of data {}",
                               tile_str(*reduce_res), name, tile_str(data)));
    i.dst2 = lr.ap;
    acc[n++] = ncore::Access{lr.region, true};
  }
  tr.emit(kActStream, i, loc, acc, n);
  return dst;
}

const unsigned kPeStream = ncore::Program::stream_index(isa::Engine::pe, 0);


// An operand of the tensor engine: on chip in the one buffer the instruction takes (SBUF for
// stationary and moving, PSUM for the result), on an allowed start partition.
Lowered pe_operand(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t, BufferKind want) {
  tr.check_alive(t, c, param);
  if (t.buffer() != want)
    tr.fail(c.loc, fmt::format("Expected operand '{}' of '{}' to be in address space '{}', but got a tile in '{}' "
                               "instead.",
                               param, c.op, to_string(want), to_string(t.buffer())));
  if (!is_float(t.dtype()))
    tr.fail(c.loc, fmt::format("operand '{}' of '{}' is {}: the tensor engine multiplies float32, tfloat32, "
                               "bfloat16, float16, float8_e4m3 or float8_e5m2",
                               param, c.op, to_string(t.dtype())));
  Lowered l = tr.lower_onchip(t, c, param);
  check_start(tr, c, param, t, l.ap);
  return l;
}

// The partitions of a tensor-engine operand (the contraction dimension K, or the transposed
// data's rows) and its free size (flattened) against the array's limits, in NKI's words.
void check_pe_dims(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t, const Lowered& l,
                   uint64_t free_limit, const char* nki_op, const char* limit_name) {
  const uint64_t parts = tr.preset().num_partitions;
  if (l.ap.num_part > parts)
    tr.fail(c.loc, fmt::format("number of partitions {} exceed architecture limitation of {}. (operand '{}' of '{}')",
                               l.ap.num_part, parts, param, c.op));
  const uint64_t f = ncore::ap_free_elems(l.ap);
  if (f <= free_limit) return;
  const Shape s = tile_shape(t);
  const std::string head =
      s.size() <= 2 ? fmt::format("size of dimension 1 in '{}' of '{}' exceed architecture limitation of {}.",
                                  tile_str(t), nki_op, free_limit)
                    : fmt::format("free size {} (dimensions 1 to {}, flattened) in '{}' of '{}' exceed architecture "
                                  "limitation of {}.",
                                  f, s.size() - 1, tile_str(t), nki_op, free_limit);
  tr.fail(c.loc, fmt::format("{} (operand '{}' of '{}'{}{})", head, param, c.op, *limit_name ? ": " : "", limit_name));
}

// The PSUM result of a tensor-engine instruction: float32, M partitions x N elements, one
// contiguous run inside one bank.
Lowered pe_result(TracerImpl& tr, const Ctx& c, const Tensor& dst, uint64_t m, uint64_t n, const char* what) {
  const Lowered ld = pe_operand(tr, c, "dst", dst, BufferKind::psum);
  if (dst.dtype() != Dtype::float32)
    tr.fail(c.loc, fmt::format("operand 'dst' of '{}' ({}) is {}, but the tensor engine writes float32 to PSUM", c.op,
                               tile_str(dst), to_string(dst.dtype())));
  if (ld.ap.num_part != m || ncore::ap_free_elems(ld.ap) != n)
    tr.fail(c.loc, fmt::format("operand 'dst' of '{}' ({}) has {} partitions x {} elements, but {} is [{}, {}]", c.op,
                               tile_str(dst), ld.ap.num_part, ncore::ap_free_elems(ld.ap), what, m, n));
  uint64_t span = 1;
  for (int k = 0; k < 4; ++k) {
    if (ld.ap.size[k] > 1 && static_cast<uint64_t>(ld.ap.stride[k]) != span)
      tr.fail(c.loc, fmt::format("operand 'dst' of '{}' ({}) must be one contiguous run of float32 per partition in "
                                 "PSUM",
                                 c.op, tile_str(dst)));
    span *= ld.ap.size[k];
  }
  const uint64_t bank = tr.preset().psum_bank_bytes;
  if (ld.ap.offset / bank != (ld.ap.offset + 4 * span - 1) / bank)
    tr.fail(c.loc, fmt::format("operand 'dst' of '{}' ({}) at PSUM bytes [{}, {}) crosses a {}-byte bank boundary: "
                               "one matmul writes exactly one bank",
                               c.op, tile_str(dst), ld.ap.offset, ld.ap.offset + 4 * span, bank));
  return ld;
}

// stationary.T @ moving (`what`) into dst_in, or into a new float32 PSUM tile [m, n] named `name`:
// load_stationary (unless the array holds the operand already) and multiply_moving. Returns the
// destination.
Tensor emit_matmul(TracerImpl& tr, const Ctx& c, const Tensor* dst_in, uint64_t m, uint64_t n, const char* name,
                   const char* what, const Lowered& ls, const Lowered& lm, std::optional<bool> accumulate) {
  const Tensor dst = dst_in ? *dst_in
                            : tr.new_tile(Shape{static_cast<int64_t>(m), static_cast<int64_t>(n)}, Dtype::float32,
                                          BufferKind::psum, name, c.loc);
  const Lowered ld = pe_result(tr, c, dst, m, n, what);
  const bool acc = tr.psum_accumulate(ld.region.box, accumulate, c, dst);
  if (!tr.reuse_stationary(ls.ap)) {
    isa::Insn l{};
    l.opcode = isa::Opcode::load_stationary;
    l.engine = isa::Engine::pe;
    l.src0 = ls.ap;
    const ncore::Access a[1] = {{ls.region, false}};
    tr.emit(kPeStream, l, c.loc, a, 1);
    tr.note_stationary(ls.ap, ls.region);
  }
  isa::Insn mm{};
  mm.opcode = isa::Opcode::multiply_moving;
  mm.engine = isa::Engine::pe;
  mm.dst = ld.ap;
  mm.src0 = lm.ap;
  mm.acc = acc;
  const ncore::Access a[3] = {{lm.region, false}, {ld.region, true}, {ld.region, false}};
  tr.emit(kPeStream, mm, c.loc, a, acc ? 3 : 2);
  return dst;
}

Tensor matmul_impl(const Tensor* dst_in, const Tensor& stationary, const Tensor& moving,
                   std::optional<bool> accumulate, const Loc& loc) {
  TracerImpl& tr = detail::require("nc_matmul", loc);
  const Ctx c{"nc_matmul", loc};
  const Lowered ls = pe_operand(tr, c, "stationary", stationary, BufferKind::sbuf);
  const Lowered lm = pe_operand(tr, c, "moving", moving, BufferKind::sbuf);
  check_pe_dims(tr, c, "stationary", stationary, ls, tr.preset().num_partitions, "nc_matmul",
                "gemm_stationary_fmax");
  check_pe_dims(tr, c, "moving", moving, lm, tr.preset().psum_bank_bytes / 4, "nc_matmul", "gemm_moving_fmax");
  if (ls.ap.num_part != lm.ap.num_part)
    tr.fail(loc, fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (stationary{}, "
                             "moving{}) of 'nc_matmul' (the contraction dimension K)",
                             tile_shape(stationary).str(), tile_shape(moving).str()));
  if (isa::is_fp32_class(ls.ap.dtype) != isa::is_fp32_class(lm.ap.dtype))
    tr.fail(loc, fmt::format("'nc_matmul' cannot multiply a {} stationary ({}) by a {} moving ({}) operand: float32 "
                             "and tfloat32 pair only with float32 or tfloat32",
                             to_string(stationary.dtype()), tile_str(stationary), to_string(moving.dtype()),
                             tile_str(moving)));
  const uint64_t m = ncore::ap_free_elems(ls.ap), n = ncore::ap_free_elems(lm.ap);
  return emit_matmul(tr, c, dst_in, m, n, "nc_matmul_result", "stationary.T @ moving", ls, lm, accumulate);
}

Tensor transpose_impl(const Tensor* dst_in, const Tensor& data, const Loc& loc) {
  TracerImpl& tr = detail::require("nc_transpose", loc);
  const Ctx c{"nc_transpose", loc};
  tr.check_alive(data, c, "data");
  const Shape s = tile_shape(data);
  if (s.size() > 2)
    tr.fail(loc, fmt::format("parameter '{}' of 'transpose' exceed max supported number of dimensions of 2.",
                             tile_str(data)));
  const Lowered ls = pe_operand(tr, c, "data", data, BufferKind::sbuf);
  check_pe_dims(tr, c, "data", data, ls, tr.preset().num_partitions, "transpose", "");
  const uint32_t p = ls.ap.num_part;
  const uint64_t f = ncore::ap_free_elems(ls.ap);
  // The identity on the data's own partitions (any diagonal block of an identity is one).
  const Tensor id = tr.identity(ls.ap.dtype, loc)(nl::ds(ls.ap.start_part, p), nl::ds(ls.ap.start_part, p));
  const Lowered lm = tr.lower_onchip(id, c, "identity");
  return emit_matmul(tr, c, dst_in, f, p, "nc_transpose_result", "the transpose of data", ls, lm, false);
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

namespace {

// dma_transpose's source view: src (through an HBM scratch copy when it is on chip) permuted.
Tensor dma_transpose_source(const Tensor& src, Loc loc) {
  TracerImpl& tr = detail::require("dma_transpose", loc);
  tr.check_alive(src, Ctx{"dma_transpose", loc}, "src");
  if (src.buffer() == BufferKind::psum)
    tr.fail(loc, "Expected operand 'src' of 'dma_transpose' to be in address space 'hbm' or 'sbuf', but got a tile "
                 "in 'psum' instead.");
  static const std::vector<int> orders[] = {{1, 0}, {2, 1, 0}, {3, 1, 2, 0}};
  const int nd = static_cast<int>(src.ndim());
  if (nd < 2 || nd > 4)
    tr.fail(loc, fmt::format("Expected operand 'src' of 'dma_transpose' to have 2, 3 or 4 dimensions, but got {} ({})",
                             nd, src.str()));
  Tensor s = src;
  if (s.on_chip()) {
    s = nl::ndarray(src.shape(), src.dtype(), nl::hbm, loc);
    dma_copy(s, src, loc);
  }
  return s.permute(orders[nd - 2], loc);
}

}  // namespace

Tensor dma_transpose(const Tensor& src, Loc loc) { return dma_transpose(src, src.dtype(), loc); }

Tensor dma_transpose(const Tensor& src, Dtype dtype, Loc loc) {
  const Tensor t = dma_transpose_source(src, loc);
  const Tensor dst = nl::ndarray(t.shape(), dtype, nl::sbuf, loc);
  dma_copy(dst, t, loc);
  return dst;
}

void dma_transpose(const Tensor& dst, const Tensor& src, Loc loc) {
  if (dst.buffer() == BufferKind::psum)
    detail::require("dma_transpose", loc)
        .fail(loc, "Expected operand 'dst' of 'dma_transpose' to be in address space 'hbm' or 'sbuf', but got a tile "
                   "in 'psum' instead.");
  dma_copy(dst, dma_transpose_source(src, loc), loc);
}

Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Loc loc) {
  return tensor_tensor_impl(nullptr, data1, data2, op, promote(data1.dtype(), data2.dtype()), loc);
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

void nc_matmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving, Accumulate accumulate, Loc loc) {
  matmul_impl(&dst, stationary, moving, accumulate, loc);
}

MatmulResult nc_matmul(const Tensor& stationary, const Tensor& moving, Loc loc) {
  return MatmulResult(stationary, moving, loc);
}

MatmulResult::MatmulResult(const Tensor& stationary, const Tensor& moving, Loc loc)
    : stationary_(stationary), moving_(moving), loc_(loc) {
  detail::require("nc_matmul", loc);
}

MatmulResult::MatmulResult(MatmulResult&& o) noexcept
    : stationary_(std::move(o.stationary_)), moving_(std::move(o.moving_)), loc_(o.loc_), used_(o.used_) {
  o.used_ = true;
}

MatmulResult::~MatmulResult() {
  if (used_ || std::uncaught_exceptions() > 0) return;
  if (TracerImpl* t = detail::current())
    t->defer_error(loc_, "the result of nisa::nc_matmul(stationary, moving) is never used: accumulate it into a PSUM "
                         "tile (psum_tile += nisa::nc_matmul(...)), assign it to a Tensor, or call "
                         "nisa::nc_matmul(dst, stationary, moving)");
}

void MatmulResult::use() const {
  if (used_) {
    TracerImpl& tr = detail::require("nc_matmul", loc_);
    tr.fail(loc_, "this nisa::nc_matmul(stationary, moving) result has already been used once");
  }
  used_ = true;
}

MatmulResult::operator Tensor() const {
  use();
  return matmul_impl(nullptr, stationary_, moving_, std::nullopt, loc_);
}

void MatmulResult::add_to(const Tensor& dst) const {
  use();
  matmul_impl(&dst, stationary_, moving_, std::nullopt, loc_);
}

Tensor nc_transpose(const Tensor& data, Loc loc) { return transpose_impl(nullptr, data, loc); }

void nc_transpose(const Tensor& dst, const Tensor& data, Loc loc) { transpose_impl(&dst, data, loc); }

Tensor tensor_reduce(AluOp op, const Tensor& data, const Axes& axis, Loc loc) {
  return tensor_reduce_impl(nullptr, op, data, axis, data.dtype(), false, loc);
}

Tensor tensor_reduce(AluOp op, const Tensor& data, const Axes& axis, Dtype dtype, bool keepdims, Loc loc) {
  return tensor_reduce_impl(nullptr, op, data, axis, dtype, keepdims, loc);
}

void tensor_reduce(const Tensor& dst, AluOp op, const Tensor& data, const Axes& axis, Loc loc) {
  tensor_reduce_impl(&dst, op, data, axis, dst.dtype(), false, loc);
}

Tensor activation(ActFunc op, const Tensor& data, const Operand& bias, const Operand& scale, Loc loc) {
  return activation_impl(nullptr, op, data, bias, scale, data.dtype(), nullptr, AluOp::add, loc);
}

Tensor activation(ActFunc op, const Tensor& data, const Operand& bias, const Operand& scale, Dtype dtype, Loc loc) {
  return activation_impl(nullptr, op, data, bias, scale, dtype, nullptr, AluOp::add, loc);
}

void activation(const Tensor& dst, ActFunc op, const Tensor& data, const Operand& bias, const Operand& scale,
                Loc loc) {
  activation_impl(&dst, op, data, bias, scale, dst.dtype(), nullptr, AluOp::add, loc);
}

void activation_reduce(const Tensor& dst, ActFunc op, const Tensor& data, AluOp reduce_op, const Tensor& reduce_res,
                       const Operand& bias, const Operand& scale, Loc loc) {
  activation_impl(&dst, op, data, bias, scale, dst.dtype(), &reduce_res, reduce_op, loc);
}

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
