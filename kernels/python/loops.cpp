// Loops traced once: symbolic indices, recording and replay. See loops.hpp.
#include "loops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace loops {

std::vector<VarInfo>& vars() {
  static thread_local std::vector<VarInfo> v;
  return v;
}

int64_t floordiv(int64_t a, int64_t d) {
  const int64_t q = a / d;
  return (a % d != 0 && ((a < 0) != (d < 0))) ? q - 1 : q;
}

int64_t floormod(int64_t a, int64_t d) { return a - floordiv(a, d) * d; }

namespace {

int64_t atom_val(const Atom& a, const int64_t* vals) {
  switch (a.kind) {
    case Atom::var: return vals[a.v];
    case Atom::div: return floordiv(eval(*a.e, vals), a.d);
    case Atom::mod: return floormod(eval(*a.e, vals), a.d);
  }
  return 0;
}

std::pair<int64_t, int64_t> atom_bounds(const Atom& a) {
  if (a.kind == Atom::var) {
    const VarInfo& v = vars()[static_cast<size_t>(a.v)];
    if (v.ended) return {v.now, v.now};
    const int64_t last = v.start + v.step * std::max<int64_t>(0, v.n - 1);
    return {std::min(v.start, last), std::max(v.start, last)};
  }
  const auto [lo, hi] = bounds(*a.e);
  if (a.kind == Atom::div) return {floordiv(lo, a.d), floordiv(hi, a.d)};
  if (floordiv(lo, a.d) == floordiv(hi, a.d)) return {floormod(lo, a.d), floormod(hi, a.d)};
  return {0, a.d - 1};
}

int64_t atom_now(const Atom& a) {
  if (a.kind == Atom::var) return vars()[static_cast<size_t>(a.v)].now;
  return a.kind == Atom::div ? floordiv(value(*a.e), a.d) : floormod(value(*a.e), a.d);
}

ExprP make(Expr x) { return std::make_shared<const Expr>(std::move(x)); }

ExprP constant(int64_t c) {
  Expr x;
  x.c = c;
  return make(std::move(x));
}

ExprP add(const Expr& a, const Expr& b, int64_t kb = 1) {
  Expr x;
  x.c = a.c + kb * b.c;
  x.terms = a.terms;
  for (const auto& [k, at] : b.terms) {
    auto it = std::find_if(x.terms.begin(), x.terms.end(), [&](const auto& t) { return t.second == at; });
    if (it == x.terms.end()) x.terms.emplace_back(kb * k, at);
    else it->first += kb * k;
  }
  x.terms.erase(std::remove_if(x.terms.begin(), x.terms.end(), [](const auto& t) { return t.first == 0; }),
                x.terms.end());
  return make(std::move(x));
}

ExprP scale(const Expr& a, int64_t k) {
  if (k == 0) return constant(0);
  Expr x;
  x.c = a.c * k;
  for (const auto& [c, at] : a.terms) x.terms.emplace_back(c * k, at);
  return make(std::move(x));
}

bool divisible(const Expr& a, int64_t d) {
  for (const auto& t : a.terms)
    if (t.first % d != 0) return false;
  return true;
}

// a // d and a % d for d > 0: exact when every coefficient is a multiple of d, else an atom.
ExprP div_mod(const ExprP& a, int64_t d, bool mod) {
  if (divisible(*a, d)) {
    if (mod) return constant(floormod(a->c, d));
    Expr x;
    x.c = floordiv(a->c, d);
    for (const auto& [c, at] : a->terms) x.terms.emplace_back(c / d, at);
    return make(std::move(x));
  }
  Expr x;
  Atom at;
  at.kind = mod ? Atom::mod : Atom::div;
  at.e = a;
  at.d = d;
  x.terms.emplace_back(1, at);
  return make(std::move(x));
}

ExprP var_expr(int v) {
  Expr x;
  Atom at;
  at.v = v;
  x.terms.emplace_back(1, at);
  return make(std::move(x));
}

}  // namespace

int64_t eval(const Expr& x, const int64_t* vals) {
  int64_t r = x.c;
  for (const auto& [k, a] : x.terms) r += k * atom_val(a, vals);
  return r;
}

int64_t value(const Expr& x) {
  int64_t r = x.c;
  for (const auto& [k, a] : x.terms) r += k * atom_now(a);
  return r;
}

std::pair<int64_t, int64_t> bounds(const Expr& x) {
  int64_t lo = x.c, hi = x.c;
  for (const auto& [k, a] : x.terms) {
    const auto [alo, ahi] = atom_bounds(a);
    lo += k >= 0 ? k * alo : k * ahi;
    hi += k >= 0 ? k * ahi : k * alo;
  }
  return {lo, hi};
}

void poison(const Expr& x) {
  for (const auto& t : x.terms) {
    const Atom& a = t.second;
    if (a.kind != Atom::var) {
      poison(*a.e);
    } else if (LoopRec* l = vars()[static_cast<size_t>(a.v)].loop) {
      l->poisoned = true;
    }
  }
}

bool same_expr(const Expr& a, const Expr& b) {
  if (&a == &b) return true;
  if (a.c != b.c || a.terms.size() != b.terms.size()) return false;
  for (size_t k = 0; k < a.terms.size(); ++k) {
    const auto &[ca, x] = a.terms[k];
    const auto &[cb, y] = b.terms[k];
    if (ca != cb || x.kind != y.kind || x.v != y.v || x.d != y.d) return false;
    if (x.e != y.e && (!x.e || !y.e || !same_expr(*x.e, *y.e))) return false;
  }
  return true;
}

int64_t concrete(const Expr& x) {
  const auto [lo, hi] = bounds(x);
  if (lo == hi) return lo;
  poison(x);
  return value(x);
}

py::object wrap(ExprP x) {
  if (x->terms.empty()) return py::int_(x->c);
  return py::cast(Sym{std::move(x)});
}

std::optional<ExprP> as_expr(py::handle h) {
  if (py::isinstance<Sym>(h)) return h.cast<const Sym&>().e;
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())))
    return constant(py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()))));
  return std::nullopt;
}

namespace {

// A comparison of a and b (op: <, <=, ==, !=, >, >=) decided for every iteration when it can
// be, else for the traced one (poisoning the loops involved).
bool compare(const Expr& a, const Expr& b, int op) {
  const ExprP d = add(a, b, -1);
  const auto [lo, hi] = bounds(*d);
  auto holds = [op](int64_t v) {
    switch (op) {
      case Py_LT: return v < 0;
      case Py_LE: return v <= 0;
      case Py_EQ: return v == 0;
      case Py_NE: return v != 0;
      case Py_GT: return v > 0;
      default: return v >= 0;
    }
  };
  const bool l = holds(lo), h = holds(hi);
  // Monotone in v for the order comparisons; == and != hold everywhere only on a point.
  if (l == h && (lo == hi || (op != Py_EQ && op != Py_NE))) return l;
  if ((op == Py_EQ && (lo > 0 || hi < 0))) return false;
  if ((op == Py_NE && (lo > 0 || hi < 0))) return true;
  poison(*d);
  return holds(value(*d));
}

// The traced value of a Sym in arithmetic with a non-integer (a float): Python's own result.
py::object with_number(const Sym& s, py::handle other, PyObject* (*op)(PyObject*, PyObject*), bool reflected) {
  py::int_ v(concrete(*s.e));
  PyObject* r = reflected ? op(other.ptr(), v.ptr()) : op(v.ptr(), other.ptr());
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

template <class F>
py::object binary(const Sym& s, py::handle other, PyObject* (*op)(PyObject*, PyObject*), bool reflected, F f) {
  if (auto o = as_expr(other)) return wrap(reflected ? f(**o, *s.e) : f(*s.e, **o));
  if (PyFloat_Check(other.ptr())) return with_number(s, other, op, reflected);
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

ExprP times(const Expr& a, const Expr& b) {
  if (a.terms.empty()) return scale(b, a.c);
  if (b.terms.empty()) return scale(a, b.c);
  return constant(concrete(a) * concrete(b));  // not affine: the traced values
}

ExprP divide(const Expr& a, const Expr& b, bool mod) {
  const int64_t d = concrete(b);
  if (d == 0) throw py::value_error(mod ? "integer modulo by zero" : "integer division by zero");
  if (d < 0) {
    const int64_t v = concrete(a);
    return constant(mod ? floormod(v, d) : floordiv(v, d));
  }
  auto p = std::make_shared<const Expr>(a);
  return div_mod(p, d, mod);
}

}  // namespace

void bind_sym(py::module_& m) {
  using E = const Expr&;
  py::class_<Sym>(m, "Sym", "A loop index of nl.affine_range/sequential_range traced once, or arithmetic on it")
      .def("__add__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Add, false, [](E a, E b) { return add(a, b); }); })
      .def("__radd__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Add, true, [](E a, E b) { return add(a, b); }); })
      .def("__sub__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Subtract, false, [](E a, E b) { return add(a, b, -1); }); })
      .def("__rsub__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Subtract, true, [](E a, E b) { return add(a, b, -1); }); })
      .def("__mul__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Multiply, false, times); })
      .def("__rmul__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Multiply, true, times); })
      .def("__floordiv__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_FloorDivide, false, [](E a, E b) { return divide(a, b, false); }); })
      .def("__rfloordiv__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_FloorDivide, true, [](E a, E b) { return divide(a, b, false); }); })
      .def("__mod__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Remainder, false, [](E a, E b) { return divide(a, b, true); }); })
      .def("__rmod__", [](const Sym& s, py::handle o) { return binary(s, o, PyNumber_Remainder, true, [](E a, E b) { return divide(a, b, true); }); })
      .def("__truediv__", [](const Sym& s, py::handle o) { return with_number(s, o, PyNumber_TrueDivide, false); })
      .def("__rtruediv__", [](const Sym& s, py::handle o) { return with_number(s, o, PyNumber_TrueDivide, true); })
      .def("__neg__", [](const Sym& s) { return wrap(scale(*s.e, -1)); })
      .def("__pos__", [](const Sym& s) { return wrap(s.e); })
      .def("__abs__", [](const Sym& s) {
        const auto [lo, hi] = bounds(*s.e);
        if (lo >= 0) return wrap(s.e);
        if (hi <= 0) return wrap(scale(*s.e, -1));
        return py::object(py::int_(std::llabs(concrete(*s.e))));
      })
      .def("__int__", [](const Sym& s) { return concrete(*s.e); })
      .def("__index__", [](const Sym& s) { return concrete(*s.e); })
      .def("__float__", [](const Sym& s) { return static_cast<double>(concrete(*s.e)); })
      .def("__bool__", [](const Sym& s) { return concrete(*s.e) != 0; })
      .def("__hash__", [](const Sym& s) { return py::hash(py::int_(concrete(*s.e))); })
      .def("__repr__", [](const Sym& s) { return "<loop index expression, " + std::to_string(value(*s.e)) + " in the traced iteration>"; });
  py::object cls = m.attr("Sym");
  const std::pair<const char*, int> cmps[] = {{"__lt__", Py_LT}, {"__le__", Py_LE}, {"__eq__", Py_EQ},
                                              {"__ne__", Py_NE}, {"__gt__", Py_GT}, {"__ge__", Py_GE}};
  for (const auto& [name, op] : cmps) {
    const int o = op;
    cls.attr(name) = py::cpp_function(
        [o](const Sym& s, py::handle other) -> py::object {
          if (auto x = as_expr(other)) return py::bool_(compare(*s.e, **x, o));
          if (PyFloat_Check(other.ptr())) {
            py::int_ v(concrete(*s.e));
            return py::reinterpret_steal<py::object>(PyObject_RichCompare(v.ptr(), other.ptr(), o));
          }
          return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        },
        py::is_method(cls));
  }
}

// --- recording ----------------------------------------------------------------------------------

nki::Operand Args::operand(size_t k) const {
  switch (r_[k].kind) {
    case Ref::none: return {};
    case Ref::tensor: return nki::Operand(t(k));
    case Ref::integer: return nki::Operand(static_cast<double>(i(k)));
    case Ref::real: return nki::Operand(r_[k].d);
  }
  return {};
}

Recorder& recorder() {
  static thread_local auto* r = new Recorder;  // never destroyed: it may hold tensors at the interpreter's teardown
  return *r;
}

Ref Recorder::capture(py::handle h) const {
  Ref r;
  if (h.is_none()) return r;
  if (py::isinstance<Tensor>(h)) {
    r.kind = Ref::tensor;
    r.t = h.cast<const Tensor&>();
    if (cur) {
      auto it = slot_of_.find(h.ptr());
      if (it != slot_of_.end()) r.slot = it->second;
    }
    return r;
  }
  if (py::isinstance<Sym>(h)) {
    r.kind = Ref::integer;
    r.e = h.cast<const Sym&>().e;
    r.i = value(*r.e);
    return r;
  }
  if (PyFloat_Check(h.ptr())) {
    r.kind = Ref::real;
    r.d = h.cast<double>();
    return r;
  }
  r.kind = Ref::integer;
  r.i = h.cast<int64_t>();
  return r;
}

int32_t Recorder::new_slot(const py::object& o) {
  const auto slot = static_cast<int32_t>(env.slots.size());
  Slot s;
  const Tensor& t = o.cast<const Tensor&>();
  s.weak = t.storage();
  s.view = t.view();
  env.slots.push_back(std::move(s));
  slot_of_[o.ptr()] = slot;
  return slot;
}

void Recorder::note_view(const py::object& o, std::vector<Ref> refs, std::vector<uint8_t> kinds) {
  const auto it = slot_of_.find(o.ptr());
  if (it == slot_of_.end()) return;
  for (Ref& r : refs)
    if (r.slot >= 0) r.t = Tensor();  // held by Python alone while it traces
  recipes_[it->second] = Recipe{std::move(refs), std::move(kinds)};
}

namespace {

bool same_ref(const Ref& a, const Ref& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Ref::none: return true;
    case Ref::real: return a.d == b.d;
    case Ref::integer:
      if (!a.e || !b.e) return !a.e && !b.e && a.i == b.i;
      return same_expr(*a.e, *b.e);
    case Ref::tensor:
      if (a.slot >= 0 || b.slot >= 0) return a.slot == b.slot;
      return a.t.storage() == b.t.storage() && std::memcmp(&a.t.view(), &b.t.view(), sizeof(nki::detail::View)) == 0;
  }
  return false;
}

}  // namespace

bool Recorder::same_recipe(py::handle a, py::handle b) const {
  const auto ia = slot_of_.find(a.ptr()), ib = slot_of_.find(b.ptr());
  if (ia == slot_of_.end() || ib == slot_of_.end()) return false;
  const auto ra = recipes_.find(ia->second), rb = recipes_.find(ib->second);
  if (ra == recipes_.end() || rb == recipes_.end()) return false;
  const Recipe &x = ra->second, &y = rb->second;
  if (x.kinds != y.kinds || x.refs.size() != y.refs.size()) return false;
  for (size_t k = 0; k < x.refs.size(); ++k)
    if (!same_ref(x.refs[k], y.refs[k])) return false;
  return true;
}

void Recorder::forget_from(int32_t slot_begin) {
  for (auto it = slot_of_.begin(); it != slot_of_.end();)
    it = it->second >= slot_begin ? slot_of_.erase(it) : std::next(it);
  for (size_t s = static_cast<size_t>(slot_begin); s < env.slots.size(); ++s) env.slots[s].strong = Tensor();
  for (auto it = recipes_.begin(); it != recipes_.end();)
    it = it->first >= slot_begin ? recipes_.erase(it) : std::next(it);
}

void Recorder::reset() {
  ++generation;
  cur = nullptr;
  env = Env();
  slot_of_.clear();
  recipes_.clear();
  for (VarInfo& v : vars()) v.loop = nullptr;
}

namespace {

void replay_loop(const LoopRec& l, Env& e) {
  nki::Range r(l.n, l.sequential, l.loc);
  auto it = r.begin();
  const size_t iters = l.replays_body0() ? static_cast<size_t>(l.n) : l.bodies.size();
  for (size_t k = 0; k < iters; ++k) {
    (void)*it;
    ++it;
    if (l.var >= 0) e.vals[static_cast<size_t>(l.var)] = l.start + l.step * static_cast<int64_t>(k);
    for (const Step& s : l.bodies[l.replays_body0() ? 0 : k]) s(e);
  }
  // After the loop its index keeps the last iteration's value (see VarInfo).
  if (l.var >= 0 && iters) e.vals[static_cast<size_t>(l.var)] = l.start + l.step * static_cast<int64_t>(iters - 1);
}

}  // namespace

PyRange::PyRange(int64_t n, bool sequential, const nki::Loc& loc)
    : r_(std::make_unique<nki::Range>(n, sequential, loc)), n_(n), sequential_(sequential), loc_(loc) {}

void PyRange::open_rec(bool symbolic) {
  Recorder& R = recorder();
  generation_ = R.generation;
  rec_ = std::make_shared<LoopRec>();
  LoopRec& l = *rec_;
  l.parent = R.cur;
  l.n = n_;
  l.sequential = sequential_;
  l.loc = loc_;
  l.symbolic = symbolic;
  l.slot_begin = static_cast<int32_t>(R.env.slots.size());
  l.lifetime0 = nki::lifetime_events();
  l.events0 = nki::trace_events();
  l.attributed0 = R.attributed;
  if (R.cur) R.add([rec = rec_](Env& e) { replay_loop(*rec, e); });
  R.cur = &l;
}

void PyRange::begin() {
  Recorder& R = recorder();
  const uint64_t e0 = nki::trace_events();
  it_.emplace(r_->begin());
  if (R.active()) R.attributed += nki::trace_events() - e0;
}

void PyRange::enter() {
  begin();
  if (recorder().active()) open_rec(false);
}

py::object PyRange::next() {
  if (!it_ || !(*it_ != r_->end())) return py::none();
  const int64_t v = **it_;
  ++*it_;
  if (rec_) {
    ++rec_->iters;
    if (recorder().cur == rec_.get()) rec_->bodies.emplace_back();
  }
  return py::int_(v);
}

py::object PyRange::begin_symbolic(int64_t start, int64_t step) {
  begin();
  open_rec(true);
  LoopRec& l = *rec_;
  l.start = start;
  l.step = step;
  l.var = static_cast<int>(vars().size());
  vars().push_back(VarInfo{start, step, n_, start, false, &l});
  Env& env = recorder().env;
  env.vals.resize(vars().size());
  env.vals[static_cast<size_t>(l.var)] = start;
  l.bodies.emplace_back();
  l.iters = 1;
  (void)**it_;  // iteration 0
  ++*it_;
  return wrap(var_expr(l.var));
}

bool PyRange::finish_symbolic() {
  Recorder& R = recorder();
  LoopRec& l = *rec_;
  l.finished = true;
  if (nki::lifetime_events() != l.lifetime0) l.poisoned = true;
  if (nki::trace_events() - l.events0 != R.attributed - l.attributed0) l.poisoned = true;
  if (l.poisoned) {
    // Python traces the other iterations; the enclosing recordings record them one by one.
    if (!l.parent) {
      R.forget_from(l.slot_begin);  // nothing records them: the first iteration's tensors are Python's
      R.cur = nullptr;
    }
    return false;
  }
  R.cur = l.parent;
  const uint64_t e0 = nki::trace_events();
  for (int64_t k = 1; k < n_; ++k) {
    (void)**it_;
    ++*it_;
    R.env.vals[static_cast<size_t>(l.var)] = l.start + l.step * k;
    for (const Step& s : l.bodies[0]) s(R.env);
  }
  l.iters = n_;
  R.attributed += nki::trace_events() - e0;
  // The traced iteration's tensors stay Python's; the replayed ones are let go.
  for (size_t s = static_cast<size_t>(l.slot_begin); s < R.env.slots.size(); ++s) R.env.slots[s].strong = Tensor();
  return true;
}

void PyRange::exit() {
  it_.reset();
  r_.reset();
  if (!rec_) return;
  Recorder& R = recorder();
  LoopRec& l = *rec_;
  if (l.symbolic && !l.finished) l.poisoned = true;  // a break in the traced iteration: it ran once
  if (l.var >= 0) {
    // The index's value after the loop: the last iteration's (Python's own iterations, if the
    // loop fell back to them, yielded plain ints; a Sym kept from the first is its last value).
    VarInfo& v = vars()[static_cast<size_t>(l.var)];
    v.now = l.start + l.step * std::max<int64_t>(0, l.iters - 1);
    v.ended = true;
    v.loop = nullptr;
  }
  // A loop left by an error is exited when Python collects its iterator: perhaps after its trace
  // has ended (and the recorder been reset), when there is nothing left to undo.
  if (generation_ != R.generation) {
    rec_.reset();
    return;
  }
  if (l.var >= 0) R.env.vals[static_cast<size_t>(l.var)] = vars()[static_cast<size_t>(l.var)].now;
  if (R.cur == &l) R.cur = l.parent;
  if (!l.parent) R.reset();
  else R.forget_from(l.slot_begin);
  rec_.reset();
}

void bind_loops(py::module_& m) {
  bind_sym(m);
  py::class_<PyRange>(m, "Range")
      .def(py::init([](int64_t n, bool sequential, const nki::Loc& at) { return new PyRange(n, sequential, at); }))
      .def("enter", &PyRange::enter)
      .def("next", &PyRange::next)
      .def("begin_symbolic", &PyRange::begin_symbolic)
      .def("finish_symbolic", &PyRange::finish_symbolic)
      .def("exit", &PyRange::exit);
  m.def("reset_loops", [] { recorder().reset(); }, "Forgets any loop recording (a new trace starts)");
  m.def("loops_need_python", [] { recorder().poison_all(); },
        "The loops being traced depend on Python state: Python traces each of their iterations");
}

}  // namespace loops
