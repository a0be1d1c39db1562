// NKI calls this model's engines have no single instruction for, each lowered to the sequence of
// existing instructions a compiler for this instruction set emits (see isa.hpp and language.hpp
// for what each computes, docs/nki-python.md for the instructions of each). Every intermediate is a
// float32 tile, so that each result is rounded once, to its destination's dtype.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "nki/isa.hpp"
#include "nki/language.hpp"
#include "tracer_impl.hpp"

namespace nki {
namespace {

using detail::Ctx;
using detail::tile_shape;
using detail::tile_str;
using detail::TracerImpl;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Where an on-chip operand lies: its first partition, partitions and elements per partition.
struct Placed {
  uint32_t start = 0, parts = 0;
  int64_t free = 0;
  bool psum = false;
};

Placed placed(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t) {
  tr.check_alive(t, c, param);
  tr.require_on_chip(t, c, param);
  const detail::Lowered l = tr.lower_onchip(t, c, param);
  return {l.ap.start_part, l.ap.num_part, static_cast<int64_t>(ncore::ap_free_elems(l.ap)),
          l.ap.mem == ncore::isa::Buffer::psum};
}

// A new float32 SBUF tile [partitions of p, n].
Tensor f32_cols(TracerImpl& tr, const Placed& p, int64_t n, const char* name, const Loc& loc) {
  return tr.new_tile(Shape{static_cast<int64_t>(p.parts), n}, Dtype::float32, BufferKind::sbuf, name, loc, p.start);
}

// A new float32 SBUF tile shaped like t, on its partitions.
Tensor f32_like(TracerImpl& tr, const Tensor& t, const char* name, const Loc& loc) {
  return tr.new_result(t, Dtype::float32, name, loc);
}

// t as a 2-D tile [partitions, elements per partition] (a view).
Tensor flat2d(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t, const Placed& p) {
  if (tile_shape(t).size() == 2 && t.ndim() == 2) return t;
  try {
    return t.reshape(Shape{static_cast<int64_t>(p.parts), p.free}, c.loc);
  } catch (const ncore::KernelError&) {
    tr.fail(c.loc, fmt::format("operand '{}' of '{}' ({}) cannot be read as a 2-D tile [{}, {}] without a copy", param,
                               c.op, tile_str(t), p.parts, p.free));
  }
}

// A result: `dst`, or a new SBUF tile shaped like `like` of `dtype`.
Tensor result_or(TracerImpl& tr, const Tensor* dst, const Tensor& like, Dtype dtype, const char* op, const Loc& loc) {
  return dst ? *dst : tr.new_result(like, dtype, op, loc);
}

bool is_comparison(AluOp op) {
  return op == AluOp::equal || op == AluOp::not_equal || op == AluOp::greater || op == AluOp::greater_equal ||
         op == AluOp::less || op == AluOp::less_equal;
}

bool compare(AluOp op, int64_t v) {
  switch (op) {
    case AluOp::equal: return v == 0;
    case AluOp::not_equal: return v != 0;
    case AluOp::greater: return v > 0;
    case AluOp::greater_equal: return v >= 0;
    case AluOp::less: return v < 0;
    default: return v <= 0;  // less_equal
  }
}

// The values of `e` at every index of `shape` (row-major). Axis a of the expression's grid runs
// along dimension a; an axis of size 1 is broadcast along its dimension.
std::vector<int64_t> affine_values(TracerImpl& tr, const Ctx& c, const char* param, const nisa::Affine& e,
                                   const Shape& shape) {
  if (e.coeff.size() != e.grid.size())
    tr.fail(c.loc, fmt::format("{} of '{}': {} coefficients for a grid of {} axes", param, c.op, e.coeff.size(),
                               e.grid.size()));
  bool fits = e.grid.size() == shape.size();
  for (size_t a = 0; fits && a < e.grid.size(); ++a) fits = e.grid[a] == shape[a] || e.grid[a] == 1;
  if (!fits)
    tr.fail(c.loc, fmt::format("{} of '{}' is an expression over a grid of shape {}, which does not match the tile "
                               "shape {}",
                               param, c.op, detail::shape_str(e.grid.data(), e.grid.size()), shape.str()));
  std::vector<int64_t> out(static_cast<size_t>(shape.elements()));
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t& v : out) {
    v = e.start;
    for (size_t a = 0; a < idx.size(); ++a)
      if (e.grid[a] != 1) v += e.coeff[a] * idx[a];
    for (size_t a = idx.size(); a-- > 0;) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

// nl.where's select into dst: x where the condition is non-zero, y elsewhere. t = +-0.5 (the
// condition's truth), then a = min(x, t * inf) (x, or -inf), b = min(y, t * -inf) (-inf, or y),
// and dst = max(a, b). A (P, 1) tile or a number is tensor_scalar's second operand.
void select_impl(TracerImpl& tr, const Ctx& c, const Tensor& dst, const Tensor& cond, const Operand& x,
                 const Operand& y) {
  const Placed pc = placed(tr, c, "condition", cond);
  for (const auto& [param, o] : {std::make_pair("x", &x), std::make_pair("y", &y)}) {
    if (o->none()) tr.fail(c.loc, fmt::format("'{}' needs operand '{}'", c.op, param));
    if (!o->is_tile()) continue;
    const Placed p = placed(tr, c, param, o->tensor());
    if (p.parts != pc.parts || (p.free != pc.free && p.free != 1))
      tr.fail(c.loc, fmt::format("operand '{}' of '{}' ({}) must be a tile of the shape of {} {}, a tile of shape "
                                 "({}, 1) or a number",
                                 param, c.op, tile_str(o->tensor()), c.op == std::string("where") ? "condition" : "dst",
                                 tile_str(cond), pc.parts));
  }
  // Two float32 temporaries, each op writing in place where it can (element-wise: safe).
  const Tensor t = f32_like(tr, cond, "select_truth", c.loc);
  nisa::tensor_scalar(t, cond, AluOp::not_equal, 0.0f, false, AluOp::subtract, 0.5f, false, c.loc);
  auto full = [&](const Operand& o) { return o.is_tile() && pc.free != 1 && placed(tr, c, "x", o.tensor()).free != 1; };
  const Tensor a = f32_like(tr, cond, "select_side", c.loc);  // x, or -inf
  if (full(x)) {
    nisa::tensor_scalar(a, t, AluOp::multiply, kInf, false, AluOp::bypass, {}, false, c.loc);
    nisa::tensor_tensor(a, x.tensor(), a, AluOp::min, c.loc);
  } else {
    nisa::tensor_scalar(a, t, AluOp::multiply, kInf, false, AluOp::min, x, false, c.loc);
  }
  // -inf, or y (into t, no longer needed)
  if (full(y)) {
    nisa::tensor_scalar(t, t, AluOp::multiply, -kInf, false, AluOp::bypass, {}, false, c.loc);
    nisa::tensor_tensor(t, y.tensor(), t, AluOp::min, c.loc);
  } else {
    nisa::tensor_scalar(t, t, AluOp::multiply, -kInf, false, AluOp::min, y, false, c.loc);
  }
  nisa::tensor_tensor(dst, a, t, AluOp::max, c.loc);
}

// The free axes of x an nl reduction names, checked: normalised (negative from the end), sorted.
std::vector<int> free_axes(TracerImpl& tr, const Ctx& c, const Tensor& x, const nisa::Axes& axis) {
  const int nd = static_cast<int>(tile_shape(x).size());
  std::vector<int> ax = axis.v;
  for (int& a : ax)
    if (a < 0) a += nd;
  std::sort(ax.begin(), ax.end());
  ax.erase(std::unique(ax.begin(), ax.end()), ax.end());
  if (ax.empty() || ax.front() < 1 || ax.back() >= nd)
    tr.fail(c.loc, fmt::format("axis of '{}' must be free dimensions of x {} (1 to {}; dimension 0 is the partition "
                               "dimension); got ({})",
                               c.op, tile_str(x), nd - 1, fmt::join(axis.v, ", ")));
  return ax;
}

int64_t axes_elements(const Tensor& x, const std::vector<int>& ax) {
  const Shape s = tile_shape(x);
  int64_t n = 1;
  for (int a : ax) n *= s[static_cast<size_t>(a)];
  return n;
}

// dst = x op r, r a reduction of x kept with its reduced axes of size 1: a (P, 1) r is
// tensor_scalar's operand, any other r is read broadcast along the reduced axes (tensor_tensor).
void with_reduced(const Tensor& dst, const Tensor& x, AluOp op, const Tensor& r, const std::vector<int>& ax,
                  const Loc& loc) {
  const Shape rs = tile_shape(r);
  int64_t per = 1;
  for (size_t d = 1; d < rs.size(); ++d) per *= rs[d];
  if (per == 1) {
    nisa::tensor_scalar(dst, x, op, r, false, AluOp::bypass, {}, false, loc);
    return;
  }
  const Shape xs = tile_shape(x);
  Tensor b = r;
  for (int a : ax) b = b.broadcast(a, xs[static_cast<size_t>(a)], loc);
  nisa::tensor_tensor(dst, x, b, op, loc);
}


// --- the top-8 family: positions found with min / max reductions over an index tile ------------------

constexpr float kTaken = 16777216.0f;  // 2^24: added to a position's index to rule it out (indices < 16384)

// Checks an operand of the top-8 calls: 8 to 16384 elements per partition.
Placed top8_operand(TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t) {
  const Placed p = placed(tr, c, param, t);
  if (p.free < 8 || p.free > 16384)
    tr.fail(c.loc, fmt::format("operand '{}' of '{}' ({}) has {} elements per partition: it must have between 8 and "
                               "16384",
                               param, c.op, tile_str(t), p.free));
  return p;
}

// The index of each element along the free axis, [partitions of p, n] float32 (nisa.iota).
Tensor positions(TracerImpl& tr, const Placed& p, int64_t n, const Loc& loc) {
  const Tensor idx = f32_cols(tr, p, n, "positions", loc);
  nisa::iota(idx, nisa::Affine{0, {0, 1}, {static_cast<int64_t>(p.parts), n}}, loc);
  return idx;
}

// Into `idx` (P, 1): the first position of x (2-D) holding v (a (P, 1) tile) among those whose
// entry in `pos` is the position itself (a taken one holds it plus kTaken):
// min over (x != v) * kTaken + pos.
void first_position(TracerImpl& tr, const Placed& p, const Tensor& idx, const Tensor& x, const Tensor& v,
                    const Tensor& pos, const Loc& loc) {
  const Tensor cand = f32_cols(tr, p, p.free, "first_position", loc);
  nisa::tensor_scalar(cand, x, AluOp::not_equal, v, false, AluOp::multiply, kTaken, false, loc);
  nisa::tensor_tensor(cand, cand, pos, AluOp::add, loc);
  nisa::tensor_reduce(idx, AluOp::min, cand, nisa::Axes(1), loc);
}

// pos with position idx taken (kTaken added to its entry): in place, unless pos is the index tile.
Tensor take(TracerImpl& tr, const Placed& p, const Tensor& pos, const Tensor& iota, const Tensor& idx,
            const Loc& loc) {
  const Tensor hit = f32_cols(tr, p, p.free, "take_hit", loc);
  nisa::tensor_scalar(hit, iota, AluOp::equal, idx, false, AluOp::multiply, kTaken, false, loc);
  const Tensor next = pos.storage() == iota.storage() ? f32_cols(tr, p, p.free, "take_pos", loc) : pos;
  nisa::tensor_tensor(next, pos, hit, AluOp::add, loc);
  return next;
}

// A (P, 8) result: dst itself when it is float32, else a float32 tile copied into it at the end.
Tensor top8_out(TracerImpl& tr, const Placed& p, const Tensor& d2, const Loc& loc) {
  return d2.dtype() == Dtype::float32 ? d2 : f32_cols(tr, p, 8, "top8", loc);
}

}  // namespace

namespace nisa {

void iota(const Tensor& dst, const Affine& expr, Loc loc) {
  TracerImpl& tr = detail::require("iota", loc);
  const Ctx c{"iota", loc};
  const Shape grid(expr.grid);
  const std::vector<int64_t> v = affine_values(tr, c, "expr", expr, grid);
  std::vector<float> values(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < std::numeric_limits<int32_t>::min() || v[i] > std::numeric_limits<int32_t>::max())
      tr.fail(loc, fmt::format("the value {} of the expression of 'iota' is outside int32 (iota computes in 32-bit "
                               "integer arithmetic)",
                               v[i]));
    values[i] = static_cast<float>(v[i]);
  }
  const Tensor h = tr.constant("iota", grid, dst.dtype(), values, loc);
  dma_copy(dst, h, loc);
}

Tensor iota(const Affine& expr, Dtype dtype, Loc loc) {
  TracerImpl& tr = detail::require("iota", loc);
  Shape s(expr.grid);
  if (s.size() == 1) s.push_back(1);
  const Tensor t = tr.new_tile(s, dtype, BufferKind::sbuf, "iota", loc);
  iota(t, expr, loc);
  return t;
}

void affine_select(const Tensor& dst, const AffinePredicate& pred, const Tensor& on_true_tile, float on_false_value,
                   Loc loc) {
  TracerImpl& tr = detail::require("affine_select", loc);
  const Ctx c{"affine_select", loc};
  const Placed p = placed(tr, c, "on_true_tile", on_true_tile);
  const Shape s = tile_shape(on_true_tile);
  if (pred.terms.empty()) tr.fail(loc, "'affine_select' needs a predicate");
  std::vector<char> holds(static_cast<size_t>(s.elements()), 1);
  for (const auto& [e, op] : pred.terms) {
    if (!is_comparison(op))
      tr.fail(loc, fmt::format("the predicate of 'affine_select' compares with '{}', which is not a comparison",
                               ncore::isa::to_string(op)));
    const std::vector<int64_t> v = affine_values(tr, c, "pred", e, s);
    for (size_t i = 0; i < v.size(); ++i) holds[i] &= compare(op, v[i]);
  }
  // Row p: the lower bounds (-inf where the predicate holds), then the upper bounds (+inf).
  const int64_t f = p.free;
  std::vector<float> bounds(static_cast<size_t>(2 * f * p.parts));
  for (int64_t r = 0; r < p.parts; ++r)
    for (int64_t j = 0; j < f; ++j) {
      const bool h = holds[static_cast<size_t>(r * f + j)];
      bounds[static_cast<size_t>(r * 2 * f + j)] = h ? -kInf : on_false_value;
      bounds[static_cast<size_t>(r * 2 * f + f + j)] = h ? kInf : on_false_value;
    }
  const Shape bs{static_cast<int64_t>(p.parts), 2 * f};
  const Tensor h = tr.constant("affine_select_bounds", bs, Dtype::float32, bounds, loc);
  const Tensor b = tr.new_tile(bs, Dtype::float32, BufferKind::sbuf, "affine_select_bounds", loc, p.start);
  dma_copy(b, h, loc);
  // Both in dst: rounding is monotonic, so min(round(max(x, lo)), hi) = round(min(max(x, lo), hi)).
  tensor_tensor(dst, on_true_tile, b(nl::all, nl::ds(0, f)), AluOp::max, loc);
  tensor_tensor(dst, dst, b(nl::all, nl::ds(f, f)), AluOp::min, loc);
}

void tensor_copy_predicated(const Tensor& dst, const Operand& src, const Tensor& predicate, bool reverse_pred,
                            Loc loc) {
  TracerImpl& tr = detail::require("tensor_copy_predicated", loc);
  const Ctx c{"tensor_copy_predicated", loc};
  if (src.is_tile() && src.tensor().dtype() != dst.dtype())
    tr.fail(loc, fmt::format("src ({}, {}) and dst ({}, {}) of 'tensor_copy_predicated' must share the same data "
                             "type",
                             tile_str(src.tensor()), to_string(src.tensor().dtype()), tile_str(dst),
                             to_string(dst.dtype())));
  const Placed pd = placed(tr, c, "dst", dst), pp = placed(tr, c, "predicate", predicate);
  if (pd.parts != pp.parts || pd.free != pp.free)
    tr.fail(loc, fmt::format("predicate ({}) and dst ({}) of 'tensor_copy_predicated' must occupy the same number of "
                             "partitions and elements per partition",
                             tile_str(predicate), tile_str(dst)));
  if (src.is_tile() && placed(tr, c, "src", src.tensor()).psum && pp.psum)
    tr.fail(loc, "'tensor_copy_predicated' cannot read both src and predicate from PSUM");
  if (reverse_pred) select_impl(tr, c, dst, predicate, dst, src);
  else select_impl(tr, c, dst, predicate, src, dst);
}

void scalar_tensor_tensor(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, AluOp op1,
                          const Tensor& operand1, bool reverse0, bool reverse1, Loc loc) {
  TracerImpl& tr = detail::require("scalar_tensor_tensor", loc);
  const Ctx c{"scalar_tensor_tensor", loc};
  const Placed pd = placed(tr, c, "data", data), p1 = placed(tr, c, "operand1", operand1);
  if (pd.parts != p1.parts || pd.free != p1.free)
    tr.fail(loc, fmt::format("operand1 ({}) of 'scalar_tensor_tensor' must have the partitions and elements per "
                             "partition of data ({})",
                             tile_str(operand1), tile_str(data)));
  if (pd.psum && p1.psum) tr.fail(loc, "'scalar_tensor_tensor' cannot read both data and operand1 from PSUM");
  const Tensor t = f32_like(tr, data, "scalar_tensor_tensor", loc);
  tensor_scalar(t, data, op0, operand0, reverse0, AluOp::bypass, {}, false, loc);
  if (reverse1) tensor_tensor(dst, operand1, t, op1, loc);
  else tensor_tensor(dst, t, operand1, op1, loc);
}

void tensor_scalar_reduce(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, AluOp reduce_op,
                          const Tensor& reduce_res, bool reverse0, Loc loc) {
  TracerImpl& tr = detail::require("tensor_scalar_reduce", loc);
  const Ctx c{"tensor_scalar_reduce", loc};
  if (reduce_op != AluOp::add && reduce_op != AluOp::multiply && reduce_op != AluOp::max && reduce_op != AluOp::min)
    tr.fail(loc, fmt::format("reduce_op '{}' of 'tensor_scalar_reduce' is not supported by this model: its vector "
                             "engine reduces with add, multiply, maximum and minimum",
                             ncore::isa::is_valid(reduce_op) ? ncore::isa::to_string(reduce_op) : "?"));
  const Placed pd = placed(tr, c, "data", data), pr = placed(tr, c, "reduce_res", reduce_res);
  if (pr.parts != pd.parts || pr.free != 1)
    tr.fail(loc, fmt::format("reduce_res {} of 'tensor_scalar_reduce' must be a tile of shape ({}, 1)",
                             tile_str(reduce_res), pd.parts));
  const bool direct = dst.dtype() == Dtype::float32;
  const Tensor t = direct ? dst : f32_like(tr, data, "tensor_scalar_reduce", loc);
  tensor_scalar(t, data, op0, operand0, reverse0, AluOp::bypass, {}, false, loc);
  std::vector<int> all;
  for (int d = 1; d < static_cast<int>(tile_shape(t).size()); ++d) all.push_back(d);
  if (all.empty()) all.push_back(1);
  tensor_reduce(reduce_res, reduce_op, tile_shape(t).size() == 1 ? t.reshape(Shape{pd.parts, 1}, loc) : t,
                nisa::Axes(all), loc);
  if (!direct) tensor_copy(dst, t, loc);
}

void tensor_tensor_scan(const Tensor& dst, const Tensor& data0, const Tensor& data1, const Operand& initial,
                        AluOp op0, AluOp op1, bool reverse0, bool reverse1, Loc loc) {
  TracerImpl& tr = detail::require("tensor_tensor_scan", loc);
  const Ctx c{"tensor_tensor_scan", loc};
  const Placed p0 = placed(tr, c, "data0", data0), p1 = placed(tr, c, "data1", data1);
  const Shape s = tile_shape(data0);
  if (s.size() != 2 || data0.ndim() != 2)
    tr.fail(loc, fmt::format("'tensor_tensor_scan' takes 2-D tiles (partition axis, free axis); data0 {} has {} "
                             "dimensions",
                             tile_str(data0), s.size()));
  if (tile_shape(data1) != s || data1.ndim() != 2)
    tr.fail(loc, fmt::format("data0 ({}) and data1 ({}) of 'tensor_tensor_scan' must have the same shape",
                             tile_str(data0), tile_str(data1)));
  if (p0.psum && p1.psum) tr.fail(loc, "'tensor_tensor_scan' cannot read both data0 and data1 from PSUM");
  if (initial.none()) tr.fail(loc, "'tensor_tensor_scan' needs initial (a float32 number or a (P, 1) tile)");
  const bool direct = dst.dtype() == Dtype::float32 && tile_shape(dst) == s && dst.ndim() == 2;
  const Tensor acc = direct ? dst : f32_like(tr, data0, "tensor_tensor_scan", loc);
  for (int64_t i = 0; i < s[1]; ++i) {
    const Operand prev = i == 0 ? initial : Operand(acc(nl::all, nl::ds(i - 1, 1)));
    tensor_scalar(acc(nl::all, nl::ds(i, 1)), data0(nl::all, nl::ds(i, 1)), op0, prev, reverse0, op1,
                  Operand(data1(nl::all, nl::ds(i, 1))), reverse1, loc);
  }
  if (!direct) tensor_copy(dst, acc, loc);
}

void bn_stats(const Tensor& dst, const Tensor& data, Loc loc) {
  TracerImpl& tr = detail::require("bn_stats", loc);
  const Ctx c{"bn_stats", loc};
  const Placed pd = placed(tr, c, "data", data), po = placed(tr, c, "dst", dst);
  constexpr int64_t kFmax = 512;  // nl.tile_size.bn_stats_fmax
  if (pd.free > kFmax)
    tr.fail(loc, fmt::format("free size of operand 'data' of 'bn_stats' ({}) is {} elements per partition, exceeding "
                             "the architecture limitation of {} (nl.tile_size.bn_stats_fmax).",
                             tile_str(data), pd.free, kFmax));
  if (po.parts != pd.parts || po.free != 6)
    tr.fail(loc, fmt::format("dst {} of 'bn_stats' must be a tile of shape ({}, 6)", tile_str(dst), pd.parts));
  const Tensor x = flat2d(tr, c, "data", data, pd);
  const Tensor d2 = flat2d(tr, c, "dst", dst, po);
  const bool direct = dst.dtype() == Dtype::float32;
  const Tensor out = direct ? d2 : f32_cols(tr, pd, 6, "bn_stats", loc);
  for (int64_t h = 0; h < 2; ++h) {
    const int64_t n = h == 0 ? (pd.free + 1) / 2 : pd.free / 2;
    auto col = [&](int64_t k) { return out(nl::all, nl::ds(3 * h + k, 1)); };
    if (n == 0) {  // no odd elements: count, mean and count * variance 0
      memset(out(nl::all, nl::ds(3 * h, 3)), 0.0f, loc);
      continue;
    }
    const Tensor half = x(nl::all, Slice{h, n, 2});
    memset(col(0), static_cast<float>(n), loc);
    const Tensor sum = f32_cols(tr, pd, 1, "bn_stats_sum", loc);
    tensor_reduce(sum, AluOp::add, half, Axes(1), loc);
    tensor_scalar(col(1), sum, AluOp::divide, static_cast<float>(n), false, AluOp::bypass, {}, false, loc);
    const Tensor negmean = f32_cols(tr, pd, 1, "bn_stats_negmean", loc);
    tensor_scalar(negmean, col(1), AluOp::multiply, -1.0f, false, AluOp::bypass, {}, false, loc);
    const Tensor dev2 = f32_cols(tr, pd, n, "bn_stats_dev2", loc);
    activation_reduce(dev2, ActFunc::square, half, AluOp::add, col(2), negmean, 1.0f, loc);
  }
  if (!direct) tensor_copy(d2, out, loc);
}

void bn_aggr(const Tensor& dst, const Tensor& data, Loc loc) {
  TracerImpl& tr = detail::require("bn_aggr", loc);
  const Ctx c{"bn_aggr", loc};
  const Placed pd = placed(tr, c, "data", data), po = placed(tr, c, "dst", dst);
  if (pd.free % 3 != 0)
    tr.fail(loc, fmt::format("data {} of 'bn_aggr' has {} elements per partition, which is not a multiple of 3: it "
                             "holds (count, mean, variance * count) triples from bn_stats",
                             tile_str(data), pd.free));
  if (po.parts != pd.parts || po.free != 2)
    tr.fail(loc, fmt::format("dst {} of 'bn_aggr' must be a tile of shape ({}, 2)", tile_str(dst), pd.parts));
  const int64_t k = pd.free / 3;
  const Tensor x = flat2d(tr, c, "data", data, pd);
  const Tensor d2 = flat2d(tr, c, "dst", dst, po);
  const bool direct = dst.dtype() == Dtype::float32;
  const Tensor out = direct ? d2 : f32_cols(tr, pd, 2, "bn_aggr", loc);
  const Tensor cnt = x(nl::all, Slice{0, k, 3}), mean_i = x(nl::all, Slice{1, k, 3}), m2_i = x(nl::all, Slice{2, k, 3});
  const Tensor mean = out(nl::all, nl::ds(0, 1));
  auto col = [&](const char* name) { return f32_cols(tr, pd, 1, name, loc); };
  auto row = [&](const char* name) { return f32_cols(tr, pd, k, name, loc); };
  const Tensor n = col("bn_aggr_count"), s = col("bn_aggr_sum"), m2 = col("bn_aggr_m2");
  const Tensor cm = row("bn_aggr_cm"), dev = row("bn_aggr_dev"), dev2 = row("bn_aggr_dev2"), w = row("bn_aggr_w"),
               q = row("bn_aggr_q");
  tensor_reduce(n, AluOp::add, cnt, Axes(1), loc);
  tensor_tensor(cm, cnt, mean_i, AluOp::multiply, loc);
  tensor_reduce(s, AluOp::add, cm, Axes(1), loc);
  tensor_scalar(mean, s, AluOp::divide, n, false, AluOp::bypass, {}, false, loc);
  tensor_scalar(dev, mean_i, AluOp::subtract, mean, false, AluOp::bypass, {}, false, loc);
  tensor_tensor(dev2, dev, dev, AluOp::multiply, loc);
  tensor_tensor(w, dev2, cnt, AluOp::multiply, loc);
  tensor_tensor(q, w, m2_i, AluOp::add, loc);
  tensor_reduce(m2, AluOp::add, q, Axes(1), loc);
  tensor_scalar(out(nl::all, nl::ds(1, 1)), m2, AluOp::divide, n, false, AluOp::bypass, {}, false, loc);
  if (!direct) tensor_copy(d2, out, loc);
}

// The (P, n) result tile of bn_stats / bn_aggr on data's partitions.
static Tensor stats_tile(const char* op, const Tensor& data, int64_t n, Dtype dtype, const Loc& loc) {
  TracerImpl& tr = detail::require(op, loc);
  const Placed p = placed(tr, Ctx{op, loc}, "data", data);
  return tr.new_tile(Shape{static_cast<int64_t>(p.parts), n}, dtype, BufferKind::sbuf, std::string(op) + "_result", loc,
                     p.start);
}

Tensor bn_stats(const Tensor& data, Dtype dtype, Loc loc) {
  const Tensor t = stats_tile("bn_stats", data, 6, dtype, loc);
  bn_stats(t, data, loc);
  return t;
}

Tensor bn_aggr(const Tensor& data, Dtype dtype, Loc loc) {
  const Tensor t = stats_tile("bn_aggr", data, 2, dtype, loc);
  bn_aggr(t, data, loc);
  return t;
}


void max8(const Tensor& dst, const Tensor& src, Loc loc) {
  TracerImpl& tr = detail::require("max8", loc);
  const Ctx c{"max8", loc};
  const Placed p = top8_operand(tr, c, "src", src), po = placed(tr, c, "dst", dst);
  if (po.parts != p.parts || po.free != 8)
    tr.fail(loc, fmt::format("dst {} of 'max8' must be a tile of shape ({}, 8)", tile_str(dst), p.parts));
  const Tensor d2 = flat2d(tr, c, "dst", dst, po);
  const Tensor out = top8_out(tr, p, d2, loc);
  const Tensor iota = positions(tr, p, p.free, loc);
  // Each round: the maximum, then its first position set to -inf.
  Tensor y = flat2d(tr, c, "src", src, p);
  for (int64_t k = 0; k < 8; ++k) {
    const Tensor m = out(nl::all, nl::ds(k, 1));
    tensor_reduce(m, AluOp::max, y, Axes(1), loc);
    if (k == 7) break;
    const Tensor idx = f32_cols(tr, p, 1, "max8_position", loc);
    first_position(tr, p, idx, y, m, iota, loc);
    const Tensor bound = f32_cols(tr, p, p.free, "max8_bound", loc);  // -inf at the position, +inf elsewhere
    tensor_scalar(bound, iota, AluOp::equal, idx, false, AluOp::subtract, 0.5f, false, loc);
    tensor_scalar(bound, bound, AluOp::multiply, -kInf, false, AluOp::bypass, {}, false, loc);
    const Tensor next = k == 0 ? f32_cols(tr, p, p.free, "max8_rest", loc) : y;  // src itself stays unchanged
    tensor_tensor(next, y, bound, AluOp::min, loc);
    y = next;
  }
  if (out.storage() != d2.storage()) tensor_copy(d2, out, loc);
}

Tensor max8(const Tensor& src, Dtype dtype, Loc loc) {
  const Tensor t = stats_tile("max8", src, 8, dtype, loc);
  max8(t, src, loc);
  return t;
}

// The positions of vals' 8 values in data, in the order `order` visits vals' columns, each
// position taken once; into idx (P, 8) when given. Returns the final positions tile.
static Tensor find8(TracerImpl& tr, const Ctx& c, const Tensor& data, const Tensor& vals, const Tensor* idx,
                    bool reverse) {
  const Placed p = top8_operand(tr, c, "data", data), pv = placed(tr, c, "vals", vals);
  if (pv.parts != p.parts || pv.free != 8)
    tr.fail(c.loc, fmt::format("vals {} of '{}' must hold 8 values per partition on the {} partitions of data",
                               tile_str(vals), c.op, p.parts));
  const Tensor x = flat2d(tr, c, "data", data, p), v = flat2d(tr, c, "vals", vals, pv);
  Tensor d2, out;
  if (idx) {
    const Placed pi = placed(tr, c, "dst_idx", *idx);
    if (pi.parts != p.parts || pi.free != 8)
      tr.fail(c.loc, fmt::format("the index tile {} of '{}' must be a tile of shape ({}, 8)", tile_str(*idx), c.op,
                                 p.parts));
    d2 = flat2d(tr, c, "dst_idx", *idx, pi);
    out = top8_out(tr, p, d2, c.loc);
  }
  const Tensor iota = positions(tr, p, p.free, c.loc);
  Tensor pos = iota;
  for (int64_t n = 0; n < 8; ++n) {
    const int64_t k = reverse ? 7 - n : n;
    const Tensor at = idx ? out(nl::all, nl::ds(k, 1)) : f32_cols(tr, p, 1, "find8_position", c.loc);
    first_position(tr, p, at, x, v(nl::all, nl::ds(k, 1)), pos, c.loc);
    pos = take(tr, p, pos, iota, at, c.loc);
  }
  if (idx && out.storage() != d2.storage()) tensor_copy(d2, out, c.loc);
  // taken positions: pos - iota is kTaken there, 0 elsewhere
  const Tensor taken = f32_cols(tr, p, p.free, "find8_taken", c.loc);
  tensor_tensor(taken, pos, iota, AluOp::subtract, c.loc);
  return taken;
}

void nc_find_index8(const Tensor& dst, const Tensor& data, const Tensor& vals, Loc loc) {
  TracerImpl& tr = detail::require("nc_find_index8", loc);
  find8(tr, Ctx{"nc_find_index8", loc}, data, vals, &dst, false);
}

Tensor nc_find_index8(const Tensor& data, const Tensor& vals, Dtype dtype, Loc loc) {
  const Tensor t = stats_tile("nc_find_index8", data, 8, dtype, loc);
  nc_find_index8(t, data, vals, loc);
  return t;
}

void nc_match_replace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm, const Tensor* dst_idx,
                       Loc loc) {
  TracerImpl& tr = detail::require("nc_match_replace8", loc);
  const Ctx c{"nc_match_replace8", loc};
  const Tensor taken = find8(tr, c, data, vals, dst_idx, true);
  select_impl(tr, c, dst, taken, imm, data);
}

void dropout(const Tensor& dst, const Tensor& data, const Operand& prob, Loc loc) {
  TracerImpl& tr = detail::require("dropout", loc);
  const Ctx c{"dropout", loc};
  const Placed p = placed(tr, c, "data", data);
  if (prob.none()) tr.fail(loc, "'dropout' needs prob (a number or a (P, 1) tile)");
  const std::vector<float> u = tr.random_uniform(static_cast<size_t>(p.parts * p.free), 24);
  const Shape rs{static_cast<int64_t>(p.parts), p.free};
  const Tensor h = tr.constant("dropout_random", rs, Dtype::float32, u, loc);
  const Tensor r = tr.new_tile(rs, Dtype::float32, BufferKind::sbuf, "dropout_random", loc, p.start);
  dma_copy(r, h, loc);
  tensor_scalar(r, r, AluOp::greater_equal, prob, false, AluOp::bypass, {}, false, loc);  // kept: 1.0
  select_impl(tr, c, dst, r, data, 0.0f);
}

}  // namespace nisa

namespace nl {

Tensor shared_constant(const std::vector<float>& values, const Shape& shape, Dtype dtype, Loc loc) {
  TracerImpl& tr = detail::require("shared_constant", loc);
  return tr.constant("shared_constant", shape, dtype, values, loc);
}

Tensor shared_identity_matrix(int64_t n, Dtype dtype, Loc loc) {
  TracerImpl& tr = detail::require("shared_identity_matrix", loc);
  if (n <= 0) tr.fail(loc, fmt::format("shared_identity_matrix of size {}: n must be positive", n));
  std::vector<float> v(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0f;
  return tr.constant("identity", Shape{n, n}, dtype, v, loc);
}

void where(const Tensor& dst, const Tensor& condition, const Operand& x, const Operand& y, Loc loc) {
  TracerImpl& tr = detail::require("where", loc);
  select_impl(tr, Ctx{"where", loc}, dst, condition, x, y);
}

Tensor var(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst, Loc loc) {
  TracerImpl& tr = detail::require("var", loc);
  const Ctx c{"var", loc};
  placed(tr, c, "x", x);
  const std::vector<int> ax = free_axes(tr, c, x, axis);
  const float n = static_cast<float>(axes_elements(x, ax));
  const Tensor sum = nisa::tensor_reduce(AluOp::add, x, axis, Dtype::float32, true, loc);
  const Tensor mean = nisa::tensor_scalar(sum, AluOp::divide, n, false, AluOp::bypass, {}, false, loc);
  const Tensor dev = f32_like(tr, x, "var_dev", loc);
  with_reduced(dev, x, AluOp::subtract, mean, ax, loc);
  const Tensor dev2 = nisa::tensor_tensor(dev, dev, AluOp::multiply, loc);
  const Tensor q = nisa::tensor_reduce(AluOp::add, dev2, axis, Dtype::float32, false, loc);
  const Tensor out = result_or(tr, dst, q, dtype, "var", loc);
  nisa::tensor_scalar(out, q, AluOp::divide, n, false, AluOp::bypass, {}, false, loc);
  return out;
}

Tensor softmax(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst, Loc loc) {
  TracerImpl& tr = detail::require("softmax", loc);
  const Ctx c{"softmax", loc};
  placed(tr, c, "x", x);
  const std::vector<int> ax = free_axes(tr, c, x, axis);
  const Tensor mx = nisa::tensor_reduce(AluOp::max, x, axis, Dtype::float32, true, loc);
  const Tensor dev = f32_like(tr, x, "softmax_dev", loc);
  with_reduced(dev, x, AluOp::subtract, mx, ax, loc);
  const Tensor e = nisa::activation(ActFunc::exp, dev, {}, 1.0f, Dtype::float32, loc);
  const Tensor sum = nisa::tensor_reduce(AluOp::add, e, axis, Dtype::float32, true, loc);
  const Tensor out = result_or(tr, dst, x, dtype, "softmax", loc);
  with_reduced(out, e, AluOp::divide, sum, ax, loc);
  return out;
}

Tensor all_of(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst, Loc loc) {
  TracerImpl& tr = detail::require("all", loc);
  const Ctx c{"all", loc};
  placed(tr, c, "x", x);
  free_axes(tr, c, x, axis);
  const Tensor nz = f32_like(tr, x, "all_nonzero", loc);
  nisa::tensor_scalar(nz, x, AluOp::not_equal, 0.0f, false, AluOp::bypass, {}, false, loc);
  if (dst) {
    nisa::tensor_reduce(*dst, AluOp::min, nz, axis, loc);
    return *dst;
  }
  return nisa::tensor_reduce(AluOp::min, nz, axis, dtype, false, loc);
}

Tensor rms_norm(const Tensor& x, const Operand& w, const nisa::Axes& axis, int64_t n, float epsilon, Dtype dtype,
                const Tensor* dst, Loc loc) {
  TracerImpl& tr = detail::require("rms_norm", loc);
  const Ctx c{"rms_norm", loc};
  placed(tr, c, "x", x);
  const std::vector<int> ax = free_axes(tr, c, x, axis);
  if (n <= 0) tr.fail(loc, fmt::format("n of 'rms_norm' is {}: the number of values must be positive", n));
  const Tensor sq = nisa::activation(ActFunc::square, x, {}, 1.0f, Dtype::float32, loc);
  const Tensor ss = nisa::tensor_reduce(AluOp::add, sq, axis, Dtype::float32, true, loc);
  const Tensor ms = nisa::tensor_scalar(ss, AluOp::divide, static_cast<float>(n), false, AluOp::add, epsilon, false,
                                        loc);
  const Tensor rms = nisa::activation(ActFunc::sqrt, ms, {}, 1.0f, Dtype::float32, loc);
  const Tensor y = f32_like(tr, x, "rms_norm_scaled", loc);
  with_reduced(y, x, AluOp::divide, rms, ax, loc);
  const Tensor out = result_or(tr, dst, x, dtype, "rms_norm", loc);
  elementwise(out, AluOp::multiply, y, w, loc);
  return out;
}

Tensor gather_flattened(const Tensor& data, const Tensor& indices, Dtype dtype, const Tensor* dst, Loc loc) {
  TracerImpl& tr = detail::require("gather_flattened", loc);
  const Ctx c{"gather_flattened", loc};
  const Placed pd = placed(tr, c, "data", data), pi = placed(tr, c, "indices", indices);
  if (pi.parts != pd.parts || pi.start != pd.start)
    tr.fail(loc, fmt::format("indices {} of 'gather_flattened' must be on the partitions of data {}",
                             tile_str(indices), tile_str(data)));
  for (const auto& [param, t] : {std::make_pair("data", &data), std::make_pair("indices", &indices)}) {
    const size_t nd = tile_shape(*t).size();
    if (nd < 2 || nd > 4)
      tr.fail(loc, fmt::format("{} {} of 'gather_flattened' must be 2-, 3- or 4-dimensional", param, tile_str(*t)));
  }
  const Tensor x = flat2d(tr, c, "data", data, pd), ix = flat2d(tr, c, "indices", indices, pi);
  const Tensor out = result_or(tr, dst, indices, dtype, "gather_flattened", loc);
  const Placed po = placed(tr, c, "dst", out);
  const Tensor o2 = flat2d(tr, c, "dst", out, po);
  const Tensor acc = out.dtype() == Dtype::float32 ? o2 : f32_cols(tr, pi, pi.free, "gather_flattened", loc);
  const Tensor iota = positions(tr, pd, pd.free, loc);
  for (int64_t j = 0; j < pi.free; ++j) {
    // +inf at the index, -inf elsewhere; then data there, -inf elsewhere; its maximum
    const Tensor pick = f32_cols(tr, pd, pd.free, "gather_pick", loc);
    nisa::tensor_scalar(pick, iota, AluOp::equal, ix(nl::all, nl::ds(j, 1)), false, AluOp::subtract, 0.5f, false,
                        loc);
    nisa::tensor_scalar(pick, pick, AluOp::multiply, kInf, false, AluOp::bypass, {}, false, loc);
    nisa::tensor_tensor(pick, x, pick, AluOp::min, loc);
    nisa::tensor_reduce(acc(nl::all, nl::ds(j, 1)), AluOp::max, pick, nisa::Axes(1), loc);
  }
  if (acc.storage() != o2.storage()) nisa::tensor_copy(o2, acc, loc);
  return out;
}

// The mantissa bits a value in [0, 1) on a grid of 2^-bits keeps exactly in dtype.
int random_bits(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return 24;
    case Dtype::tfloat32: return 11;
    case Dtype::bfloat16: return 8;
    case Dtype::float8_e4m3: return 4;
    case Dtype::float8_e5m2: return 3;
    default: return 11;
  }
}

Tensor rand(const Shape& shape, Dtype dtype, Loc loc) {
  TracerImpl& tr = detail::require("rand", loc);
  if (!is_float(dtype))
    tr.fail(loc, fmt::format("dtype {} of 'rand' is not supported by this model (supported: float32, tfloat32, "
                             "bfloat16, float16, float8_e4m3, float8_e5m2)",
                             to_string(dtype)));
  const Tensor h = tr.constant("rand", shape, dtype, tr.random_uniform(static_cast<size_t>(shape.elements()),
                                                                         random_bits(dtype)), loc);
  return load(h, loc);
}

void random_seed(int64_t seed, Loc loc) { detail::require("random_seed", loc).random_seed(static_cast<uint64_t>(seed)); }

void loop_reduce(const Tensor& dst, const Tensor& x, AluOp op, Loc loc) { nisa::tensor_tensor(dst, dst, x, op, loc); }

}  // namespace nl
}  // namespace nki
