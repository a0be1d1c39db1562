// Loops traced once (see docs/nki-python.md, "Loops traced once"). An nl.affine_range or sequential_range
// body is traced by Python for its first iteration only, with a symbolic loop index (Sym): the
// calls into the tracer run for real (so that iteration is exactly the unrolled trace's) and
// are recorded, with symbolic arguments kept as expressions in the loop indices and tensors made
// in the body as references to the recording's own results. When the Python body ends, the
// recording is replayed here for the other iterations, calling the same C++ API in the same
// order as the unrolled trace would, so the Program is the same.
//
// A body that needs a concrete value of its index that differs between iterations (Python
// control flow on it, a list indexed by it, min() of it, a tile scaled by it) gets the first
// iteration's value, and its loop falls back to today's unrolled trace from its second
// iteration on; so does one whose first iteration made an allocation decision that depends on
// when Python drops tensors (nki::lifetime_events), or made instructions, tensors or loops that
// no recorded call accounts for (nki::trace_events: a binding that bypassed the recorder). The
// first iteration is the same either way. Every binding that makes or uses tensors goes through
// Recorder::tensor_call or void_call (native.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nki/nki.hpp"

namespace loops {

namespace py = pybind11;
using nki::Tensor;

// --- symbolic integers --------------------------------------------------------------------------

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

// A loop index (its value, not its iteration number), floor(e / d) or e mod d (d > 0).
struct Atom {
  enum Kind : uint8_t { var, div, mod };
  Kind kind = var;
  int v = -1;
  ExprP e;
  int64_t d = 1;
  bool operator==(const Atom& o) const { return kind == o.kind && v == o.v && e == o.e && d == o.d; }
};

// c + sum of coefficient * atom.
struct Expr {
  int64_t c = 0;
  std::vector<std::pair<int64_t, Atom>> terms;  // no zero coefficients, no atom twice
};

struct LoopRec;
// A loop index: start + step * k for k in [0, n). While its body is traced its value is start;
// once the loop has ended it is the last iteration's, as a Python loop variable's.
struct VarInfo {
  int64_t start = 0, step = 1, n = 1;
  int64_t now = 0;
  bool ended = false;
  LoopRec* loop = nullptr;  // while the loop is being traced
};
std::vector<VarInfo>& vars();  // of this thread's traces

int64_t floordiv(int64_t a, int64_t d);
int64_t floormod(int64_t a, int64_t d);
int64_t eval(const Expr& x, const int64_t* vals);
// x's value now: in the iteration Python is tracing, or after its loops.
int64_t value(const Expr& x);
// The smallest and largest value over every iteration of the loops involved.
std::pair<int64_t, int64_t> bounds(const Expr& x);
// The loops whose indices x involves cannot be replayed: they fall back to Python after their
// first iteration.
void poison(const Expr& x);

// The Python type of a symbolic index (nl.affine_range's loop variable and arithmetic on it).
struct Sym {
  ExprP e;
};

// x as a Python object: an int when it does not depend on any loop index, else a Sym.
py::object wrap(ExprP x);
// An int or Sym argument as an expression (nullopt for anything else).
std::optional<ExprP> as_expr(py::handle h);
// The value of x, the same in every iteration, or the traced iteration's (poisoning the loops).
int64_t concrete(const Expr& x);
bool same_expr(const Expr& a, const Expr& b);
void bind_sym(py::module_& m);

// --- recording and replay -----------------------------------------------------------------------

// A recorded tensor is held weakly while Python traces (Python decides when tiles die) and
// strongly while the recording is replayed.
struct Slot {
  Tensor strong;
  std::weak_ptr<nki::detail::Storage> weak;
  nki::detail::View view;
};

struct Env {
  std::vector<Slot> slots;
  std::vector<int64_t> vals;  // the loop indices' values, by variable
  Tensor get(int32_t s) const {
    const Slot& x = slots[static_cast<size_t>(s)];
    return x.strong.valid() ? x.strong : Tensor(x.weak.lock(), x.view);
  }
};

// One argument of a recorded call.
struct Ref {
  enum Kind : uint8_t { none, tensor, integer, real };
  Kind kind = none;
  int32_t slot = -1;  // a tensor the recording made (else `t`, a tensor made before it)
  Tensor t;
  ExprP e;  // a symbolic integer (else `i`)
  int64_t i = 0;
  double d = 0;
};

// The arguments of a call, resolved for the traced iteration (env null) or a replayed one.
class Args {
 public:
  Args(const std::vector<Ref>& refs, const Env* env) : r_(refs), env_(env) {}
  Tensor t(size_t k) const {
    const Ref& r = r_[k];
    return env_ && r.slot >= 0 ? env_->get(r.slot) : r.t;
  }
  std::optional<Tensor> ot(size_t k) const {
    if (r_[k].kind == Ref::none) return std::nullopt;
    return t(k);
  }
  int64_t i(size_t k) const {
    const Ref& r = r_[k];
    return env_ && r.e ? eval(*r.e, env_->vals.data()) : r.i;
  }
  Ref::Kind kind(size_t k) const { return r_[k].kind; }
  double real(size_t k) const { return r_[k].d; }
  // A tensor_scalar/activation operand: none, a number or a tile.
  nki::Operand operand(size_t k) const;
  size_t size() const { return r_.size(); }

 private:
  const std::vector<Ref>& r_;
  const Env* env_;
};

using Step = std::function<void(Env&)>;

// A loop seen while recording: traced once and replayed (symbolic and not poisoned), or
// unrolled by Python (static_range, or a fallback), one recorded body per iteration.
struct LoopRec {
  LoopRec* parent = nullptr;
  int64_t n = 0;
  bool sequential = false;
  nki::Loc loc;
  bool symbolic = false;
  bool poisoned = false;
  bool finished = false;  // the traced iteration ended normally
  int64_t iters = 0;      // iterations begun (traced, replayed or Python's)
  int var = -1;
  int64_t start = 0, step = 1;
  std::vector<std::vector<Step>> bodies;
  int32_t slot_begin = 0;
  uint64_t lifetime0 = 0;
  uint64_t events0 = 0, attributed0 = 0;  // nki::trace_events() and Recorder::attributed at its start
  bool replays_body0() const { return symbolic && !poisoned; }
};

class Recorder {
 public:
  LoopRec* cur = nullptr;  // the loop whose body is being recorded, innermost
  Env env;
  uint64_t generation = 0;  // how many times reset
  // The tracer's events (nki::trace_events) made by recorded calls and replays. A loop whose
  // traced iteration made others (a call that bypassed the recorder) falls back to Python.
  uint64_t attributed = 0;

  bool active() const { return cur != nullptr; }
  Ref capture(py::handle h) const;
  void add(Step s) {
    if (cur->bodies.empty()) cur->bodies.emplace_back();
    cur->bodies.back().push_back(std::move(s));
  }
  // Runs fn (Tensor(const Args&)) for the traced iteration and records it.
  template <class Fn>
  py::object tensor_call(const Fn& fn, std::vector<Ref> refs) {
    const uint64_t e0 = cur ? nki::trace_events() : 0;
    py::object o = py::cast(fn(Args(refs, nullptr)));
    if (cur) {
      attributed += nki::trace_events() - e0;
      const int32_t slot = new_slot(o);
      strip(refs);
      add([fn, refs = std::move(refs), slot](Env& e) {
        Tensor r = fn(Args(refs, &e));
        e.slots[static_cast<size_t>(slot)].strong = std::move(r);
      });
    }
    return o;
  }
  template <class Fn>
  void void_call(const Fn& fn, std::vector<Ref> refs) {
    const uint64_t e0 = cur ? nki::trace_events() : 0;
    fn(Args(refs, nullptr));
    if (cur) {
      attributed += nki::trace_events() - e0;
      strip(refs);
      add([fn, refs = std::move(refs)](Env& e) { fn(Args(refs, &e)); });
    }
  }
  // Every loop being recorded falls back to Python after its traced iteration.
  void poison_all() {
    for (LoopRec* l = cur; l; l = l->parent) l->poisoned = true;
  }
  bool is_slot(py::handle h) const { return cur && slot_of_.count(h.ptr()); }
  // How the view `o` (just returned by a recorded index call) was made: its arguments.
  void note_view(const py::object& o, std::vector<Ref> refs, std::vector<uint8_t> kinds);
  // a and b are views made the same way (of the same tensor, with equal index expressions):
  // the same view in every iteration.
  bool same_recipe(py::handle a, py::handle b) const;
  void forget_from(int32_t slot_begin);
  void reset();

 private:
  int32_t new_slot(const py::object& o);
  static void strip(std::vector<Ref>& refs) {
    for (Ref& r : refs)
      if (r.slot >= 0) r.t = Tensor();
  }
  std::unordered_map<PyObject*, int32_t> slot_of_;
  struct Recipe {
    std::vector<Ref> refs;
    std::vector<uint8_t> kinds;
  };
  std::unordered_map<int32_t, Recipe> recipes_;
};

Recorder& recorder();  // this thread's

// A loop of nl.affine_range / sequential_range / static_range, driven by the Python iterator:
// enter + next (unrolled), or begin_symbolic + finish_symbolic (traced once), then exit (also on
// break and on errors).
class PyRange {
 public:
  PyRange(int64_t n, bool sequential, const nki::Loc& loc);
  void enter();
  py::object next();
  py::object begin_symbolic(int64_t start, int64_t step);
  bool finish_symbolic();
  void exit();

 private:
  void begin();  // the C++ Range's begin (its loop_enter counted as the enclosing recording's)
  void open_rec(bool symbolic);
  std::unique_ptr<nki::Range> r_;
  std::optional<nki::Range::iterator> it_;
  int64_t n_;
  bool sequential_;
  nki::Loc loc_;
  std::shared_ptr<LoopRec> rec_;
  uint64_t generation_ = 0;  // the recorder's when the loop began
};

void bind_loops(py::module_& m);

}  // namespace loops
