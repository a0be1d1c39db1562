// The NKI call surface: the declarations and invoke(). See calls.hpp.
//
// Each declaration's lowering calls the typed C++ API. A lowering is given the destination
// (ctx.dst) when the call writes into a view, else it makes the result tile as the typed API does;
// invoke() makes the result first (make_result) only when a mask or the tiling issues several
// instructions, so that an unmasked call traces exactly what the typed API traces.
#include "nki/calls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "ncore/error.hpp"
#include "calls_today.hpp"
#include "tracer_impl.hpp"

namespace nki::calls {
namespace {

[[noreturn]] void fail(const Loc& loc, const std::string& msg) {
  kernel_check(false, msg, loc);
  throw ncore::KernelError(msg);
}

int64_t numel(const std::vector<int64_t>& s, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < s.size(); ++i) n *= s[i];
  return n;
}

bool per_partition(const std::vector<int64_t>& s) { return numel(s, 1) == 1; }

// A tile argument's shape, whatever its kind (a tile or an operand).
std::vector<int64_t> shape_of(const Value& v) { return v.tile.shape(); }

bool is_tile(const Value& v) { return !v.none && v.tile.valid(); }

// The result an instruction on `like` creates: laid out as like (a view), or, for a view past its
// tensor's end, a new SBUF tile of its shape.
Tensor result_like(const TileArg& like, Dtype dtype, const Loc& loc) {
  if (like.deferred) {
    std::vector<int64_t> s = like.shape();
    return nl::ndarray(Shape(s), dtype, nl::sbuf, "", loc);
  }
  return nl::result_tile(like.t, dtype, loc);
}

// ---- parameter lists -----------------------------------------------------------------------

Param P(std::string name, Kind k, std::string def = "", bool kw = false) {
  return Param{std::move(name), k, std::move(def), kw};
}
Param K(std::string name, Kind k, std::string def = "") { return Param{std::move(name), k, std::move(def), true}; }

}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::tile:
      return "tile";
    case Kind::operand:
      return "operand";
    case Kind::alu_op:
      return "alu_op";
    case Kind::act_func:
      return "act_func";
    case Kind::dtype:
      return "dtype";
    case Kind::flag:
      return "flag";
    case Kind::number:
      return "number";
    case Kind::integer:
      return "integer";
    case Kind::axes:
      return "axes";
    case Kind::affine:
      return "affine";
    case Kind::predicate:
      return "predicate";
    case Kind::shape:
      return "shape";
    case Kind::pattern:
      return "pattern";
    case Kind::any:
      return "any";
  }
  return "?";
}

// ---- values -----------------------------------------------------------------------------------

namespace {
// A given (not None) value of kind k with one field set.
template <class F>
Value given(Kind k, F set) {
  Value v;
  v.kind = k;
  v.none = false;
  set(v);
  return v;
}
}  // namespace

Value Value::of_tile(TileArg t) {
  Value v = given(Kind::tile, [&](Value& x) { x.tile = std::move(t); });
  v.none = !v.tile.valid();
  return v;
}
Value Value::of_scalar(double x, std::string dtype) {
  return given(Kind::operand, [&](Value& v) {
    v.number = x;
    v.scalar_dtype = std::move(dtype);
  });
}
Value Value::of_alu(AluOp op) { return given(Kind::alu_op, [&](Value& v) { v.alu = op; }); }
Value Value::of_act(ActFunc f) { return given(Kind::act_func, [&](Value& v) { v.act = f; }); }
Value Value::of_dtype(std::optional<Dtype> d) {
  Value v = given(Kind::dtype, [&](Value& x) {
    if (d) x.dtype = *d;
  });
  v.none = !d;
  return v;
}
Value Value::of_flag(bool b) { return given(Kind::flag, [&](Value& v) { v.number = b ? 1 : 0; }); }
Value Value::of_number(double x) { return given(Kind::number, [&](Value& v) { v.number = x; }); }
Value Value::of_integer(int64_t x) {
  return given(Kind::integer, [&](Value& v) {
    v.integer = x;
    v.number = static_cast<double>(x);
  });
}
Value Value::of_axes(std::vector<int> a) { return given(Kind::axes, [&](Value& v) { v.axes = std::move(a); }); }
Value Value::of_affine(nisa::Affine a) { return given(Kind::affine, [&](Value& v) { v.affine = std::move(a); }); }
Value Value::of_predicate(nisa::AffinePredicate p) {
  return given(Kind::predicate, [&](Value& v) { v.predicate = std::move(p); });
}
Value Value::of_shape(std::vector<int64_t> s) { return given(Kind::shape, [&](Value& v) { v.shape = std::move(s); }); }
Value Value::of_pattern(std::vector<std::pair<int64_t, int64_t>> p) {
  return given(Kind::pattern, [&](Value& v) { v.pattern = std::move(p); });
}
Value Value::nothing(Kind k) {
  Value v;
  v.kind = k;
  return v;
}

// ---- the lowering context ---------------------------------------------------------------------

const Param* Decl::param(std::string_view n) const {
  for (const Param& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

int Decl::index(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

int Decl::today_index(std::string_view n) const {
  for (size_t i = 0; i < today.size(); ++i)
    if (today[i].name == n) return static_cast<int>(i);
  return -1;
}

const Value& Ctx::arg(std::string_view name) const {
  const int i = today ? decl.today_index(name) : decl.index(name);
  if (i < 0) throw ncore::KernelError(fmt::format("internal: {}.{} has no parameter '{}'", decl.ns, decl.name, name));
  return args[static_cast<size_t>(i)];
}

Tensor Ctx::tile(std::string_view name) const {
  const Value& v = arg(name);
  if (v.none || !v.tile.valid()) fail(loc, fmt::format("{} of '{}' must be a tile", name, decl.name));
  return v.tile.whole(loc);
}

std::optional<Tensor> Ctx::opt_tile(std::string_view name) const {
  const Value& v = arg(name);
  if (v.none || !v.tile.valid()) return std::nullopt;
  return v.tile.whole(loc);
}

Operand Ctx::operand(std::string_view name) const {
  const Value& v = arg(name);
  if (v.none) return {};
  if (v.tile.valid()) return Operand(v.tile.whole(loc));
  return Operand(v.number);
}

std::optional<Dtype> Ctx::dtype(std::string_view name) const {
  const Value& v = arg(name);
  if (v.none) return std::nullopt;
  return v.dtype;
}

// ---- names ------------------------------------------------------------------------------------

Dtype dtype_of(const std::string& name) {
  if (name == "bool") return Dtype::bool_;
  for (const DtypeInfo& i : nki::dtype_table())
    if (name == i.name) return i.dtype;
  throw ncore::KernelError("unknown dtype '" + name + "'");
}

std::string alu_nki_name(AluOp op) {
  if (op == AluOp::max) return "maximum";
  if (op == AluOp::min) return "minimum";
  return ncore::isa::to_string(op);
}

std::vector<std::string> alu_names() {
  std::vector<std::string> v;
  for (AluOp op : ncore::isa::kAluOpValues)
    if (op != AluOp::bypass) v.push_back(alu_nki_name(op));
  return v;
}

std::vector<std::string> act_names() {
  std::vector<std::string> v;
  for (ActFunc f : ncore::isa::kActFuncValues) v.push_back(ncore::isa::to_string(f));
  return v;
}

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s;
}
}  // namespace

AluOp alu_of(const std::string& name) {
  for (AluOp op : ncore::isa::kAluOpValues)
    if (alu_nki_name(op) == name || ncore::isa::to_string(op) == name) return op;
  throw ncore::KernelError("the ALU operation '" + name + "' is not modelled (this model's engines have " +
                           joined(alu_names()) + ")");
}

ActFunc act_of(const std::string& name) {
  if (name == "identity") return ActFunc::copy;
  ActFunc f;
  if (ncore::isa::from_string(name, f)) return f;
  throw ncore::KernelError("the activation function '" + name +
                           "' is not modelled by this model's scalar engine (it has " + joined(act_names()) + ")");
}

// ---- the declarations ------------------------------------------------------------------------

namespace {

using E = ncore::isa::Engine;

Tensor result(const Ctx& c, const Tensor& like, std::optional<Dtype> dt) {
  return c.dst ? *c.dst : nl::result_tile(like, dt ? *dt : like.dtype(), c.loc);
}

// The dtype argument, else `like`'s (a tile or a tile argument).
template <class Like>
Dtype dtype_or(const Ctx& c, const Like& like) {
  const auto dt = c.dtype("dtype");
  return dt ? *dt : like.dtype();
}

// A call whose typed API makes its result: made by `make` when there is neither a destination nor a
// dtype argument (an unmasked call traces exactly what the typed API traces), else written by
// into(result) into the result (the destination, or a new tile like `like` in the dtype).
template <class Make, class Into>
Tensor made_or_into(const Ctx& c, const Tensor& like, Make make, Into into) {
  const auto dt = c.dtype("dtype");
  if (!c.dst && !dt) return make();
  const Tensor t = result(c, like, dt);
  into(t);
  return t;
}

// The lowering of a call that writes into its result (the destination, else a new tile like the
// tile argument `data`, in the dtype argument): write(c, result, data).
template <class Write>
Lower into_result(const char* data, Write write) {
  return [data, write](Ctx& c) -> Tensor {
    const Tensor x = c.tile(data);
    const Tensor t = result(c, x, c.dtype("dtype"));
    write(c, t, x);
    return t;
  };
}

// --- the ALU element-wise ops of nl (add, subtract, ...) and their operands -----------------------

bool is_bitvec(AluOp op) {
  return op == AluOp::bitwise_and || op == AluOp::bitwise_or || op == AluOp::bitwise_xor || op == AluOp::left_shift ||
         op == AluOp::right_shift || op == AluOp::invert;
}

// Two operands of an element-wise call: a tile of one partition against a tile of several copied
// onto as many partitions (NKI broadcasts the partition dimension too; it costs a tensor-engine
// pass, nl::broadcast_partitions), and NumPy's broadcast of size-1 free dimensions ((128, 8, 1, 1)
// against (128, 8, 3, 3): a view of stride 0). An operand of one element per partition is left to
// tensor_scalar.
void broadcast_pair(Value& x, Value& y, const Loc& loc) {
  if (!is_tile(x) || !is_tile(y) || x.tile.deferred || y.tile.deferred) return;
  Tensor a = x.tile.t, b = y.tile.t;
  const int64_t px = a.shape()[0], py = b.shape()[0];
  if (px == 1 && py > 1)
    a = nl::broadcast_partitions(a, py, loc);
  else if (py == 1 && px > 1)
    b = nl::broadcast_partitions(b, px, loc);
  const std::vector<int64_t> sx = a.shape().vec(), sy = b.shape().vec();
  if (sx.size() == sy.size() && sx != sy && !per_partition(sx) && !per_partition(sy)) {
    for (size_t d = 1; d < sx.size(); ++d)
      if (sx[d] != sy[d] && sx[d] != 1 && sy[d] != 1)
        fail(loc, fmt::format("operands of shapes {} and {} cannot be broadcast together (dimension {}: {} and {})",
                              Shape(sx).str(), Shape(sy).str(), d, sx[d], sy[d]));
    for (size_t d = 1; d < sx.size(); ++d) {
      if (sx[d] == 1 && sy[d] > 1)
        a = a.broadcast(static_cast<int>(d), sy[d], loc);
      else if (sy[d] == 1 && sx[d] > 1)
        b = b.broadcast(static_cast<int>(d), sx[d], loc);
    }
  }
  x.tile = a;
  y.tile = b;
}

// The larger of two operands (the element-wise call's index grid).
const Value& largest(const Value& x, const Value& y) {
  if (!is_tile(x)) return y;
  if (!is_tile(y)) return x;
  return numel(shape_of(y)) > numel(shape_of(x)) ? y : x;
}

// The dtype NKI gives tile op scalar (either order): the tile's promoted with the scalar's
// (bfloat16 * 2.0 is float32, int8 + 2 is int32, float16 * 2 stays float16); none for two tiles.
std::optional<Dtype> weak_promoted(const Value& x, const Value& y) {
  const Value* t = is_tile(x) ? &x : &y;
  const Value* s = is_tile(x) ? &y : &x;
  if (is_tile(*s) || !is_tile(*t)) return std::nullopt;
  return promote(t->tile.dtype(), dtype_of(s->scalar_dtype.empty() ? "float32" : s->scalar_dtype));
}

Operand operand_of(const Value& v, const Loc& loc) {
  if (v.none) return {};
  if (v.tile.valid()) return Operand(v.tile.whole(loc));
  return Operand(v.number);
}

Tensor lower_elementwise(Ctx& c, AluOp op) {
  const Operand x = operand_of(c.arg("x"), c.loc), y = operand_of(c.arg("y"), c.loc);
  if (c.dst) {
    nl::elementwise(*c.dst, op, x, y, c.loc);
    return *c.dst;
  }
  return nl::elementwise(op, x, y, c.dtype("dtype"), c.loc);
}

// The dtype argument an nl element-wise call runs with: NKI's promotion of a weakly typed scalar
// (the tracer promotes two tiles), unless given; the bitvec ops and logical_not take none.
void settle_elementwise_dtype(Ctx& c, AluOp op) {
  Value& dt = c.args[static_cast<size_t>(c.decl.index("dtype"))];
  if (!dt.none || is_bitvec(op) || op == AluOp::logical_not) return;
  if (const auto p = weak_promoted(c.arg("x"), c.arg("y"))) dt = Value::of_dtype(*p);
}

Decl elementwise_decl(const std::string& name, AluOp op, bool bool_default) {
  Decl d;
  d.ns = "language";
  d.name = name;
  d.doc = fmt::format(
      "nl.{}(x, y): element-wise on the vector engine (tile and tile, tile and scalar, tile and (P, 1) "
      "tile){}",
      name,
      bool_default ? "; 1 where it holds, 0 where not: a bool_ tile by default, else in the given "
                     "dtype (dtype=None: the operands' dtype)"
                   : "");
  d.params = {P("x", Kind::operand), P("y", Kind::operand), P("dtype", Kind::dtype, bool_default ? "bool_" : "None"),
              P("mask", Kind::predicate, "None")};
  d.engine = E::dve;
  d.mask = MaskRule::boxes;
  d.splits = true;
  d.grid = [](const Ctx& c) { return shape_of(largest(c.arg("x"), c.arg("y"))); };
  d.make_result = [op](const Ctx& c) {
    const Value& x = c.arg("x");
    const Value& y = c.arg("y");
    const Value& like = largest(x, y);
    std::optional<Dtype> dt = c.dtype("dtype");
    if (!dt && is_tile(x) && is_tile(y)) dt = promote(x.tile.dtype(), y.tile.dtype());
    (void)op;
    return result_like(like.tile, dt ? *dt : like.tile.dtype(), c.loc);
  };
  d.prepare = [op, name](Ctx& c) {
    if (is_bitvec(op))
      for (const char* n : {"x", "y"}) {
        const Value& v = c.arg(n);
        if (v.none || is_tile(v) || v.scalar_dtype.rfind("int", 0) != 0) continue;
        if (static_cast<double>(static_cast<float>(v.number)) != v.number)
          fail(c.loc, fmt::format("the integer {} of nl.{} is not exact in the model's float32 immediates (up to 2^24, "
                                  "or a few bits wide): give it as a (P, 1) tile",
                                  static_cast<int64_t>(v.number), name));
      }
    settle_elementwise_dtype(c, op);
    broadcast_pair(c.args[static_cast<size_t>(c.decl.index("x"))], c.args[static_cast<size_t>(c.decl.index("y"))],
                   c.loc);
  };
  d.lower = [op](Ctx& c) { return lower_elementwise(c, op); };
  return d;
}

// A unary nl call (invert, logical_not): one tensor_scalar on the vector engine, in dtype_default
// unless given.
Decl unary_decl(const std::string& name, AluOp op, bool bool_result, const char* dtype_default, std::string doc) {
  Decl d = elementwise_decl(name, op, bool_result);
  d.params = {P("x", Kind::operand), P("dtype", Kind::dtype, dtype_default), P("mask", Kind::predicate, "None")};
  d.prepare = nullptr;
  d.doc = std::move(doc);
  d.grid = [](const Ctx& c) { return shape_of(c.arg("x")); };
  d.make_result = [](const Ctx& c) { return result_like(c.arg("x").tile, dtype_or(c, c.arg("x").tile), c.loc); };
  d.lower = [op](Ctx& c) -> Tensor {
    const Operand x = operand_of(c.arg("x"), c.loc);
    if (c.dst) {
      nl::elementwise(*c.dst, op, x, Operand(0.0f), c.loc);
      return *c.dst;
    }
    return nl::elementwise(op, x, Operand(0.0f), c.dtype("dtype"), c.loc);
  };
  return d;
}

// --- builders ------------------------------------------------------------------------------------

Decl decl(std::string ns, std::string name, std::vector<Param> params, E engine, MaskRule mask, std::string doc,
          Lower lower) {
  Decl d;
  d.ns = std::move(ns);
  d.name = std::move(name);
  d.params = std::move(params);
  d.engine = engine;
  d.mask = mask;
  d.doc = std::move(doc);
  d.lower = std::move(lower);
  return d;
}

Decl isa(std::string name, std::vector<Param> params, E engine, MaskRule mask, std::string doc, Lower lower) {
  return decl("isa", std::move(name), std::move(params), engine, mask, std::move(doc), std::move(lower));
}

Decl lang(std::string name, std::vector<Param> params, E engine, MaskRule mask, std::string doc, Lower lower) {
  return decl("language", std::move(name), std::move(params), engine, mask, std::move(doc), std::move(lower));
}

// A high-level call that is another call under the hood (nl.copy is nisa.tensor_copy, tiled):
// the same parameters and rules, lowered by invoking it.
Decl alias(std::string ns, std::string name, const Decl& of, std::string doc) {
  Decl d = of;
  d.ns = std::move(ns);
  d.name = std::move(name);
  d.doc = std::move(doc);
  return d;
}

std::set<int> reduced_axes(const Ctx& c, std::string_view data, std::string_view axis) {
  const size_t nd = c.arg(data).tile.shape().size();
  std::set<int> r;
  for (int a : c.arg(axis).axes)
    r.insert(static_cast<int>((a % static_cast<int>(nd) + static_cast<int>(nd)) % static_cast<int>(nd)));
  return r;
}

// tensor_reduce's result when it makes one: the data with the reduced axes taken at 0 (or kept
// as size 1), as the typed API lays it out; for a deferred view, a new tile of the kept shape.
Tensor reduce_result(const Ctx& c, std::string_view data_name, std::optional<Dtype> dt_given) {
  const TileArg& data = c.arg(data_name).tile;
  const std::set<int> red = reduced_axes(c, data_name, "axis");
  const bool keepdims = c.decl.index("keepdims") >= 0 && c.flag("keepdims");
  const Dtype dt = dt_given ? *dt_given : data.dtype();
  const std::vector<int64_t> shape = data.shape();
  if (data.deferred) {
    std::vector<int64_t> kept;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!red.count(static_cast<int>(d)))
        kept.push_back(shape[d]);
      else if (keepdims)
        kept.push_back(1);
    }
    return nl::ndarray(Shape(kept), dt, nl::sbuf, "", c.loc);
  }
  std::vector<Index> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (red.count(static_cast<int>(d)))
      idx.emplace_back(keepdims ? Index(Slice{0, 1, 1}) : Index(int64_t{0}));
    else
      idx.emplace_back(All{});
  }
  return nl::result_tile(data.t.index(idx, c.loc), dt, c.loc);
}

// The destination's box of a reduction's index box: the reduced axes dropped (or kept whole).
Box reduce_dst_box(const Box& b, const Ctx& c, std::string_view data_name) {
  const std::set<int> red = reduced_axes(c, data_name, "axis");
  const bool keepdims = c.decl.index("keepdims") >= 0 && c.flag("keepdims");
  Box k;
  for (const auto& [a, bound] : b.bounds) {
    if (red.count(a)) continue;
    const int at =
        keepdims ? a : a - static_cast<int>(std::count_if(red.begin(), red.end(), [a](int r) { return r < a; }));
    k.bounds[at] = bound;
    k.sizes[at] = b.sizes.at(a);
  }
  return k;
}

Box swapped(const Box& b) {
  auto s = [](int a) { return a == 0 ? 1 : a == 1 ? 0 : a; };
  Box r;
  for (const auto& [a, v] : b.bounds) r.bounds[s(a)] = v;
  for (const auto& [a, v] : b.sizes) r.sizes[s(a)] = v;
  return r;
}

// The lowering of a call on the one tile argument `src` through a typed-API pair: `into` writes
// into the assignment's destination, `make` makes a new tile in `dtype` (src's when not given).
template <class Into, class Make>
Lower src_lowering(Into into, Make make, const char* src = "src") {
  return [into, make, src](Ctx& c) -> Tensor {
    const Tensor s = c.tile(src);
    if (c.dst) {
      into(*c.dst, s, c.loc);
      return *c.dst;
    }
    return make(s, dtype_or(c, s), c.loc);
  };
}

// tensor_reduce of `op` over the tile argument `data`'s `axis`.
Tensor tensor_reduce_lower(Ctx& c, AluOp op, const char* data) {
  const Tensor x = c.tile(data);
  if (c.dst) {
    nisa::tensor_reduce(*c.dst, op, x, c.axes("axis"), c.loc);
    return *c.dst;
  }
  return nisa::tensor_reduce(op, x, c.axes("axis"), dtype_or(c, x), c.flag("keepdims"), c.loc);
}

// A reduction over the free axes of the argument `axis` of the tile argument `data`: the tiling
// keeps them whole, and the result (when the call makes it) and the destination's box drop them.
void reduces(Decl& d, const char* data) {
  d.grid_param = data;
  d.reduced = [data](const Ctx& c) { return reduced_axes(c, data, "axis"); };
  d.make_result = [data](const Ctx& c) { return reduce_result(c, data, c.dtype("dtype")); };
  d.dst_box = [data](const Box& b, const Ctx& c) { return reduce_dst_box(b, c, data); };
}

// nki.isa: data movement and the vector engine's elementary instructions
void isa_data_movement(std::vector<Decl>& v) {
  // ==== nki.isa ====================================================================================

  // dma_copy(src, dst): both tiles are cut per box; no result.
  {
    Decl d = isa("dma_copy",
                 {P("src", Kind::tile, "None"), P("dst", Kind::tile, "None"), K("mask", Kind::predicate, "None")},
                 E::dma, MaskRule::boxes,
                 "Copies src to dst with the DMA engines (HBM or SBUF on either side); casts when the dtypes differ.",
                 [](Ctx& c) {
                   nisa::dma_copy(c.tile("dst"), c.tile("src"), c.loc);
                   return Tensor();
                 });
    d.result = false;
    d.grid_param = "dst";
    v.push_back(d);
  }
  v.push_back(isa("dma_transpose",
                  {P("src", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")}, E::dma,
                  MaskRule::whole,
                  "src (HBM or SBUF) transposed by the DMA engines into a new SBUF tile: axes [1, 0] for 2-D, [2, 1, 0] "
                  "for 3-D, [3, 1, 2, 0] for 4-D (one dma_copy whose access pattern walks src in that order; an SBUF "
                  "source through an HBM scratch copy first).",
                  src_lowering([](const Tensor& d, const Tensor& s, Loc l) { nisa::dma_transpose(d, s, l); },
                               [](const Tensor& s, Dtype dt, Loc l) { return nisa::dma_transpose(s, dt, l); })));
  v.back().skip_nothing = false;

  // tensor_tensor(data1, data2, op): a (P, 1) operand against a tile is broadcast along the free
  // axes (tensor_scalar).
  {
    Decl d = isa("tensor_tensor",
                 {P("data1", Kind::tile), P("data2", Kind::tile), P("op", Kind::alu_op),
                  K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
                 E::dve, MaskRule::boxes, "data1 <op> data2, element-wise (vector engine).", [](Ctx& c) -> Tensor {
                   const Tensor x = c.tile("data1"), y = c.tile("data2");
                   const AluOp op = c.alu("op");
                   const auto dt = c.dtype("dtype");
                   if (per_partition(x.shape().vec()) != per_partition(y.shape().vec())) {
                     if (c.dst) {
                       nl::elementwise(*c.dst, op, Operand(x), Operand(y), c.loc);
                       return *c.dst;
                     }
                     return nl::elementwise(op, Operand(x), Operand(y), dt, c.loc);
                   }
                   return made_or_into(
                       c, x, [&] { return nisa::tensor_tensor(x, y, op, c.loc); },
                       [&](const Tensor& t) { nisa::tensor_tensor(t, x, y, op, c.loc); });
                 });
    d.grid_param = "data1";
    d.make_result = [](const Ctx& c) {
      const TileArg& x = c.arg("data1").tile;
      const auto dt = c.dtype("dtype");
      return result_like(x, dt ? *dt : promote(x.dtype(), c.arg("data2").tile.dtype()), c.loc);
    };
    v.push_back(d);
  }
}

// nki.isa: the vector engine
void isa_vector(std::vector<Decl>& v) {
  {
    Decl d =
        isa("tensor_scalar",
            {P("data", Kind::tile), P("op0", Kind::alu_op), P("operand0", Kind::operand),
             P("reverse0", Kind::flag, "False"), P("op1", Kind::alu_op, "None"), P("operand1", Kind::operand, "None"),
             P("reverse1", Kind::flag, "False"), K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None"),
             K("engine", Kind::integer, "0")},
            E::dve, MaskRule::boxes,
            "(data <op0> operand0) <op1> operand1 with scalars or (P, 1) tiles (vector engine).", [](Ctx& c) -> Tensor {
              const Tensor x = c.tile("data");
              const AluOp a0 = c.alu("op0"), a1 = c.alu("op1");
              const Operand o0 = c.operand("operand0"), o1 = c.operand("operand1");
              const bool r0 = c.flag("reverse0"), r1 = c.flag("reverse1");
              return made_or_into(
                  c, x, [&] { return nisa::tensor_scalar(x, a0, o0, r0, a1, o1, r1, c.loc); },
                  [&](const Tensor& t) { nisa::tensor_scalar(t, x, a0, o0, r0, a1, o1, r1, c.loc); });
            });
    d.grid_param = "data";
    v.push_back(d);
  }

  {
    Decl d = isa("tensor_copy",
                 {P("src", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None"),
                  K("engine", Kind::integer, "0")},
                 E::dve, MaskRule::boxes, "A copy of an SBUF or PSUM tile, cast to `dtype` (vector engine).",
                 src_lowering([](const Tensor& d, const Tensor& s, Loc l) { nisa::tensor_copy(d, s, l); },
                              [](const Tensor& s, Dtype dt, Loc l) { return nisa::tensor_copy(s, dt, l); }));
    d.grid_param = "src";
    v.push_back(d);
  }

  // memset(shape, value, dtype): a new tile, or the destination, filled with value.
  {
    // (shape and dtype are required unless the destination is given: dst= in the newer spelling)
    Decl d =
        isa("memset",
            {P("shape", Kind::shape, "None"), P("value", Kind::number, "None"), P("dtype", Kind::dtype, "None"),
             K("mask", Kind::predicate, "None"), K("engine", Kind::integer, "0")},
            E::dve, MaskRule::boxes, "A new SBUF tile of `shape` filled with `value` (vector engine).",
            [](Ctx& c) -> Tensor {
              if (!c.given("value")) fail(c.loc, "memset needs a value");
              if (!c.dst && (!c.given("shape") || !c.given("dtype")))
                fail(c.loc, "memset needs a shape and a dtype (or a destination: dst=)");
              const Tensor t =
                  c.dst ? *c.dst : nl::ndarray(Shape(c.arg("shape").shape), *c.dtype("dtype"), nl::sbuf, "", c.loc);
              nisa::memset(t, static_cast<float>(c.number("value")), c.loc);
              return t;
            });
    d.grid = [](const Ctx& c) { return c.dst ? c.dst->shape().vec() : c.arg("shape").shape; };
    d.make_result = [](const Ctx& c) {
      return nl::ndarray(Shape(c.arg("shape").shape), *c.dtype("dtype"), nl::sbuf, "", c.loc);
    };
    v.push_back(d);
  }

  {
    Decl d =
        isa("tensor_reduce",
            {P("op", Kind::alu_op), P("data", Kind::tile), P("axis", Kind::axes), K("mask", Kind::predicate, "None"),
             K("dtype", Kind::dtype, "None"), K("negate", Kind::flag, "False"), K("keepdims", Kind::flag, "False")},
            E::dve, MaskRule::boxes,
            "op (add, multiply, maximum, minimum) over free axes of data (vector engine); negate: -(the "
            "reduction), reduced in float32 then multiplied by -1 into dtype.",
            [](Ctx& c) -> Tensor {
              if (!c.flag("negate")) return tensor_reduce_lower(c, c.alu("op"), "data");
              if (c.mask) fail(c.loc, "tensor_reduce with negate=True and a mask is not supported by this model");
              const Tensor x = c.tile("data");
              const Tensor r =
                  nisa::tensor_reduce(c.alu("op"), x, c.axes("axis"), Dtype::float32, c.flag("keepdims"), c.loc);
              const Tensor t = result(c, r, dtype_or(c, x));
              nisa::tensor_scalar(t, r, AluOp::multiply, Operand(-1.0f), false, AluOp::bypass, {}, false, c.loc);
              return t;
            });
    reduces(d, "data");
    v.push_back(d);
  }
}

// nki.isa: the scalar and tensor engines
void isa_scalar_and_tensor(std::vector<Decl>& v) {
  {
    Decl d = isa(
        "activation",
        {P("op", Kind::act_func), P("data", Kind::tile), K("bias", Kind::operand, "None"),
         K("scale", Kind::operand, "1.0"), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
        E::act, MaskRule::boxes,
        "op(data * scale + bias) (scalar engine): scale a number or an fp32 (P, 1) tile, bias a (P, 1) tile.",
        [](Ctx& c) -> Tensor {
          const Tensor x = c.tile("data");
          if (c.dst) {
            nisa::activation(*c.dst, c.act("op"), x, c.operand("bias"), c.operand("scale"), c.loc);
            return *c.dst;
          }
          return nisa::activation(c.act("op"), x, c.operand("bias"), c.operand("scale"), dtype_or(c, x), c.loc);
        });
    d.grid_param = "data";
    v.push_back(d);
  }

  {
    Decl d = isa("activation_reduce",
                 {P("op", Kind::act_func), P("data", Kind::tile), K("reduce_op", Kind::alu_op),
                  K("reduce_res", Kind::tile), K("bias", Kind::operand, "None"), K("scale", Kind::operand, "1.0"),
                  K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
                 E::act, MaskRule::boxes,
                 "activation, and the add-reduce of its results along the free axis into reduce_res (P, 1).",
                 into_result("data", [](Ctx& c, const Tensor& t, const Tensor& x) {
                   nisa::activation_reduce(t, c.act("op"), x, c.alu("reduce_op"), c.tile("reduce_res"),
                                           c.operand("bias"), c.operand("scale"), c.loc);
                 }));
    d.grid_param = "data";
    v.push_back(d);
  }

  {
    Decl d = isa("nc_matmul",
                 {P("stationary", Kind::tile), P("moving", Kind::tile), K("is_stationary_onezero", Kind::flag, "False"),
                  K("is_moving_onezero", Kind::flag, "False"), K("is_transpose", Kind::flag, "False"),
                  K("mask", Kind::predicate, "None")},
                 E::pe, MaskRule::whole,
                 "stationary.T @ moving on the tensor engine into a PSUM tile (float32). `psum += nc_matmul(...)` "
                 "accumulates; assigned to a PSUM tile it overwrites it.",
                 [](Ctx& c) -> Tensor {
                   if (c.dst) {
                     nisa::nc_matmul(*c.dst, c.tile("stationary"), c.tile("moving"), c.accumulate, c.loc);
                     return *c.dst;
                   }
                   return static_cast<Tensor>(nisa::nc_matmul(c.tile("stationary"), c.tile("moving"), c.loc));
                 });
    d.psum_result = true;
    v.push_back(d);
  }

  {
    Decl d = isa("nc_transpose",
                 {P("data", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None"),
                  K("engine", Kind::integer, "0")},
                 E::pe, MaskRule::one_box,
                 "data [P <= 128, F <= 128] transposed on the tensor engine into a PSUM tile [F, P] (float32); dtype: "
                 "then copied to the SBUF in that dtype. engine=vector_engine (a 32x32 transpose on the vector engine) "
                 "also runs on the tensor engine here: the same values, the tensor engine's timing.",
                 [](Ctx& c) -> Tensor {
                   if (c.dst) {
                     nisa::nc_transpose(*c.dst, c.tile("data"), c.loc);
                     return *c.dst;
                   }
                   return nisa::nc_transpose(c.tile("data"), c.loc);
                 });
    d.make_result = [](const Ctx& c) {
      const std::vector<int64_t> s = c.arg("data").tile.shape();
      return nl::ndarray(Shape{s[1], s[0]}, Dtype::float32, nl::psum, "", c.loc);
    };
    d.dst_box = [](const Box& b, const Ctx&) { return swapped(b); };
    d.grid_param = "data";
    d.psum_result = true;
    // With a dtype NKI inserts a cast: the PSUM result copied to the SBUF in that dtype (under a
    // mask, the transposed box of it).
    d.around = [](Ctx& c) -> std::optional<Tensor> {
      if (!c.given("dtype")) return std::nullopt;
      std::vector<Value> args = c.args;
      args[static_cast<size_t>(c.decl.index("dtype"))] = Value::of_dtype(std::nullopt);
      Options inner;
      inner.loc = c.loc;
      if (c.mask) inner.mask = *c.mask;
      const Tensor t = invoke(c.decl, std::move(args), inner);
      Options copy;
      copy.loc = c.loc;
      copy.dst = c.dst;
      copy.split = c.split;
      if (c.mask) copy.mask = c.mask->transposed();
      return invoke("isa", "tensor_copy",
                    {Value::of_tile(t), Value::nothing(Kind::predicate), Value::of_dtype(c.dtype("dtype"))}, copy);
    };
    v.push_back(d);
  }
}

// nki.isa: the calls lowered to instruction sequences (compose.cpp; docs/nki-python.md, "Composite calls")
void isa_composite_selects(std::vector<Decl>& v) {
  // ---- calls lowered to instruction sequences (compose.cpp; docs/nki-python.md, "Composite calls") -------

  {
    Decl d = isa("iota", {P("expr", Kind::affine), P("dtype", Kind::dtype), K("mask", Kind::predicate, "None")},
                 E::pool, MaskRule::whole,
                 "The values of an affine expression of nl.arange indices (int32 arithmetic) as a new SBUF tile of "
                 "`dtype`, shaped like the expression's grid: a constant HBM tensor of the values and one dma_copy.",
                 [](Ctx& c) -> Tensor {
                   if (c.dst) {
                     nisa::iota(*c.dst, c.arg("expr").affine, c.loc);
                     return *c.dst;
                   }
                   return nisa::iota(c.arg("expr").affine, *c.dtype("dtype"), c.loc);
                 });
    v.push_back(d);
  }

  v.push_back(
      isa("affine_select",
          {P("pred", Kind::predicate), P("on_true_tile", Kind::tile), P("on_false_value", Kind::number),
           K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
          E::pool, MaskRule::whole,
          "on_true_tile where the affine predicate holds, on_false_value (float32) elsewhere: a constant tile of "
          "bounds loaded by one dma_copy, then a maximum and a minimum (vector engine).",
          into_result("on_true_tile", [](Ctx& c, const Tensor& t, const Tensor& x) {
            nisa::affine_select(t, c.arg("pred").predicate, x, static_cast<float>(c.number("on_false_value")), c.loc);
          })));

  {
    Decl d = isa(
        "tensor_copy_predicated",
        {P("dst", Kind::tile, "None"), P("src", Kind::operand, "None"), P("predicate", Kind::tile, "None"),
         P("reverse_pred", Kind::flag, "False"), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
        E::dve, MaskRule::whole,
        "dst = src where predicate is non-zero (reverse_pred: where it is zero), dst unchanged elsewhere; src "
        "a tile of dst's shape and dtype, a (P, 1) tile or a number (vector engine).",
        [](Ctx& c) -> Tensor {
          nisa::tensor_copy_predicated(c.tile("dst"), c.operand("src"), c.tile("predicate"), c.flag("reverse_pred"),
                                       c.loc);
          return Tensor();
        });
    d.result = false;
    v.push_back(d);
  }

  v.push_back(
      isa("scalar_tensor_tensor",
          {K("data", Kind::tile), K("op0", Kind::alu_op), K("operand0", Kind::operand), K("op1", Kind::alu_op),
           K("operand1", Kind::tile), K("reverse0", Kind::flag, "False"), K("reverse1", Kind::flag, "False"),
           K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
          E::dve, MaskRule::whole,
          "(data op0 operand0) op1 operand1: operand0 a number or a (P, 1) tile, operand1 a tile of data's shape "
          "(tensor_scalar, then tensor_tensor).",
          into_result("data", [](Ctx& c, const Tensor& t, const Tensor& x) {
            nisa::scalar_tensor_tensor(t, x, c.alu("op0"), c.operand("operand0"), c.alu("op1"), c.tile("operand1"),
                                       c.flag("reverse0"), c.flag("reverse1"), c.loc);
          })));
}

// nki.isa: more composite calls: reductions and scans
void isa_composite_scans(std::vector<Decl>& v) {
  v.push_back(isa("tensor_scalar_reduce",
                  {K("data", Kind::tile), K("op0", Kind::alu_op), K("operand0", Kind::operand),
                   K("reduce_op", Kind::alu_op), K("reduce_res", Kind::tile), K("reverse0", Kind::flag, "False"),
                   K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
                  E::dve, MaskRule::whole,
                  "data op0 operand0, and its reduce_op (add, multiply, maximum, minimum) over every free axis written "
                  "into reduce_res, a (P, 1) tile (tensor_scalar, then tensor_reduce).",
                  into_result("data", [](Ctx& c, const Tensor& t, const Tensor& x) {
                    nisa::tensor_scalar_reduce(t, x, c.alu("op0"), c.operand("operand0"), c.alu("reduce_op"),
                                               c.tile("reduce_res"), c.flag("reverse0"), c.loc);
                  })));

  {
    Decl d =
        isa("tensor_tensor_scan",
            {P("data0", Kind::tile), P("data1", Kind::tile), P("initial", Kind::operand), P("op0", Kind::alu_op),
             P("op1", Kind::alu_op), P("reverse0", Kind::flag, "False"), P("reverse1", Kind::flag, "False"),
             K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
            E::dve, MaskRule::one_box,
            "The scan r[:, i] = (data0[:, i] op0 r[:, i-1]) op1 data1[:, i] from r[:, -1] = initial (a number or a "
            "(P, 1) tile), carried in float32: one tensor_scalar per column (vector engine).",
            into_result("data0", [](Ctx& c, const Tensor& t, const Tensor& x) {
              nisa::tensor_tensor_scan(t, x, c.tile("data1"), c.operand("initial"), c.alu("op0"), c.alu("op1"),
                                       c.flag("reverse0"), c.flag("reverse1"), c.loc);
            }));
    d.grid_param = "data0";
    v.push_back(d);
  }
}

// nki.isa: statistics, top-8, dropout
void isa_composite_stats(std::vector<Decl>& v) {
  // bn_stats, bn_aggr, max8: into dst, or into a new (P, 6) / (P, 2) / (P, 8) tile of dtype.
  using StatsInto = void (*)(const Tensor&, const Tensor&, Loc);
  using StatsNew = Tensor (*)(const Tensor&, Dtype, Loc);
  auto stats = [](StatsInto into, StatsNew make, const char* data) { return src_lowering(into, make, data); };
  {
    Decl d =
        isa("bn_stats", {P("data", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
            E::dve, MaskRule::one_box,
            "(count, mean, count * variance) of the even-indexed and of the odd-indexed elements of each partition "
            "(at most 512): a (P, 6) tile (vector and scalar engines).",
            stats(nisa::bn_stats, nisa::bn_stats, "data"));
    d.grid_param = "data";
    d.make_result = [](const Ctx& c) {
      const auto dt = c.dtype("dtype");
      return nl::ndarray(Shape{c.arg("data").tile.shape()[0], 6}, dt ? *dt : Dtype::float32, nl::sbuf, "", c.loc);
    };
    d.dst_box = [](const Box&, const Ctx&) { return Box{}; };  // the statistics are whole: the mask cuts the data
    v.push_back(d);
  }
  v.push_back(isa(
      "bn_aggr", {P("data", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")}, E::dve,
      MaskRule::whole, "The mean and variance, a (P, 2) tile, of the elements the bn_stats triples in data describe.",
      stats(nisa::bn_aggr, nisa::bn_aggr, "data")));
  v.push_back(isa("max8", {K("src", Kind::tile), K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
                  E::dve, MaskRule::whole,
                  "The 8 largest values of each partition of src (8 to 16384 elements), in descending order: a (P, 8) "
                  "tile (vector engine: per value a maximum, then its first position set to -inf).",
                  stats(nisa::max8, nisa::max8, "src")));
  v.push_back(isa("nc_find_index8",
                  {K("data", Kind::tile), K("vals", Kind::tile), K("mask", Kind::predicate, "None"),
                   K("dtype", Kind::dtype, "None")},
                  E::dve, MaskRule::whole,
                  "The position of the first occurrence in each partition of data of each of vals' 8 values: a (P, 8) "
                  "tile of float32 indices (NKI's uint32 and uint16 are not modelled).",
                  [](Ctx& c) -> Tensor {
                    if (c.dst) {
                      nisa::nc_find_index8(*c.dst, c.tile("data"), c.tile("vals"), c.loc);
                      return *c.dst;
                    }
                    const auto dt = c.dtype("dtype");
                    return nisa::nc_find_index8(c.tile("data"), c.tile("vals"), dt ? *dt : Dtype::float32, c.loc);
                  }));
  v.push_back(
      isa("nc_match_replace8",
          {K("data", Kind::tile), K("vals", Kind::tile), K("imm", Kind::number), K("dst_idx", Kind::tile, "None"),
           K("mask", Kind::predicate, "None"), K("dtype", Kind::dtype, "None")},
          E::dve, MaskRule::whole,
          "data with the first occurrence of each of vals' 8 values replaced by imm; their positions into "
          "dst_idx (P, 8) when given (float32 indices).",
          into_result("data", [](Ctx& c, const Tensor& t, const Tensor& x) {
            const auto idx = c.opt_tile("dst_idx");
            nisa::nc_match_replace8(t, x, c.tile("vals"), static_cast<float>(c.number("imm")), idx ? &*idx : nullptr,
                                    c.loc);
          })));
  v.push_back(
      isa("dropout",
          {P("data", Kind::tile), P("prob", Kind::operand), K("mask", Kind::predicate, "None"),
           K("dtype", Kind::dtype, "None")},
          E::dve, MaskRule::whole,
          "data with each element replaced by 0 with probability prob (a number or a (P, 1) tile), not rescaled: "
          "the kernel's next random numbers (see nl.rand) compared with prob, then a select.",
          into_result("data", [](Ctx& c, const Tensor& t, const Tensor& x) {
            nisa::dropout(t, x, c.operand("prob"), c.loc);
          })));
  {
    Decl d =
        isa("reciprocal", {P("data", Kind::tile), K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
            E::dve, MaskRule::boxes,
            "1 / data, element-wise, correctly rounded (vector engine: tensor_scalar divide, reversed).",
            [](Ctx& c) -> Tensor {
              const Tensor x = c.tile("data");
              const Operand one(1.0f);
              return made_or_into(
                  c, x,
                  [&] { return nisa::tensor_scalar(x, AluOp::divide, one, true, AluOp::bypass, {}, false, c.loc); },
                  [&](const Tensor& t) {
                    nisa::tensor_scalar(t, x, AluOp::divide, one, true, AluOp::bypass, {}, false, c.loc);
                  });
            });
    d.grid_param = "data";
    v.push_back(d);
  }
}

// nki.language: moving data
void language_memory(std::vector<Decl>& v) {
  // ==== nki.language ================================================================================

  {
    Decl d = lang("load", {P("src", Kind::tile), P("dtype", Kind::dtype, "None"), P("mask", Kind::predicate, "None")},
                  E::dma, MaskRule::boxes, "A new SBUF tile holding the HBM view `src` (one DMA transfer).",
                  src_lowering([](const Tensor& d, const Tensor& s, Loc l) { nisa::dma_copy(d, s, l); },
                               [](const Tensor& s, Dtype dt, Loc l) { return nl::load(s, dt, l); }));
    d.grid_param = "src";
    d.make_result = [](const Ctx& c) {
      const TileArg& s = c.arg("src").tile;
      return nl::ndarray(Shape(s.shape()), dtype_or(c, s), nl::sbuf, "", c.loc);
    };
    v.push_back(d);
  }
  {
    Decl d = lang("store", {P("dst", Kind::tile), P("value", Kind::tile), P("mask", Kind::predicate, "None")}, E::dma,
                  MaskRule::boxes, "Writes `value` (an SBUF tile) to the HBM view `dst` (one DMA transfer).",
                  [](Ctx& c) -> Tensor {
                    nl::store(c.tile("dst"), c.tile("value"), c.loc);
                    return Tensor();
                  });
    d.result = false;
    d.grid_param = "dst";
    v.push_back(d);
  }
  {
    const Decl* tc = nullptr;
    for (const Decl& x : v)
      if (x.name == "tensor_copy") tc = &x;
    Decl d = alias("language", "copy", *tc,
                   "A copy of an on-chip tile into a new SBUF tile (tensor_copy), cast to `dtype`.");
    d.params = {P("x", Kind::tile), P("dtype", Kind::dtype, "None"), P("mask", Kind::predicate, "None")};
    d.splits = true;
    d.grid_param = "x";
    d.lower = src_lowering([](const Tensor& d, const Tensor& s, Loc l) { nisa::tensor_copy(d, s, l); },
                           [](const Tensor& s, Dtype dt, Loc l) { return nisa::tensor_copy(s, dt, l); }, "x");
    v.push_back(d);
  }
}

// nki.language: the element-wise ALU calls
void language_elementwise(std::vector<Decl>& v) {
  // The element-wise ops.
  static const std::pair<const char*, AluOp> ew[] = {
      {"add", AluOp::add},
      {"subtract", AluOp::subtract},
      {"multiply", AluOp::multiply},
      {"divide", AluOp::divide},
      {"maximum", AluOp::max},
      {"minimum", AluOp::min},
      {"equal", AluOp::equal},
      {"not_equal", AluOp::not_equal},
      {"greater", AluOp::greater},
      {"greater_equal", AluOp::greater_equal},
      {"less", AluOp::less},
      {"less_equal", AluOp::less_equal},
      {"power", AluOp::power},
      {"mod", AluOp::mod},
      {"fmod", AluOp::fmod},
      {"logical_and", AluOp::logical_and},
      {"logical_or", AluOp::logical_or},
      {"logical_xor", AluOp::logical_xor},
      {"bitwise_and", AluOp::bitwise_and},
      {"bitwise_or", AluOp::bitwise_or},
      {"bitwise_xor", AluOp::bitwise_xor},
      {"left_shift", AluOp::left_shift},
      {"right_shift", AluOp::right_shift},
  };
  for (const auto& [name, op] : ew) {
    const bool cmp = op == AluOp::equal || op == AluOp::not_equal || op == AluOp::greater ||
                     op == AluOp::greater_equal || op == AluOp::less || op == AluOp::less_equal ||
                     op == AluOp::logical_and || op == AluOp::logical_or || op == AluOp::logical_xor;
    v.push_back(elementwise_decl(name, op, cmp));
  }
  v.push_back(unary_decl("invert", AluOp::invert, false, "None",
                         "nl.invert(x): ~x, the bits of an integer tile inverted within its dtype (vector engine: "
                         "the unary invert, one tensor_scalar)."));
  v.push_back(unary_decl("logical_not", AluOp::logical_not, true, "bool_",
                         "nl.logical_not(x): 1 where x is zero, 0 elsewhere (NaN is nonzero), a bool_ tile by default "
                         "(dtype=None: x's dtype): the vector engine's unary logical_not (one tensor_scalar)."));
}

// nki.language: reductions and the activation functions
void language_reductions(std::vector<Decl>& v) {
  // Reductions over free axes: tensor_reduce.
  static const std::pair<const char*, AluOp> reds[] = {
      {"max", AluOp::max}, {"min", AluOp::min}, {"sum", AluOp::add}, {"prod", AluOp::multiply}};
  for (const auto& [name, op] : reds) {
    const AluOp o = op;
    Decl d = lang(name,
                  {P("x", Kind::tile), P("axis", Kind::axes), P("dtype", Kind::dtype, "None"),
                   P("keepdims", Kind::flag, "False"), P("mask", Kind::predicate, "None")},
                  E::dve, MaskRule::boxes,
                  fmt::format("nl.{}(x, axis): a reduction over free axes (tensor_reduce on the vector engine).", name),
                  [o](Ctx& c) { return tensor_reduce_lower(c, o, "x"); });
    d.splits = true;
    reduces(d, "x");
    v.push_back(d);
  }

  // The activation functions: activation on the scalar engine.
  for (ActFunc f : ncore::isa::kActFuncValues) {
    if (f == ActFunc::copy) continue;
    const std::string name = ncore::isa::to_string(f);
    Decl d = lang(name, {P("x", Kind::tile), P("dtype", Kind::dtype, "None"), P("mask", Kind::predicate, "None")},
                  E::act, MaskRule::boxes,
                  fmt::format("nl.{}(x): element-wise on the scalar engine (one activation instruction); also the op "
                              "argument of nisa.activation.",
                              name),
                  src_lowering(
                      [f](const Tensor& d, const Tensor& x, Loc l) { nisa::activation(d, f, x, {}, 1.0f, l); },
                      [f](const Tensor& x, Dtype dt, Loc l) { return nisa::activation(f, x, {}, 1.0f, dt, l); }, "x"));
    d.splits = true;
    d.grid_param = "x";
    v.push_back(d);
  }
}

// nki.language: statistics
void language_statistics(std::vector<Decl>& v) {
  // nl.mean: the sum in float32 (tensor_reduce add) times 1/n in float32 (tensor_scalar multiply),
  // n the number of elements summed; under a mask, per box of the kept axes.
  {
    Decl d =
        lang("mean",
             {P("x", Kind::tile), P("axis", Kind::axes), P("dtype", Kind::dtype, "None"),
              P("mask", Kind::predicate, "None"), P("keepdims", Kind::flag, "False")},
             E::dve, MaskRule::boxes,
             "nl.mean(x, axis): the sum over the free axes (tensor_reduce add, in float32) times 1/n in float32 "
             "(tensor_scalar multiply), n the number of elements summed; in `dtype` (default x's).",
             [](Ctx& c) -> Tensor {
               const Tensor x = c.tile("x");
               const Shape s = x.shape();
               int64_t n = 1;
               for (int a : c.arg("axis").axes) {
                 if (a < 1 || a >= static_cast<int>(s.size()))
                   fail(c.loc, fmt::format("nl.mean over axis {} of a tile of shape {}: the axes must be free axes "
                                           "(1 to the tile's last)",
                                           a, s.str()));
                 n *= s[static_cast<size_t>(a)];
               }
               const Tensor total =
                   nisa::tensor_reduce(AluOp::add, x, c.axes("axis"), Dtype::float32, c.flag("keepdims"), c.loc);
               const Tensor t = result(c, total, dtype_or(c, x));
               nisa::tensor_scalar(t, total, AluOp::multiply, Operand(1.0f / static_cast<float>(n)), false,
                                   AluOp::bypass, {}, false, c.loc);
               return t;
             });
    d.splits = true;
    reduces(d, "x");
    v.push_back(d);
  }

  {
    Decl d =
        lang("where",
             {P("condition", Kind::tile), P("x", Kind::operand), P("y", Kind::operand), K("dtype", Kind::dtype, "None"),
              K("mask", Kind::predicate, "None")},
             E::dve, MaskRule::whole,
             "x where condition is non-zero (NaN counts as true), y elsewhere; x and y tiles of condition's shape, "
             "(P, 1) tiles or numbers (vector engine: two tensor_scalar and a maximum of minimums).",
             [](Ctx& c) -> Tensor {
               const Tensor cond = c.tile("condition");
               Tensor dst;
               if (c.dst) {
                 dst = *c.dst;
               } else {
                 auto dt = c.dtype("dtype");
                 if (!dt) {
                   dt = cond.dtype();
                   for (const char* n : {"x", "y"}) {
                     const Value& o = c.arg(n);
                     if (is_tile(o) && o.tile.shape() == cond.shape().vec()) {
                       dt = o.tile.dtype();
                       break;
                     }
                   }
                 }
                 dst = nl::ndarray(cond.shape(), *dt, nl::sbuf, "where_result", c.loc);
               }
               nl::where(dst, cond, c.operand("x"), c.operand("y"), c.loc);
               return dst;
             });
    d.skip_nothing = false;
    v.push_back(d);
  }

  using Reduction = Tensor (*)(const Tensor&, const nisa::Axes&, Dtype, const Tensor*, Loc);
  auto reduction = [](Reduction fn) {
    return [fn](Ctx& c) -> Tensor {
      const Tensor x = c.tile("x");
      return fn(x, c.axes("axis"), dtype_or(c, x), c.dst, c.loc);
    };
  };
  v.push_back(lang(
      "var",
      {P("x", Kind::tile), P("axis", Kind::axes), K("dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
      E::dve, MaskRule::whole,
      "nl.var(x, axis): the population variance over free axes (NumPy's ddof=0), on the vector engine.",
      reduction(nl::var)));
  v.back().skip_nothing = false;
  v.push_back(lang(
      "all",
      {P("x", Kind::tile), P("axis", Kind::axes), K("dtype", Kind::dtype, "bool_"), K("mask", Kind::predicate, "None")},
      E::dve, MaskRule::whole,
      "nl.all(x, axis): 1 where every element over the free axes is non-zero, 0 where not (a bool_ tile "
      "unless a dtype is given).",
      reduction(nl::all_of)));
  v.back().skip_nothing = false;
  v.push_back(lang("softmax",
                   {P("x", Kind::tile), P("axis", Kind::axes), K("dtype", Kind::dtype, "None"),
                    K("compute_dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
                   E::act, MaskRule::whole,
                   "exp(x - max) / sum over the free axes: max, subtract, exp, sum, divide (in float32).",
                   reduction(nl::softmax)));
  v.back().skip_nothing = false;
  v.push_back(lang("rms_norm",
                   {P("x", Kind::tile), P("w", Kind::operand), P("axis", Kind::axes), P("n", Kind::integer),
                    P("epsilon", Kind::number, "1e-06"), K("dtype", Kind::dtype, "None"),
                    K("compute_dtype", Kind::dtype, "None"), K("mask", Kind::predicate, "None")},
                   E::act, MaskRule::whole,
                   "x / sqrt(sum(x^2 over axis) / n + epsilon) * w (w a tile of x's shape, a (P, 1) tile or a number): "
                   "square, sum, divide and add, sqrt, divide, multiply (in float32).",
                   [](Ctx& c) -> Tensor {
                     const Tensor x = c.tile("x");
                     return nl::rms_norm(x, c.operand("w"), c.axes("axis"), c.integer("n"),
                                         static_cast<float>(c.number("epsilon")), dtype_or(c, x), c.dst, c.loc);
                   }));
  v.back().skip_nothing = false;
}

// nki.language: gathers, loops, the tensor engine, random numbers
void language_composite(std::vector<Decl>& v) {
  v.push_back(lang("gather_flattened",
                   {P("data", Kind::tile), P("indices", Kind::tile), K("mask", Kind::predicate, "None"),
                    K("dtype", Kind::dtype, "None")},
                   E::dve, MaskRule::whole,
                   "out[p, j] = data[p, indices[p, j]] over the flattened free axes (indices: a float tile of whole "
                   "numbers, this model having no uint32): per index column a compare with a constant index tile, a "
                   "minimum and a max-reduction (vector engine).",
                   [](Ctx& c) -> Tensor {
                     const Tensor x = c.tile("data");
                     return nl::gather_flattened(x, c.tile("indices"), dtype_or(c, x), c.dst, c.loc);
                   }));
  v.back().skip_nothing = false;
  // nl.loop_reduce: dst = dst op x into the tile the result is assigned to (the front end finds it).
  v.push_back(
      lang("loop_reduce",
           {P("x", Kind::tile), P("op", Kind::alu_op), P("loop_indices", Kind::shape), K("dtype", Kind::dtype, "None"),
            K("mask", Kind::predicate, "None")},
           E::dve, MaskRule::whole,
           "dst = dst op x (tensor_tensor), dst the tile the result is assigned to: `b = nl.loop_reduce(a, "
           "op=np.add, loop_indices=[i])` reduces into the tile b names, `b[...] = nl.loop_reduce(...)` into that "
           "view.",
           [](Ctx& c) -> Tensor {
             if (!c.dst)
               fail(c.loc,
                    "the result of nl.loop_reduce must be assigned to the tile it reduces into (b = "
                    "nl.loop_reduce(a, op, loop_indices) with b a tile, or b[...] = ...)");
             nl::loop_reduce(*c.dst, c.tile("x"), c.alu("op"), c.loc);
             return *c.dst;
           }));
  v.push_back(lang(
      "transpose", {P("x", Kind::tile), P("dtype", Kind::dtype, "None"), P("mask", Kind::predicate, "None")}, E::pe,
      MaskRule::whole, "x [P <= 128, F <= 128] transposed on the tensor engine (a PSUM tile [F, P]), as NKI lowers it.",
      [](Ctx& c) -> Tensor {
        if (c.dst) {
          nisa::nc_transpose(*c.dst, c.tile("x"), c.loc);
          return *c.dst;
        }
        return nisa::nc_transpose(c.tile("x"), c.loc);
      }));
  v.back().skip_nothing = false;
  v.back().psum_result = true;
  v.push_back(lang("matmul",
                   {P("x", Kind::tile), P("y", Kind::tile), P("transpose_x", Kind::flag, "False"),
                    P("mask", Kind::predicate, "None")},
                   E::pe, MaskRule::whole,
                   "x @ y on the tensor engine into a new PSUM tile (float32): x [M, K] and y [K, N] in the SBUF "
                   "(transpose_x=True: x given as [K, M]). Without transpose_x, x is first transposed on the tensor "
                   "engine (nc_transpose into PSUM, copied back to the SBUF in x's dtype), as NKI lowers it.",
                   [](Ctx& c) -> Tensor {
                     Tensor x = c.tile("x");
                     if (!c.flag("transpose_x")) x = nisa::tensor_copy(nisa::nc_transpose(x, c.loc), x.dtype(), c.loc);
                     if (c.dst) {
                       nisa::nc_matmul(*c.dst, x, c.tile("y"), c.accumulate, c.loc);
                       return *c.dst;
                     }
                     return static_cast<Tensor>(nisa::nc_matmul(x, c.tile("y"), c.loc));
                   }));
  v.back().skip_nothing = false;
  v.back().psum_result = true;
  v.push_back(lang("load_transpose2d",
                   {P("src", Kind::tile), P("dtype", Kind::dtype, "None"), P("mask", Kind::predicate, "None")}, E::dma,
                   MaskRule::whole,
                   "The 2-D HBM view src [K, M] loaded transposed into a new SBUF tile [M, K] (one DMA transfer whose "
                   "access pattern walks src by columns).",
                   [](Ctx& c) -> Tensor {
                     const Tensor s = c.tile("src");
                     if (s.ndim() != 2)
                       fail(c.loc, fmt::format("load_transpose2d takes a 2-D tensor, got {}", s.str()));
                     const Tensor t = s.permute({1, 0}, c.loc);
                     if (c.dst) {
                       nisa::dma_copy(*c.dst, t, c.loc);
                       return *c.dst;
                     }
                     return nl::load(t, dtype_or(c, t), c.loc);
                   }));
  v.back().skip_nothing = false;
  v.push_back(lang("dropout",
                   {P("x", Kind::tile), P("rate", Kind::operand), K("dtype", Kind::dtype, "None"),
                    K("mask", Kind::predicate, "None")},
                   E::dve, MaskRule::whole, "x with each element replaced by 0 with probability rate (nisa.dropout).",
                   into_result("x", [](Ctx& c, const Tensor& t, const Tensor& x) {
                     nisa::dropout(t, x, c.operand("rate"), c.loc);
                   })));
  {
    Decl d = lang("rand", {P("shape", Kind::shape), P("dtype", Kind::dtype, "float32")}, E::dma, MaskRule::none,
                  "A new SBUF tile of uniform values in [0, 1): the kernel's next random numbers (a splitmix64 stream "
                  "nl.random_seed starts), fixed when the kernel is traced, as a constant loaded by one dma_copy.",
                  [](Ctx& c) -> Tensor {
                    const Tensor t = nl::rand(Shape(c.arg("shape").shape), *c.dtype("dtype"), c.loc);
                    if (c.dst) {
                      nisa::tensor_copy(*c.dst, t, c.loc);
                      return *c.dst;
                    }
                    return t;
                  });
    v.push_back(d);
  }
  {
    Decl d =
        lang("random_seed", {P("seed", Kind::integer), K("mask", Kind::predicate, "None")}, E::none, MaskRule::whole,
             "Starts the kernel's random numbers (nl.rand, dropout) from `seed`: the same seed, the same sequence.",
             [](Ctx& c) -> Tensor {
               nl::random_seed(c.integer("seed"), c.loc);
               return Tensor();
             });
    d.result = false;
    d.skip_nothing = false;
    v.push_back(d);
  }
}

std::vector<Decl> make_all() {
  std::vector<Decl> v;
  isa_data_movement(v);
  isa_vector(v);
  isa_scalar_and_tensor(v);
  isa_composite_selects(v);
  isa_composite_scans(v);
  isa_composite_stats(v);
  language_memory(v);
  language_elementwise(v);
  language_reductions(v);
  language_statistics(v);
  language_composite(v);
  attach_today(v);
  return v;
}

}  // namespace

const std::vector<Decl>& all() {
  static const std::vector<Decl> v = make_all();
  return v;
}

const Decl* find(std::string_view ns, std::string_view name) {
  static const std::unordered_map<std::string, const Decl*> by = [] {
    std::unordered_map<std::string, const Decl*> m;
    for (const Decl& d : all()) m.emplace(d.ns + "." + d.name, &d);
    return m;
  }();
  auto it = by.find(std::string(ns) + "." + std::string(name));
  return it == by.end() ? nullptr : it->second;
}

// ---- invoke -------------------------------------------------------------------------------------

namespace {

// The index grid of a per-box call.
std::vector<int64_t> grid_of(const Ctx& c) {
  if (c.decl.grid) return c.decl.grid(c);
  if (!c.decl.grid_param.empty()) return shape_of(c.arg(c.decl.grid_param));
  return {};
}

Tensor make_result(const Ctx& c) {
  if (c.decl.make_result) return c.decl.make_result(c);
  const TileArg& like = c.arg(c.decl.grid_param).tile;
  const auto dt = c.decl.index("dtype") >= 0 ? c.dtype("dtype") : std::nullopt;
  return result_like(like, dt ? *dt : like.dtype(), c.loc);
}

// The call lowered once per box, every tile argument and the destination cut to it.
Tensor per_box(Ctx& c, const std::vector<Box>& boxes) {
  Tensor dst;
  if (c.decl.result) dst = c.dst ? *c.dst : make_result(c);
  for (const Box& b : boxes) {
    Ctx k{c.decl, c.args, nullptr, c.accumulate, c.loc, c.mask, c.split};
    for (Value& a : k.args)
      if (is_tile(a)) a.tile = TileArg(cut(a.tile, b, c.loc));
    Tensor d;
    if (dst.valid()) {
      d = cut(TileArg(dst), c.decl.dst_box ? c.decl.dst_box(b, c) : b, c.loc);
      k.dst = &d;
    }
    c.decl.lower(k);
  }
  return dst;
}

// The call with its mask and tiling applied (the destination, if any, one the engine writes).
Tensor run(Ctx& c) {
  const Decl& d = c.decl;
  if (d.around)
    if (auto r = d.around(c)) return *r;
  if (d.prepare) d.prepare(c);
  switch (d.mask) {
    case MaskRule::none:
      if (c.mask) fail(c.loc, fmt::format("'{}' takes no mask", d.name));
      return d.lower(c);
    case MaskRule::whole: {
      if (c.mask && !c.mask->keeps_all()) {
        if (!c.mask->keeps_nothing())
          fail(c.loc, fmt::format("the mask parameter of '{}' keeps part of the instruction: this model applies it "
                                  "only when it keeps all of it or nothing; index the tensors with the range you want "
                                  "instead",
                                  d.name));
        if (!d.skip_nothing)
          fail(c.loc, fmt::format("the mask parameter of '{}' keeps nothing: this model applies it to this call only "
                                  "when it keeps all of it; leave the call out instead",
                                  d.name));
        // It issues nothing: a destination is left as it is (a new tile is still computed: NKI
        // leaves its values undefined).
        if (c.dst) return *c.dst;
        if (!d.result) return Tensor();
      }
      Ctx k = c;
      k.mask = nullptr;
      return d.lower(k);
    }
    case MaskRule::one_box: {
      if (!c.mask) return d.lower(c);
      const std::vector<Box> bs = c.mask->boxes();
      if (bs.size() > 1)
        fail(c.loc,
             fmt::format("the mask of '{}' keeps more than one box: this model applies masks that keep one range "
                         "per axis here{}",
                         d.name, d.name == "tensor_tensor_scan" ? " (a scan runs along its whole free range)" : ""));
      return per_box(c, bs);
    }
    case MaskRule::boxes: {
      if (!c.mask && !c.split) return d.lower(c);
      const std::vector<int64_t> grid = grid_of(c);
      const std::set<int> reduced = d.reduced ? d.reduced(c) : std::set<int>{};
      std::vector<Box> boxes = c.mask ? c.mask->boxes(reduced) : std::vector<Box>{Box{}};
      if (c.split && !grid.empty()) {
        std::vector<Box> out;
        for (const Box& b : boxes) fit(b, grid, reduced, out);
        boxes = std::move(out);
      }
      if (!c.mask && boxes.size() == 1) return d.lower(c);
      return per_box(c, boxes);
    }
  }
  return d.lower(c);
}

// A result assigned to a view the call's engine cannot write: a tensor-engine result lands in a
// PSUM tile of its own first and a copy moves it (to HBM through the SBUF); an engine result
// assigned to an HBM view lands in an SBUF tile of its own and a DMA stores it. Returns whether
// it handled the destination.
bool lands_elsewhere(Ctx& c, Tensor& out) {
  if (!c.dst || !c.decl.result) return false;
  const Tensor dst = *c.dst;
  if (c.decl.psum_result && dst.buffer() != BufferKind::psum && !(c.decl.name == "nc_transpose" && c.given("dtype"))) {
    Ctx k = c;
    k.dst = nullptr;
    const Tensor t = run(k);
    if (dst.on_chip())
      nisa::tensor_copy(dst, t, c.loc);
    else
      nisa::dma_copy(dst, nisa::tensor_copy(t, dst.dtype(), c.loc), c.loc);
    out = dst;
    return true;
  }
  if (!dst.on_chip() && c.decl.engine != E::dma) {
    Ctx k = c;
    k.dst = nullptr;
    nisa::dma_copy(dst, run(k), c.loc);
    out = dst;
    return true;
  }
  return false;
}

}  // namespace

Tensor invoke(const Decl& d, std::vector<Value> args, const Options& opt) {
  if (args.size() > d.params.size())
    throw ncore::KernelError(
        fmt::format("{}.{} takes {} arguments, got {}", d.ns, d.name, d.params.size(), args.size()));
  for (size_t i = args.size(); i < d.params.size(); ++i) args.push_back(Value::nothing(d.params[i].kind));
  Ctx c{d, std::move(args), opt.dst, opt.accumulate, opt.loc, opt.mask ? &*opt.mask : nullptr, opt.split || d.splits};
  Tensor out;
  if (lands_elsewhere(c, out)) return out;
  return run(c);
}

namespace {

// The destination of a call in today's spelling, where its engine writes: NKI places a
// tensor-engine result in PSUM and no compute engine writes HBM.
void check_today_dst(const Decl& d, const Tensor& dst, const Loc& loc) {
  const char* label = d.ns == "isa" ? "nisa" : "nl";
  if (d.psum_result && dst.buffer() != BufferKind::psum && d.name != "nc_transpose")
    fail(loc, fmt::format("{}.{}: dst must be a PSUM tile (the tensor engine writes PSUM), got {} {}", label, d.name,
                          to_string(dst.buffer()), dst.name()));
  if (d.engine != E::dma && d.engine != E::none && !dst.on_chip())
    fail(loc, fmt::format("{}.{}: dst must be an SBUF or PSUM tile (a compute engine cannot write HBM), got the HBM "
                          "tensor {}: write it to an on-chip tile, then nisa.dma_copy it",
                          label, d.name, dst.name()));
}

}  // namespace

Tensor invoke_today(const Decl& d, std::vector<Value> args, const Options& opt) {
  const char* label = d.ns == "isa" ? "nisa" : "nl";
  if (d.today.empty())
    throw ncore::KernelError(fmt::format("{}.{} is not a call of today's NKI (nki.{})", label, d.name, d.ns));
  if (args.size() > d.today.size())
    throw ncore::KernelError(fmt::format("{}.{} takes {} arguments, got {}", label, d.name, d.today.size(), args.size()));
  for (size_t i = args.size(); i < d.today.size(); ++i) args.push_back(Value::nothing(d.today[i].kind));
  for (size_t i = 0; i < d.today.size(); ++i)
    if (d.today[i].required() && args[i].none)
      fail(opt.loc, fmt::format("{}.{}: {} is required", label, d.name, d.today[i].name));
  check_today_strict(d, args, opt.loc);
  Options o = opt;
  Tensor dst;
  if (const int di = d.today_index("dst"); di >= 0) {
    const Value& v = args[static_cast<size_t>(di)];
    if (!is_tile(v)) fail(opt.loc, fmt::format("{}.{}: dst must be a tile", label, d.name));
    dst = v.tile.whole(opt.loc);
    check_today_dst(d, dst, opt.loc);
    if (d.index("dst") < 0) o.dst = &dst;  // else a parameter of the call itself (dma_copy's)
  }
  if (const int ai = d.today_index("accumulate"); ai >= 0 && !args[static_cast<size_t>(ai)].none)
    o.accumulate = args[static_cast<size_t>(ai)].number != 0;
  if (d.today_lower) {
    Ctx c{d, std::move(args), o.dst, o.accumulate, o.loc, nullptr, false, true};
    return d.today_lower(c);
  }
  std::vector<Value> mapped;
  mapped.reserve(d.params.size());
  for (const Param& p : d.params) {
    const int j = d.today_index(p.name);
    mapped.push_back(j >= 0 ? std::move(args[static_cast<size_t>(j)]) : Value::nothing(p.kind));
  }
  return invoke(d, std::move(mapped), o);
}

Tensor invoke(std::string_view ns, std::string_view name, std::vector<Value> args, const Options& opt) {
  const Decl* d = find(ns, name);
  if (!d) throw ncore::KernelError(fmt::format("nki.{} has no call '{}'", ns, name));
  return invoke(*d, std::move(args), opt);
}

}  // namespace nki::calls
