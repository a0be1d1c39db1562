// The NKI call surface (nki/calls.hpp) in Python: the declarations, and one entry point that runs
// any call. The Python modules (neuronxcc.nki.isa, neuronxcc.nki.language) build their functions
// from `calls()` and convert each argument to the plain form below, by its parameter's kind;
// `invoke` turns them into calls::Values and runs calls::invoke, through the loop recorder
// (loops.hpp) like every binding that makes or uses tensors: tiles and integers (which may be
// symbolic loop indices) are captured as its references, the rest by value, so a replayed
// iteration rebuilds the call from its own values.
//
// The plain forms, by kind:
//   tile       a Tensor; ("deferred", base Tensor, [offset...], [[coeff...]...], [grid...], error); None
//   operand    a Tensor; (number or Sym, scalar dtype name); None
//   alu_op, act_func, dtype   a name, or None
//   flag       a bool; number a float; integer an int or Sym; axes a list of ints
//   affine     (start int or Sym, [coeff per grid axis], [grid sizes])
//   predicate  [(affine, comparison name), ...]
//   shape      a list of ints; pattern a list of [step, num] pairs; any anything (ignored)
// and mask: None, False (keeps nothing), or [({axis: coeff}, {axis: size}, start int or Sym,
// comparison name), ...] over the instruction's index axes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include "loops.hpp"
#include "ncore/error.hpp"
#include "nki/calls.hpp"

namespace py = pybind11;
using loops::Args;
using loops::Ref;
using nki::Tensor;
namespace calls = nki::calls;

namespace {

// How to rebuild one argument from the recorded references: its kind, the static part, and where
// its references start.
struct ArgPlan {
  calls::Kind kind;
  int form = 0;    // tile: 0 none, 1 tensor, 2 deferred; operand: 0 none, 1 tensor, 2 scalar
  size_t ref = 0;  // first reference
  size_t nrefs = 0;
  calls::Value fixed;  // the value, for kinds captured by value
  std::string text;    // operand: the scalar's dtype; deferred: the error message
  std::vector<std::vector<int64_t>> coeff;
  std::vector<int64_t> grid;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> terms;  // predicate: coeff, grid
  std::vector<nki::AluOp> cmps;                                              // predicate: comparison
};

struct MaskPlan {
  int form = 0;                      // 0 none, 1 keeps nothing, 2 terms
  std::vector<nki::MaskTerm> terms;  // starts filled from the references
  size_t ref = 0;
};

struct Plan {
  const calls::Decl* decl = nullptr;
  std::vector<ArgPlan> args;
  MaskPlan mask;
  bool has_dst = false;
  std::optional<bool> accumulate;
  bool split = false;
  bool today = false;  // args in today's spelling (calls::invoke_today)
  nki::Loc loc;
};

std::optional<nki::Dtype> opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return calls::dtype_of(h.cast<std::string>());
}

// The plain argument h of parameter p, as a plan (references appended to refs).
ArgPlan plan_arg(const calls::Param& p, py::handle h, std::vector<Ref>& refs, const loops::Recorder& R) {
  ArgPlan a;
  a.kind = p.kind;
  a.ref = refs.size();
  auto take = [&](py::handle x) {
    refs.push_back(R.capture(x));
    ++a.nrefs;
  };
  switch (p.kind) {
    case calls::Kind::tile:
    case calls::Kind::operand: {
      if (h.is_none()) break;
      if (!py::isinstance<py::tuple>(h)) {  // a tile or a number
        a.form = 1;
        take(h);
        break;
      }
      const auto t = h.cast<py::tuple>();
      a.form = 2;
      if (p.kind == calls::Kind::operand) {  // (value, text)
        take(t[0]);
        a.text = t[1].cast<std::string>();
        break;
      }
      // a deferred view: (_, base, index tiles, coefficients, grid, text)
      take(t[1]);
      for (const auto& o : t[2].cast<py::list>()) take(o);
      a.coeff = t[3].cast<std::vector<std::vector<int64_t>>>();
      a.grid = t[4].cast<std::vector<int64_t>>();
      a.text = t[5].cast<std::string>();
      break;
    }
    case calls::Kind::alu_op:
      a.fixed = h.is_none() ? calls::Value::of_alu(nki::AluOp::bypass)
                            : calls::Value::of_alu(calls::alu_of(h.cast<std::string>()));
      break;
    case calls::Kind::act_func:
      a.fixed =
          h.is_none() ? calls::Value::nothing(p.kind) : calls::Value::of_act(calls::act_of(h.cast<std::string>()));
      break;
    case calls::Kind::dtype:
      a.fixed = calls::Value::of_dtype(opt_dtype(h));
      break;
    case calls::Kind::flag:
      a.fixed = h.is_none() ? calls::Value::nothing(p.kind) : calls::Value::of_flag(h.cast<bool>());
      break;
    case calls::Kind::number:
      a.fixed = h.is_none() ? calls::Value::nothing(p.kind) : calls::Value::of_number(h.cast<double>());
      break;
    case calls::Kind::integer:
      if (h.is_none()) {
        a.fixed = calls::Value::nothing(p.kind);
        break;
      }
      a.form = 1;
      take(h);
      break;
    case calls::Kind::axes:
      a.fixed = h.is_none() ? calls::Value::nothing(p.kind) : calls::Value::of_axes(h.cast<std::vector<int>>());
      break;
    case calls::Kind::affine: {
      if (h.is_none()) {
        a.fixed = calls::Value::nothing(p.kind);
        break;
      }
      const auto t = h.cast<py::tuple>();
      a.form = 1;
      take(t[0]);
      a.terms.emplace_back(t[1].cast<std::vector<int64_t>>(), t[2].cast<std::vector<int64_t>>());
      break;
    }
    case calls::Kind::predicate: {
      if (h.is_none()) {
        a.fixed = calls::Value::nothing(p.kind);
        break;
      }
      a.form = 1;
      for (const auto& x : h.cast<py::list>()) {
        const auto term = x.cast<py::tuple>();
        const auto e = term[0].cast<py::tuple>();
        take(e[0]);
        a.terms.emplace_back(e[1].cast<std::vector<int64_t>>(), e[2].cast<std::vector<int64_t>>());
        a.cmps.push_back(calls::alu_of(term[1].cast<std::string>()));
      }
      break;
    }
    case calls::Kind::shape:
      a.fixed = h.is_none() ? calls::Value::nothing(p.kind) : calls::Value::of_shape(h.cast<std::vector<int64_t>>());
      break;
    case calls::Kind::pattern: {
      if (h.is_none()) {
        a.fixed = calls::Value::nothing(p.kind);
        break;
      }
      std::vector<std::pair<int64_t, int64_t>> pat;
      for (const auto& x : h.cast<std::vector<std::vector<int64_t>>>()) {
        if (x.size() != 2) throw ncore::KernelError("an access pattern is a list of [step, num] pairs");
        pat.emplace_back(x[0], x[1]);
      }
      a.fixed = calls::Value::of_pattern(std::move(pat));
      break;
    }
    case calls::Kind::any:
      a.fixed = calls::Value::nothing(p.kind);
      break;
  }
  return a;
}

MaskPlan plan_mask(py::handle h, std::vector<Ref>& refs, const loops::Recorder& R) {
  MaskPlan m;
  m.ref = refs.size();
  if (h.is_none()) return m;
  if (py::isinstance<py::bool_>(h)) {
    m.form = h.cast<bool>() ? 0 : 1;
    return m;
  }
  m.form = 2;
  for (const auto& x : h.cast<py::list>()) {
    const auto t = x.cast<py::tuple>();
    nki::MaskTerm term;
    term.coeff = t[0].cast<std::map<int, int64_t>>();
    term.sizes = t[1].cast<std::map<int, int64_t>>();
    refs.push_back(R.capture(t[2]));
    term.cmp = calls::alu_of(t[3].cast<std::string>());
    m.terms.push_back(std::move(term));
  }
  return m;
}

calls::Value rebuild(const ArgPlan& a, const Args& r) {
  switch (a.kind) {
    case calls::Kind::tile:
      if (a.form == 0) return calls::Value::nothing(a.kind);
      if (a.form == 1) return calls::Value::of_tile(nki::TileArg(r.t(a.ref)));
      {
        nki::Deferred d;
        d.base = r.t(a.ref);
        for (size_t k = 1; k < a.nrefs; ++k) d.offset.push_back(r.i(a.ref + k));
        d.coeff = a.coeff;
        d.grid = a.grid;
        d.error = a.text;
        return calls::Value::of_tile(nki::TileArg(std::move(d)));
      }
    case calls::Kind::operand:
      if (a.form == 0) return calls::Value::nothing(a.kind);
      if (a.form == 1) {
        calls::Value v = calls::Value::of_tile(nki::TileArg(r.t(a.ref)));
        v.kind = calls::Kind::operand;
        return v;
      }
      return calls::Value::of_scalar(r.kind(a.ref) == Ref::integer ? static_cast<double>(r.i(a.ref)) : r.real(a.ref),
                                     a.text);
    case calls::Kind::integer:
      if (a.form == 0) return a.fixed;
      return calls::Value::of_integer(r.i(a.ref));
    case calls::Kind::affine:
      if (a.form == 0) return a.fixed;
      return calls::Value::of_affine(nki::nisa::Affine{r.i(a.ref), a.terms[0].first, a.terms[0].second});
    case calls::Kind::predicate: {
      if (a.form == 0) return a.fixed;
      nki::nisa::AffinePredicate p;
      for (size_t k = 0; k < a.terms.size(); ++k)
        p.terms.emplace_back(nki::nisa::Affine{r.i(a.ref + k), a.terms[k].first, a.terms[k].second}, a.cmps[k]);
      return calls::Value::of_predicate(std::move(p));
    }
    default:
      return a.fixed;
  }
}

Tensor run(const Plan& p, const Args& r) {
  std::vector<calls::Value> vals;
  vals.reserve(p.args.size());
  for (const ArgPlan& a : p.args) vals.push_back(rebuild(a, r));
  calls::Options o;
  o.loc = p.loc;
  o.split = p.split;
  o.accumulate = p.accumulate;
  std::optional<Tensor> dst;
  if (p.has_dst) {
    dst = r.t(0);
    o.dst = &*dst;
  }
  if (p.mask.form == 1) {
    o.mask = nki::Mask::nothing(p.decl->name, p.loc);
  } else if (p.mask.form == 2) {
    std::vector<nki::MaskTerm> terms = p.mask.terms;
    for (size_t k = 0; k < terms.size(); ++k) terms[k].start = r.i(p.mask.ref + k);
    o.mask = nki::Mask::of(terms, p.decl->name, p.loc);
  }
  if (p.today) return calls::invoke_today(*p.decl, std::move(vals), o);
  return calls::invoke(*p.decl, std::move(vals), o);
}

py::dict param_dict(const calls::Param& p) {
  py::dict d;
  d["name"] = p.name;
  d["kind"] = calls::to_string(p.kind);
  d["default"] = p.def;
  d["keyword_only"] = p.keyword_only;
  return d;
}

}  // namespace

void bind_calls(py::module_& m) {
  loops::Recorder& R = loops::recorder();
  m.def(
      "calls",
      [] {
        py::list out;
        for (const calls::Decl& d : calls::all()) {
          py::dict x;
          x["ns"] = d.ns;
          x["name"] = d.name;
          x["doc"] = d.doc;
          py::list params, today;
          for (const calls::Param& p : d.params) params.append(param_dict(p));
          for (const calls::Param& p : d.today) today.append(param_dict(p));
          x["params"] = params;
          x["today"] = today;
          x["engine"] = ncore::isa::to_string(d.engine);
          x["mask"] = d.mask == calls::MaskRule::boxes     ? "boxes"
                      : d.mask == calls::MaskRule::one_box ? "one_box"
                      : d.mask == calls::MaskRule::whole   ? "whole"
                                                           : "none";
          x["splits"] = d.splits;
          x["result"] = d.result;
          x["psum_result"] = d.psum_result;
          out.append(x);
        }
        return out;
      },
      "The NKI call surface's declarations (kernels/nki/include/nki/calls.hpp): ns, name, doc, params "
      "(name, kind, default as NKI writes it, keyword_only), today (the same, in today's spelling; empty: not in "
      "today's NKI), engine, mask rule, splits, result, psum_result.");
  m.def(
      "invoke",
      [&R](const std::string& ns, const std::string& name, py::handle dst, std::optional<bool> accumulate,
           py::handle mask, bool split, const py::list& args, const nki::Loc& at, bool today) -> py::object {
        const calls::Decl* d = calls::find(ns, name);
        if (!d) throw ncore::KernelError(fmt::format("nki.{} has no call '{}'", ns, name));
        const std::vector<calls::Param>& params = today ? d->today : d->params;
        if (args.size() > params.size())
          throw ncore::KernelError(fmt::format("{}.{} takes {} arguments, got {}", ns, name, params.size(), args.size()));
        auto plan = std::make_shared<Plan>();
        plan->decl = d;
        plan->accumulate = accumulate;
        plan->split = split;
        plan->today = today;
        plan->loc = at;
        std::vector<Ref> refs{R.capture(dst)};
        plan->has_dst = !dst.is_none();
        for (size_t i = 0; i < params.size(); ++i) {
          const py::handle h = i < args.size() ? py::handle(args[i]) : py::handle(Py_None);
          plan->args.push_back(plan_arg(params[i], h, refs, R));
        }
        plan->mask = plan_mask(mask, refs, R);
        if (!d->result) {
          R.void_call([plan](const Args& a) { run(*plan, a); }, std::move(refs));
          return py::none();
        }
        return R.tensor_call([plan](const Args& a) { return run(*plan, a); }, std::move(refs));
      },
      py::arg("ns"), py::arg("name"), py::arg("dst"), py::arg("accumulate"), py::arg("mask"), py::arg("split"),
      py::arg("args"), py::arg("loc"), py::arg("today") = false,
      "Runs the call ns.name (arguments in parameter order, in the plain forms call_binding.cpp lists), into dst "
      "when given, under mask, tiled when split; returns its result tile (None for a call without one). today: "
      "the arguments are in today's spelling (dst among them), run by calls::invoke_today.");
}
