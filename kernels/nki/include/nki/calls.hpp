// The NKI call surface: every nki.isa instruction and nki.language call declared once, here in C++.
//
// A declaration (Decl) holds what a front end needs to offer the call and what the tracer needs
// to run it: its namespace and name, its parameters as NKI names them (kind, default, keyword),
// the engine NKI places it on, how it applies a mask (per box, one box, all or nothing), whether
// it is a high-level call that NKI's compiler tiles into instructions of at most 64K elements per
// partition, how its index grid and a new result tile come from its arguments, and its lowering,
// which calls the typed C++ API (nki/isa.hpp, nki/language.hpp). invoke() runs a call: it applies
// the mask and the tiling (nki/mask.hpp), creating the result tile first when there are several
// boxes, and lowers the call once per box with every tile argument cut to it.
//
// The Python front ends are thin layers over this table: they make one function per
// declaration with its parameters (neuronxcc.nki's spelling: the result returned, mask= and
// dtype= taken), convert Python values to Values, and call invoke through the native module;
// a C++ kernel can call invoke (or the typed API) directly, masks and tiling included.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nki/isa.hpp"
#include "nki/language.hpp"
#include "nki/loc.hpp"
#include "nki/mask.hpp"
#include "nki/tensor.hpp"

namespace nki::calls {

// What a parameter takes.
enum class Kind : uint8_t {
  tile,       // a tensor view (SBUF, PSUM or HBM), possibly past its tensor's end (a Deferred view)
  operand,    // a number or a (P, 1) tile (tensor_scalar's operands, activation's bias and scale)
  alu_op,     // an ALU operator (nl.add, np.add, ...); none is bypass
  act_func,   // a scalar-engine function (nl.exp, np.exp, nl.copy, ...)
  dtype,      // an element type, or none
  flag,       // a bool
  number,     // a float
  integer,    // an int
  axes,       // an int or a tuple of ints (free axes of a reduction)
  affine,     // an affine expression of index grids (nl.arange, nl.mgrid), or an int
  predicate,  // comparisons of affine expressions with 0, all of which must hold
  shape,      // a tuple of dimensions
  pattern,    // an access pattern's [[step, num], ...] (today's iota, affine_select)
  any,        // accepted and ignored: changes nothing this model computes (name=, engine=, perf_mode=, ...)
};
const char* to_string(Kind k);

struct Param {
  std::string name;  // NKI's keyword
  Kind kind;
  std::string def;  // the default as NKI writes it ("None", "False", "1.0"); "" for a required parameter
  bool keyword_only = false;
  bool required() const { return def.empty(); }
};

// One argument of a call.
struct Value {
  Kind kind = Kind::tile;
  bool none = true;          // not given (NKI's None)
  TileArg tile;              // tile; operand (a tile)
  double number = 0;         // number; operand (a scalar); integer and flag read it too
  std::string scalar_dtype;  // operand: a scalar's NKI dtype (weakly typed: "int32" for an int, ...)
  AluOp alu = AluOp::bypass;
  ActFunc act = ActFunc::copy;
  Dtype dtype = Dtype::float32;
  int64_t integer = 0;
  std::vector<int> axes;
  nisa::Affine affine;
  nisa::AffinePredicate predicate;
  std::vector<int64_t> shape;
  std::vector<std::pair<int64_t, int64_t>> pattern;  // [step, num] pairs, outermost first

  static Value of_tile(TileArg t);
  static Value of_scalar(double v, std::string dtype = "float32");
  static Value of_alu(AluOp op);
  static Value of_act(ActFunc f);
  static Value of_dtype(std::optional<Dtype> d);
  static Value of_flag(bool b);
  static Value of_number(double v);
  static Value of_integer(int64_t v);
  static Value of_axes(std::vector<int> a);
  static Value of_affine(nisa::Affine a);
  static Value of_predicate(nisa::AffinePredicate p);
  static Value of_shape(std::vector<int64_t> s);
  static Value of_pattern(std::vector<std::pair<int64_t, int64_t>> p);
  static Value nothing(Kind k);
};

struct Decl;

// A call being lowered: its arguments (cut to the current box), the destination (null: the
// lowering creates the result), accumulate (nc_matmul), the kernel's location.
struct Ctx {
  const Decl& decl;
  std::vector<Value> args;
  const Tensor* dst = nullptr;
  std::optional<bool> accumulate;
  Loc loc;
  const Mask* mask = nullptr;  // the call's mask (for calls that lower to other masked calls)
  bool split = false;          // within a high-level call: its instructions are tiled
  bool today = false;          // args are in today's spelling's order (Decl::today_lower)

  const Value& arg(std::string_view name) const;
  bool given(std::string_view name) const { return !arg(name).none; }
  Tensor tile(std::string_view name) const;  // the view (a deferred one raises its error)
  std::optional<Tensor> opt_tile(std::string_view name) const;
  Operand operand(std::string_view name) const;
  AluOp alu(std::string_view name) const { return arg(name).alu; }
  ActFunc act(std::string_view name) const { return arg(name).act; }
  std::optional<Dtype> dtype(std::string_view name) const;
  bool flag(std::string_view name) const { return arg(name).number != 0; }
  double number(std::string_view name) const { return arg(name).number; }
  int64_t integer(std::string_view name) const { return arg(name).integer; }
  nisa::Axes axes(std::string_view name) const { return nisa::Axes(arg(name).axes); }
};

using Lower = std::function<Tensor(Ctx&)>;

// How a call applies mask=.
enum class MaskRule : uint8_t {
  boxes,    // one instruction per box the mask keeps (the tiles cut to it)
  one_box,  // at most one box (a scan, a transpose, bn_stats)
  whole,    // all or nothing: a mask that keeps nothing issues nothing (or is refused, nl calls)
  none,     // no mask= (allocations, nc_matmul's is all-or-nothing: see whole)
};

struct Decl {
  std::string ns;  // "isa" or "language"
  std::string name;
  std::string doc;
  std::vector<Param> params;  // neuronxcc.nki's spelling, in order
  ncore::isa::Engine engine = ncore::isa::Engine::none;
  MaskRule mask = MaskRule::none;
  bool skip_nothing = true;  // whole: a mask that keeps nothing issues no instruction (false: refused)
  bool splits = false;       // a high-level call: tiled into instructions of at most 64K elements per partition
  bool result = true;        // the call returns a tile (else None)
  Lower lower;
  // Per-box calls: the index grid (the tiles' shape) and the axes the instruction reduces; the
  // result tile a multi-box call creates first; the destination's box for an index box (the
  // reduced axes dropped, the axes of a transpose swapped). Defaults: the grid of `grid_param`,
  // no axis reduced, result_tile(grid_param's view, dtype or its dtype), the same box.
  std::string grid_param;
  std::function<std::vector<int64_t>(const Ctx&)> grid;
  std::function<std::set<int>(const Ctx&)> reduced;
  std::function<Tensor(const Ctx&)> make_result;
  std::function<Box(const Box&, const Ctx&)> dst_box;
  // Run once before the mask and the tiling apply (nl's element-wise calls: NKI's dtype of a
  // weakly typed scalar, and the partition and free-axis broadcasts of the operands).
  std::function<void(Ctx&)> prepare;
  // A call that composes others under its mask itself (nc_transpose with a dtype: the transpose,
  // then a copy under the transposed mask): returns the result, or nullopt to run as usual.
  std::function<std::optional<Tensor>(Ctx&)> around;
  bool psum_result = false;  // a tensor-engine result: assigned outside PSUM, it lands in PSUM first
  // Today's spelling (`import nki`, NKI 0.3 on; calls_today.cpp): the parameters in its order,
  // destination first for the instructions, no mask=. Each names a parameter of `params` (its
  // value goes there), or is one of today's own: dst, accumulate, and those of kind any or read by
  // today_lower. Empty: the call is not in today's namespace.
  std::vector<Param> today;
  // Lowers today's spelling itself where its arguments mean something other than params' (iota's
  // pattern, memset's value): ctx.args in today's order, ctx.dst the destination. Null: the
  // arguments go to params by name and invoke() runs the call into dst.
  Lower today_lower;
  // Today's parameters that change what the model computes when not their default: refused then.
  std::vector<std::string> today_strict;
  const Param* param(std::string_view name) const;
  int index(std::string_view name) const;  // -1 when it has no such parameter
  int today_index(std::string_view name) const;  // in today's spelling; -1 when it has none
};

// Every declaration, in NKI's order of its documentation (language, then isa).
const std::vector<Decl>& all();
// The declaration of ns.name, or null.
const Decl* find(std::string_view ns, std::string_view name);

struct Options {
  const Tensor* dst = nullptr;     // write into this view (NKI's `x[...] = call(...)`, the dst= spelling)
  std::optional<bool> accumulate;  // nc_matmul's (None: inferred)
  std::optional<Mask> mask;        // mask=
  bool split = false;              // within a high-level call
  Loc loc = Loc::here();
};

// Runs a call with its arguments in parameter order (missing trailing ones take none). Returns
// the result tile (the destination when given), or an invalid Tensor for a call without one.
Tensor invoke(const Decl& d, std::vector<Value> args, const Options& opt);
Tensor invoke(std::string_view ns, std::string_view name, std::vector<Value> args, const Options& opt);

// Runs a call in today's spelling (Decl::today), arguments in that order (dst first): the
// arguments move to the declaration's parameters by name and the call runs into dst (nc_matmul's
// accumulate= from its argument), or today_lower runs. A result the call's engine cannot write
// where dst is (a tensor-engine result outside PSUM, an engine result in HBM) is refused in NKI's
// words, not moved there by a copy as the older spelling's assignment does.
Tensor invoke_today(const Decl& d, std::vector<Value> args, const Options& opt);

// Names as the front ends give them.
Dtype dtype_of(const std::string& name);
AluOp alu_of(const std::string& name);
ActFunc act_of(const std::string& name);
std::string alu_nki_name(AluOp op);    // NKI's name: "maximum" for max, ...
std::vector<std::string> alu_names();  // the ALU ops (bypass excepted), in ISA order
std::vector<std::string> act_names();  // the activation functions, in ISA order

}  // namespace nki::calls
