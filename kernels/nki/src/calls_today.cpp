// Today's spelling of the NKI calls (`import nki`, NKI 0.3 to 0.7): one signature record per call,
// beside the declarations of calls.cpp. Each record is the call's parameter list as NKI's
// reference writes its `def` line; a parameter takes its kind from the declaration's parameter
// of the same name, or is one of today's own (kinds below). The arguments of most calls mean what
// the older spelling's do, so invoke_today moves them there by name; iota, affine_select, memset,
// activation and dma_transpose read today's arguments themselves (today_lower).
//
// A parameter written `!name=default` changes what the model computes when it is not its default
// (reduce_res_negate=True, an accumulator command): a call that gives another value is refused by
// name, never run as if it had not been given.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "calls_today.hpp"
#include "ncore/error.hpp"
#include "tracer_impl.hpp"

namespace nki::calls {
namespace {

[[noreturn]] void fail(const Loc& loc, const std::string& msg) {
  kernel_check(false, msg, loc);
  throw ncore::KernelError(msg);
}

struct Record {
  const char* ns;
  const char* name;
  const char* sig;
};

// NKI 0.7's def lines (nki/api/nki/isa/__init__.py, nki/api/nki/language/__init__.py), for the
// calls this model runs.
constexpr Record kRecords[] = {
    {"isa", "dma_copy",
     "dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown, engine=engine.unknown, name=None"},
    {"isa", "tensor_copy", "dst, src, engine=engine.unknown, name=None"},
    {"isa", "memset", "dst, value, engine=engine.unknown, name=None"},
    {"isa", "tensor_copy_predicated", "dst, src, predicate, reverse_pred=False, name=None"},
    {"isa", "nc_matmul",
     "dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False, "
     "accumulate=None, tile_position=(), tile_size=(), perf_mode=matmul_perf_mode.none, name=None"},
    {"isa", "nc_transpose", "dst, data, engine=engine.unknown, name=None"},
    {"isa", "dma_transpose",
     "dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown, oob_mode=oob_mode.error, name=None"},
    {"isa", "tensor_tensor", "dst, data1, data2, op, engine=engine.unknown, name=None"},
    {"isa", "tensor_scalar",
     "dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, engine=engine.unknown, "
     "name=None"},
    {"isa", "tensor_reduce", "dst, op, data, axis, negate=False, keepdims=False, name=None"},
    {"isa", "activation",
     "dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle, name=None"},
    {"isa", "activation_reduce", "dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None"},
    {"isa", "iota", "dst, pattern, offset=0, channel_multiplier=0, name=None"},
    {"isa", "affine_select",
     "dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=equal, offset=0, name=None"},
    {"isa", "bn_stats", "dst, data, name=None"},
    {"isa", "bn_aggr", "dst, data, name=None"},
    {"isa", "tensor_tensor_scan", "dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, name=None"},
    {"isa", "dropout", "dst, data, prob, name=None"},
    {"isa", "reciprocal", "dst, data, name=None"},
    {"isa", "max8", "dst, src, name=None"},
    {"isa", "scalar_tensor_tensor",
     "dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, name=None"},
    {"isa", "tensor_scalar_reduce",
     "dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False, !reduce_cmd=reduce_cmd.reset_reduce, "
     "!reduce_init=None, !reduce_res_negate=False, name=None"},
    {"isa", "nc_find_index8", "dst, data, vals, name=None"},
    {"isa", "nc_match_replace8", "dst, data, vals, imm, dst_idx=None, name=None"},
    // nki.language's calls that make a new tile: the older spelling's, without mask= (dtype=None:
    // the operands' dtype, comparisons included)
    {"language", "load", "src, dtype=None"},
    {"language", "store", "dst, value"},
    {"language", "copy", "x, dtype=None"},
    {"language", "matmul", "x, y, transpose_x=False"},
    {"language", "transpose", "x, dtype=None"},
    {"language", "load_transpose2d", "src, dtype=None"},
    {"language", "where", "condition, x, y, dtype=None"},
    {"language", "dropout", "x, rate, dtype=None"},
    {"language", "gather_flattened", "data, indices, !axis=0, dtype=None"},
    {"language", "softmax", "x, axis=-1, dtype=None"},
    {"language", "rms_norm", "x, w, axis, n, epsilon=1e-06, dtype=None, compute_dtype=None"},
    {"language", "all", "x, axis, dtype=None"},
    {"language", "mean", "x, axis, dtype=None, keepdims=False"},
    {"language", "var", "x, axis, dtype=None, !keepdims=False"},
    {"language", "random_seed", "seed"},
};

// The older spelling's element-wise, reduction and activation calls keep their parameters,
// without mask=; today a comparison's dtype=None is its operands' dtype.
bool same_but_mask(const Decl& d) {
  static const char* const kSkip[] = {"loop_reduce", "rand"};
  return d.ns == "language" && std::none_of(std::begin(kSkip), std::end(kSkip), [&](const char* n) { return d.name == n; });
}

// Today's own parameters, by name (their kind wins over a parameter of the older spelling of the
// same name: engine= is an enum today), and kinds for names the older spelling lacks.
const std::map<std::string, Kind>& own_kinds() {
  static const std::map<std::string, Kind> m = {
      {"dst", Kind::tile},           {"accumulate", Kind::flag},   {"pattern", Kind::pattern},
      {"channel_multiplier", Kind::integer}, {"cmp_op", Kind::alu_op}, {"axes", Kind::axes},
      {"reduce_cmd", Kind::integer}, {"reduce_init", Kind::number}, {"reduce_res_negate", Kind::flag},
      {"priority", Kind::any},       {"oob_mode", Kind::any},      {"dge_mode", Kind::any},
      {"engine", Kind::any},         {"name", Kind::any},          {"tile_position", Kind::any},
      {"tile_size", Kind::any},      {"perf_mode", Kind::any},
  };
  return m;
}
const std::map<std::string, Kind>& new_kinds() {
  static const std::map<std::string, Kind> m = {{"axis", Kind::integer},
                                                {"offset", Kind::integer},
                                                {"reduce_op", Kind::alu_op},
                                                {"reduce_res", Kind::tile},
                                                {"keepdims", Kind::flag}};
  return m;
}

std::vector<std::string> split_params(const std::string& sig) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char ch : sig) {
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    if (ch != ' ' || !cur.empty()) cur += ch;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<Param> parse(const Decl& d, const std::string& sig, std::vector<std::string>& must_default) {
  std::vector<Param> out;
  for (std::string p : split_params(sig)) {
    const bool strict = !p.empty() && p[0] == '!';
    if (strict) p.erase(0, 1);
    const size_t eq = p.find('=');
    Param q;
    q.name = p.substr(0, eq);
    q.def = eq == std::string::npos ? "" : p.substr(eq + 1);
    if (const auto own = own_kinds().find(q.name); own != own_kinds().end()) {
      q.kind = own->second;
    } else if (const Param* old = d.param(q.name)) {
      q.kind = old->kind;
    } else if (const auto nk = new_kinds().find(q.name); nk != new_kinds().end()) {
      q.kind = nk->second;
    } else {
      throw ncore::KernelError(fmt::format("internal: today's {}.{} has a parameter '{}' of no known kind", d.ns,
                                           d.name, q.name));
    }
    if (strict) must_default.push_back(q.name);
    out.push_back(std::move(q));
  }
  return out;
}

// ---- the calls whose arguments mean something else today ------------------------------------------

// An access pattern [[step, num], ...] over dst's free elements, with the partition axis first
// (channel_multiplier per partition), as the older spelling's affine expression.
nisa::Affine affine_of(const Tensor& dst, const Value& pattern, int64_t channel_multiplier, int64_t offset,
                       const std::string& call, const Loc& loc) {
  nisa::Affine a;
  a.start = offset;
  a.coeff.push_back(channel_multiplier);
  a.grid.push_back(dst.shape()[0]);
  int64_t n = 1;
  for (const auto& [step, num] : pattern.pattern) {
    if (num <= 0) fail(loc, fmt::format("nisa.{}: a pattern's num must be positive, got [{}, {}]", call, step, num));
    a.coeff.push_back(step);
    a.grid.push_back(num);
    n *= num;
  }
  if (pattern.pattern.empty()) fail(loc, fmt::format("nisa.{}: the pattern is empty", call));
  if (pattern.pattern.size() > 4)
    fail(loc, fmt::format("nisa.{}: the pattern has {} dimensions: at most 4", call, pattern.pattern.size()));
  const int64_t free = dst.shape().elements() / dst.shape()[0];
  if (n != free)
    fail(loc, fmt::format("nisa.{}: the pattern has {} elements per partition, dst {} ({}): they must be equal", call, n,
                          free, dst.shape().str()));
  return a;
}

Tensor lower_iota(Ctx& c) {
  const Tensor dst = *c.dst;
  if (dst.buffer() != BufferKind::sbuf) fail(c.loc, "nisa.iota: dst must be an SBUF tile");
  const nisa::Affine a = affine_of(dst, c.arg("pattern"), c.integer("channel_multiplier"), c.integer("offset"),
                                   "iota", c.loc);
  nisa::iota(dst.reshape(Shape(a.grid), c.loc), a, c.loc);
  return dst;
}

Tensor lower_affine_select(Ctx& c) {
  const Tensor dst = *c.dst;
  const Tensor x = c.tile("on_true_tile");
  const nisa::Affine a = affine_of(dst, c.arg("pattern"), c.integer("channel_multiplier"), c.integer("offset"),
                                   "affine_select", c.loc);
  const AluOp cmp = c.given("cmp_op") ? c.alu("cmp_op") : AluOp::equal;
  nisa::AffinePredicate pred;
  pred.terms.emplace_back(a, cmp);
  const Shape grid(a.grid);
  nisa::affine_select(dst.reshape(grid, c.loc), pred, x.reshape(grid, c.loc), static_cast<float>(c.number("on_false_value")),
                      c.loc);
  return dst;
}

bool is_integer_dtype(Dtype d) {
  const std::string n = to_string(d);
  return n.rfind("int", 0) == 0 || n.rfind("uint", 0) == 0 || n == "bool_";
}

Tensor lower_memset(Ctx& c) {
  const Tensor dst = *c.dst;
  const Value& v = c.arg("value");
  if (is_integer_dtype(dst.dtype()) && (v.scalar_dtype.rfind("float", 0) == 0 || v.number != static_cast<double>(static_cast<int64_t>(v.number))))
    fail(c.loc, fmt::format("nisa.memset: value {} does not match dst's dtype {}: give an integer for an integer tile",
                            v.number, to_string(dst.dtype())));
  nisa::memset(dst, static_cast<float>(v.number), c.loc);
  return dst;
}

// The accumulator commands (nisa.reduce_cmd), by the values nki.isa gives them.
enum ReduceCmd : int64_t { kIdle = 0, kReset = 1, kReduce = 2, kResetReduce = 3, kLoadReduce = 4 };

// The older spelling's declaration `name` run with arguments by name, into the call's dst.
Tensor invoke_named(const char* name, const std::vector<std::pair<const char*, Value>>& args, const Ctx& c) {
  const Decl* d = find("isa", name);
  std::vector<Value> v;
  for (const Param& p : d->params) {
    const auto it = std::find_if(args.begin(), args.end(), [&](const auto& a) { return p.name == a.first; });
    v.push_back(it != args.end() ? it->second : Value::nothing(p.kind));
  }
  Options o;
  o.dst = c.dst;
  o.loc = c.loc;
  return invoke(*d, std::move(v), o);
}

// activation(..., reduce_op=, reduce_res=, reduce_cmd=): with reduce_res, the activation and the
// add-reduce of its results into reduce_res (activation_reduce: the registers reset, reduced and
// read out by the one call); the registers carried from one instruction to the next are not
// modelled, so the other commands are refused.
Tensor lower_activation(Ctx& c) {
  const int64_t cmd = c.given("reduce_cmd") ? c.integer("reduce_cmd") : kIdle;
  const bool reduces = c.alu("reduce_op") != AluOp::bypass;
  if (c.given("reduce_res")) {
    if (cmd != kIdle && cmd != kResetReduce)
      fail(c.loc, "nisa.activation: this reduce_cmd keeps the scalar engine's accumulator registers from one "
                  "instruction to the next, which this model does not have: give reduce_res with "
                  "reduce_cmd=nisa.reduce_cmd.reset_reduce (or idle)");
    return invoke_named("activation_reduce",
                        {{"op", c.arg("op")}, {"data", c.arg("data")},
                         {"reduce_op", reduces ? c.arg("reduce_op") : Value::of_alu(AluOp::add)},
                         {"reduce_res", c.arg("reduce_res")}, {"bias", c.arg("bias")}, {"scale", c.arg("scale")}},
                        c);
  }
  if (cmd != kIdle || reduces)
    fail(c.loc, "nisa.activation: reduce_op or reduce_cmd without reduce_res reduces into the scalar engine's "
                "accumulator registers only, which this model does not have: give reduce_res, a (P, 1) tile");
  return invoke_named("activation", {{"op", c.arg("op")}, {"data", c.arg("data")}, {"bias", c.arg("bias")},
                                     {"scale", c.arg("scale")}},
                      c);
}

// dma_transpose(dst, src, axes=None): the axis orders NKI's DMA transposes (and this model's).
Tensor lower_dma_transpose(Ctx& c) {
  const Tensor src = c.tile("src");
  if (c.given("axes")) {
    static const std::map<size_t, std::vector<int>> kOrders = {{2, {1, 0}}, {3, {2, 1, 0}}, {4, {3, 1, 2, 0}}};
    const auto it = kOrders.find(static_cast<size_t>(src.ndim()));
    const std::vector<int>& axes = c.arg("axes").axes;
    if (it == kOrders.end() || it->second != axes)
      fail(c.loc, fmt::format("nisa.dma_transpose: axes ({}) of a {}-D src: the DMA engines transpose 2-D [1, 0], "
                              "3-D [2, 1, 0] and 4-D [3, 1, 2, 0]",
                              fmt::join(axes, ", "), src.ndim()));
  }
  return invoke_named("dma_transpose", {{"src", c.arg("src")}}, c);
}

// nc_transpose(dst, data): dst has data's dtype (NKI's rule), or is a float32 PSUM tile (what the
// tensor engine writes, as the older spelling's transpose gives). Another dtype (exact in float32)
// lands in a float32 PSUM tile first and a copy casts it.
Tensor lower_nc_transpose(Ctx& c) {
  const Tensor dst = *c.dst;
  const Tensor data = c.tile("data");
  if (dst.buffer() == BufferKind::psum && dst.dtype() == Dtype::float32)
    return invoke_named("nc_transpose", {{"data", c.arg("data")}}, c);
  if (dst.dtype() != data.dtype())
    fail(c.loc, fmt::format("nisa.nc_transpose: dst {} is {}, data {} is {}: dst must have data's dtype (or be a "
                            "float32 PSUM tile)",
                            dst.str(), to_string(dst.dtype()), data.str(), to_string(data.dtype())));
  nisa::tensor_copy(dst, nisa::nc_transpose(data, c.loc), c.loc);
  return dst;
}

// The value a `!name=default` parameter must keep, from its default's text.
bool differs_from_default(const Value& v, const std::string& def) {
  if (v.none) return false;
  static const std::map<std::string, int64_t> kEnums = {
      {"reduce_cmd.idle", kIdle},          {"reduce_cmd.reset", kReset},
      {"reduce_cmd.reduce", kReduce},      {"reduce_cmd.reset_reduce", kResetReduce},
      {"reduce_cmd.load_reduce", kLoadReduce}};
  if (def == "None") return true;
  if (def == "False" || def == "True") return (v.number != 0) != (def == "True");
  if (const auto it = kEnums.find(def); it != kEnums.end()) return v.integer != it->second;
  const double d = std::stod(def);
  return v.kind == Kind::integer ? v.integer != static_cast<int64_t>(d) : v.number != d;
}

}  // namespace

void check_today_strict(const Decl& d, const std::vector<Value>& args, const Loc& loc) {
  for (const std::string& n : d.today_strict) {
    const int i = d.today_index(n);
    const Param& p = d.today[static_cast<size_t>(i)];
    if (differs_from_default(args[static_cast<size_t>(i)], p.def))
      fail(loc, fmt::format("{}.{}: {} other than its default ({}) is not supported by this model",
                            d.ns == "isa" ? "nisa" : "nl", d.name, n, p.def));
  }
}

void attach_today(std::vector<Decl>& decls) {
  std::map<std::string, const Record*> records;
  for (const Record& r : kRecords) records[std::string(r.ns) + "." + r.name] = &r;
  for (Decl& d : decls) {
    std::vector<std::string> strict;
    const auto it = records.find(d.ns + "." + d.name);
    if (it != records.end()) {
      d.today = parse(d, it->second->sig, strict);
    } else if (same_but_mask(d)) {
      for (const Param& p : d.params)
        if (p.name != "mask") d.today.push_back(Param{p.name, p.kind, p.kind == Kind::dtype ? "None" : p.def, p.keyword_only});
    }
    d.today_strict = std::move(strict);
  }
  auto set = [&](const char* name, Lower l) {
    for (Decl& d : decls)
      if (d.ns == "isa" && d.name == name) d.today_lower = l;
  };
  set("iota", lower_iota);
  set("affine_select", lower_affine_select);
  set("memset", lower_memset);
  set("activation", lower_activation);
  set("dma_transpose", lower_dma_transpose);
  set("nc_transpose", lower_nc_transpose);
}

}  // namespace nki::calls
