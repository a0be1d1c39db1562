// _ncore_native: the C++ side of the Python front end (pybind11). It exposes the same NKI-like
// C++ API, tracer, scheduler and allocator that the C++ kernels call, and the run pipeline
// (sim/run) that ncore-sim calls, so that a kernel written in NKI Python traces into the same
// Program and runs on the same golden model and Verilated core. Nothing here decides semantics:
// the Python package (kernels/python/neuronxcc, ncore) maps NKI's Python calls onto these
// functions one to one.
//
// Every API function takes the caller's source location (file, line) last: the Python side
// passes the kernel's own line, so that errors and the listing point at it.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/core_sim.hpp"
#include "kernels/kernel.hpp"
#include "loops.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_kinds.hpp"
#include "ncore/preset_values.hpp"
#include "ncore/presets_gen.hpp"
#include "nki/calls.hpp"
#include "nki/nki.hpp"
#include "ncore/numerics.hpp"
#include "profile/profile.hpp"
#include "ncore/interrupt.hpp"
#include "ncore/version.hpp"
#include "run/console.hpp"
#include "run/pipeline.hpp"

namespace py = pybind11;
using loops::Args;
using loops::Ref;
using nki::Tensor;

// Debian's libsystemc refers to sc_main; the front end never calls it (it drives the kernel with
// sc_start from the run pipeline). Exported, for the dynamic linker to find it.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) { return 0; }

namespace {

// A Python source file name kept alive for the process: the tracer keys allocation sites by the
// file's pointer and line.
const char* intern(const std::string& file) {
  static std::unordered_set<std::string> files;
  static std::mutex m;
  std::lock_guard<std::mutex> g(m);
  return files.insert(file).first->c_str();
}


nki::Buffer buffer_of(const std::string& name) {
  if (name == "hbm") return nki::nl::hbm;
  if (name == "shared_hbm") return nki::nl::shared_hbm;
  if (name == "sbuf") return nki::nl::sbuf;
  if (name == "psum") return nki::nl::psum;
  throw ncore::KernelError("unknown buffer '" + name + "' (hbm, shared_hbm, sbuf or psum)");
}

using nki::calls::act_names;
using nki::calls::alu_names;
using nki::calls::dtype_of;

// A shape from Python: (size, is_par_dim) pairs, at most one of them nl.par_dim.
nki::Shape shape_of(const std::vector<std::pair<int64_t, bool>>& dims) {
  std::vector<int64_t> v;
  int par = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].second) {
      if (par >= 0) throw ncore::KernelError("a shape may have only one par_dim");
      par = static_cast<int>(i);
    }
    v.push_back(dims[i].first);
  }
  return nki::Shape(v, par);
}

const ncore::Preset& preset_of(const std::string& name) {
  const ncore::Preset* p = ncore::find_preset(name);
  if (!p || std::string(p->name) == "tiny")
    throw ncore::InputError("unknown configuration '" + name + "' (trn2 or trn1)");
  return *p;
}

// The isa dtype of a numpy array's elements: fp32, fp16 and the integers as they are, bool as
// uint8 (bf16 comes as float32).
ncore::isa::Dtype isa_of_numpy(const py::array& a, const std::string& name) {
  if (a.dtype().byteorder() == '>')
    throw ncore::InputError("input '" + name + "' is a big-endian numpy array (" +
                            std::string(py::str(a.dtype().attr("str"))) +
                            "): the model reads little-endian data; pass it with a little-endian dtype "
                            "(a.astype(a.dtype.newbyteorder('<')))");
  std::string k = py::str(a.dtype());
  if (k == "bool") k = "uint8";
  if (k == "float32") return ncore::isa::Dtype::fp32;
  if (k == "float16") return ncore::isa::Dtype::fp16;
  ncore::isa::Dtype dt{};
  if (k.find("int") != std::string::npos && ncore::isa::from_string(k, dt)) return dt;
  throw ncore::InputError("input '" + name + "' is a numpy array of " + k +
                          ": the model's HBM tensors are float32, float16, int8, uint8, int16, uint16, int32, "
                          "uint32 or bool");
}

// Whether the host holds an isa dtype's values widened to float32: NumPy has no bfloat16 and no
// fp8 types.
bool widened_on_host(ncore::isa::Dtype dt) {
  return dt == ncore::isa::Dtype::bf16 || dt == ncore::isa::Dtype::fp8_e4m3 || dt == ncore::isa::Dtype::fp8_e5m2;
}

// The numpy dtype name that holds an isa dtype's values on the host (bf16 and fp8 widened to float32;
// a tf32 element is the float32 it holds).
const char* numpy_of_isa(ncore::isa::Dtype dt) {
  if (ncore::isa::is_fp32_class(dt) || widened_on_host(dt)) return "float32";
  if (dt == ncore::isa::Dtype::fp16) return "float16";
  return ncore::isa::to_string(dt);
}

// A run's result, kept for the profile.
struct PyResult {
  ncore::run::Result result;
  std::shared_ptr<ncore::Program> program;
  const ncore::Preset* preset = nullptr;
};

py::dict stats_of(const PyResult& r) {
  const auto& s = r.result.stats;
  py::dict d;
  const bool rtl = r.result.backend == ncore::run::Backend::rtl;
  d["backend"] = ncore::run::to_string(r.result.backend);
  d["cycles"] = rtl ? py::object(py::int_(s.cycles)) : py::object(py::none());
  d["time_us"] = rtl ? py::object(py::float_(s.time_us)) : py::object(py::none());
  d["clock_mhz"] = r.preset->clock_mhz;
  d["instructions"] = s.instructions;
  d["checked_instructions"] = s.checked_instructions;
  d["dma_transfer_count"] = s.dma_transfers;
  d["hbm_read_bytes"] = s.hbm_read_bytes;
  d["hbm_write_bytes"] = s.hbm_write_bytes;
  d["pe_macs"] = s.pe_macs;
  d["evaluated_cycles"] = s.evaluated_cycles;
  d["skipped_cycles"] = s.skipped_cycles;
  d["wall_seconds"] = s.wall_seconds;
  d["rtl_threads"] = r.result.threads;
  d["pe_model"] = rtl ? py::object(py::str(s.pe_model)) : py::object(py::none());
  d["preset"] = r.preset ? r.preset->name : "";
  d["preset_set"] = ncore::preset_values_text();  // what-if values (NCORE_SET; "" none)
  d["model_version"] = ncore::version();
  d["model_revision"] = ncore::revision();
  if (rtl) {  // as ncore-sim --json has them
    d["start_cycles"] = s.start_cycles;
    py::dict parts;
    for (const ncore::sim::TimePart& p : ncore::sim::time_breakdown(s)) parts[py::str(p.name)] = p.cycles;
    d["time_breakdown_cycles"] = parts;
    d["dominant"] = ncore::sim::dominant_part(s);
  }
  return d;
}

void bind_errors(py::module_& /*m*/) {
  // Errors: a kernel breaking a rule is a ValueError, as NKI raises it, and so is bad input; what
  // goes wrong in a run (a deadlock, a check-mode difference) a RuntimeError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ncore::KernelError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ncore::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ncore::ImageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ncore::SimError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const ncore::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "the host ran out of memory (a tensor or a run larger than this machine holds)");
    }
  });
}

// The kernel's own source line: the first frame on the Python stack whose code is not the front
// end's (its file is not under the front end's directory), as a Loc made once per (file, line).
// Every call a kernel makes asks for it, so the walk is here rather than in Python.
class CallerLocs {
 public:
  void set_frontend(std::vector<std::string> dirs, py::function relative) {
    dirs_ = std::move(dirs);
    relative_ = std::move(relative);
  }

  py::object get() {
    PyFrameObject* f = PyEval_GetFrame();  // borrowed
    Py_XINCREF(f);
    while (f) {
      PyCodeObject* code = PyFrame_GetCode(f);  // new reference
      const char* file = file_of(code);
      Py_DECREF(code);
      if (file) {
        // By bytecode offset first: the line number is a walk of the code's line table.
        py::object& at = by_offset_[{code, PyFrame_GetLasti(f)}];
        if (!at) {
          const int line = PyFrame_GetLineNumber(f);
          auto& loc = locs_[{file, line}];
          if (!loc) loc = py::cast(nki::Loc{file, line});
          at = loc;
        }
        Py_DECREF(f);
        return at;
      }
      PyFrameObject* back = PyFrame_GetBack(f);  // new reference
      Py_DECREF(f);
      f = back;
    }
    return py::cast(nki::Loc{intern("<unknown>"), 0});
  }

 private:
  // The file of a code object as locations show it, or nullptr for the front end's own code. The
  // code objects are kept alive, so that their addresses stay theirs.
  const char* file_of(PyCodeObject* code) {
    const auto it = files_.find(code);
    if (it != files_.end()) return it->second;
    const std::string name = py::reinterpret_borrow<py::str>(code->co_filename);
    const char* file = nullptr;
    const bool ours = std::any_of(dirs_.begin(), dirs_.end(),
                                  [&](const std::string& d) { return name.compare(0, d.size(), d) == 0; });
    if (!ours) file = intern(relative_ ? relative_(name).cast<std::string>() : name);
    Py_INCREF(code);
    files_.emplace(code, file);
    return file;
  }

  struct PairHash {  // (pointer, int) keys
    template <class P>
    size_t operator()(const std::pair<P*, int>& k) const {
      return std::hash<const void*>()(k.first) * 31 + static_cast<size_t>(k.second);
    }
  };
  std::vector<std::string> dirs_;  // the front end's package folders (none until set)
  py::function relative_;
  std::unordered_map<PyCodeObject*, const char*> files_;
  std::unordered_map<std::pair<const char*, int>, py::object, PairHash> locs_;
  std::unordered_map<std::pair<PyCodeObject*, int>, py::object, PairHash> by_offset_;  // codes kept alive by files_
};

CallerLocs& caller_locs() {
  static auto* c = new CallerLocs;  // never destroyed: its Python objects outlive the interpreter's teardown
  return *c;
}

// source locations: made once per (file, line) and passed to every call
void bind_locations(py::module_& m) {
  m.def("set_frontend", [](std::vector<std::string> dirs, py::function relative) {
    caller_locs().set_frontend(std::move(dirs), std::move(relative));
  });
  m.def("caller", [] { return caller_locs().get(); });
  m.def("alu_names", &alu_names);
  m.def("promote", [](const std::string& a, const std::string& b) {
    return std::string(nki::to_string(nki::promote(dtype_of(a), dtype_of(b))));
  });
  m.def("act_names", &act_names);
  m.def("engine_ids", [] {
    // The ISA description's engine ids (firmware/isa/ncore_isa.json), which are NKI's.
    std::vector<std::pair<std::string, int>> v;
    for (ncore::isa::Engine e : ncore::isa::kEngineValues) v.emplace_back(ncore::isa::to_string(e), static_cast<int>(e));
    return v;
  });
  m.def("dtypes", [] {
    // NKI's dtypes (kernels/nki's one table): name, bytes per element, modelled.
    std::vector<std::tuple<std::string, int64_t, bool>> v;
    for (const nki::DtypeInfo& i : nki::dtype_table()) v.emplace_back(i.name, i.bytes, i.modelled);
    return v;
  });
  py::class_<nki::Loc>(m, "Loc")
      .def(py::init([](const std::string& file, int line) { return nki::Loc{intern(file), line}; }))
      .def_property_readonly("file", [](const nki::Loc& l) { return std::string(l.file); })
      .def_readonly("line", &nki::Loc::line)
      .def("__str__", [](const nki::Loc& l) { return std::string(l.file) + ":" + std::to_string(l.line); });
}

// tensors. Every call that traces (views, instructions, allocations) goes through the loop
// recorder (loops.hpp): run for the iteration being traced, and recorded when a loop body is.
void bind_tensors(py::module_& m) {
  loops::Recorder& R = loops::recorder();
  py::class_<Tensor>(m, "Tensor")
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape().vec())); })
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(nki::to_string(t.dtype())); })
      .def_property_readonly("name", [](const Tensor& t) { return t.name(); })
      .def_property_readonly("buffer", [](const Tensor& t) { return std::string(nki::to_string(t.buffer())); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.ndim(); })
      .def_property_readonly("on_chip", &Tensor::on_chip)
      // items: an int, (start, size, step) for a slice, or None for everything; ints may be symbolic.
      .def("index",
           [&R](py::handle self, const py::list& items, nki::Loc at) {
             if (R.active() && at.line == 0) at = caller_locs().get().cast<nki::Loc>();  // for replay's errors
             std::vector<Ref> refs{R.capture(self)};
             std::vector<uint8_t> kinds;
             for (const auto& h : items) {
               if (h.is_none()) {
                 kinds.push_back(0);
               } else if (py::isinstance<py::tuple>(h)) {
                 kinds.push_back(2);
                 for (const auto& x : h.cast<py::tuple>()) refs.push_back(R.capture(x));
               } else {
                 kinds.push_back(1);
                 refs.push_back(R.capture(h));
               }
             }
             std::optional<std::vector<Ref>> recipe;
             if (R.active()) recipe = refs;
             py::object view = R.tensor_call(
                 [kinds, at](const Args& a) {
                   std::vector<nki::Index> idx;
                   size_t k = 1;
                   for (const uint8_t kind : kinds) {
                     if (kind == 0) {
                       idx.emplace_back(nki::All{});
                     } else if (kind == 1) {
                       idx.emplace_back(a.i(k++));
                     } else {
                       idx.emplace_back(nki::Slice{a.i(k), a.i(k + 1), a.i(k + 2)});
                       k += 3;
                     }
                   }
                   return a.t(0).index(idx, at);
                 },
                 std::move(refs));
             if (recipe) R.note_view(view, std::move(*recipe), std::move(kinds));
             return view;
           })
      .def("affine",
           [&R](py::handle self, const py::list& offset, const std::vector<std::vector<int64_t>>& coeff,
                const std::vector<int64_t>& grid, nki::Loc at) {
             if (R.active() && at.line == 0) at = caller_locs().get().cast<nki::Loc>();
             std::vector<Ref> refs{R.capture(self)};
             for (const auto& h : offset) refs.push_back(R.capture(h));
             return R.tensor_call(
                 [coeff, grid, at](const Args& a) {
                   std::vector<int64_t> off;
                   for (size_t k = 1; k < a.size(); ++k) off.push_back(a.i(k));
                   return a.t(0).affine(off, coeff, grid, at);
                 },
                 std::move(refs));
           })
      .def("permute",
           [&R](py::handle self, const std::vector<int>& order, const nki::Loc& at) {
             return R.tensor_call([order, at](const Args& a) { return a.t(0).permute(order, at); }, {R.capture(self)});
           })
      .def("broadcast",
           [&R](py::handle self, int dim, int64_t size, const nki::Loc& at) {
             return R.tensor_call([dim, size, at](const Args& a) { return a.t(0).broadcast(dim, size, at); },
                                  {R.capture(self)});
           })
      .def("reshape",
           [&R](py::handle self, const std::vector<int64_t>& shape, const nki::Loc& at) {
             return R.tensor_call([shape, at](const Args& a) { return a.t(0).reshape(nki::Shape(shape), at); },
                                  {R.capture(self)});
           })
      .def("ap",
           [&R](py::handle self, const std::vector<std::vector<int64_t>>& pattern, std::optional<int64_t> offset,
                const nki::Loc& at) {
             std::vector<std::pair<int64_t, int64_t>> pat;
             for (const auto& x : pattern) {
               if (x.size() != 2) throw ncore::KernelError("an access pattern is a list of [step, num] pairs");
               pat.emplace_back(x[0], x[1]);
             }
             return R.tensor_call([pat, offset, at](const Args& a) { return a.t(0).ap(pat, offset, at); },
                                  {R.capture(self)});
           })
      .def("bitcast",
           [&R](py::handle self, const std::string& dtype, const nki::Loc& at) {
             const nki::Dtype dt = dtype_of(dtype);
             return R.tensor_call([dt, at](const Args& a) { return a.t(0).bitcast(dt, at); }, {R.capture(self)});
           })
      .def("pattern",
           [](const Tensor& t) -> py::object {
             const auto p = t.pattern();
             if (!p) return py::none();
             py::list steps;
             for (const auto& [step, num] : p->first) steps.append(py::make_tuple(step, num));
             return py::make_tuple(steps, p->second);
           })
      .def("same_view",
           [&R](py::handle ha, py::handle hb) {
             const Tensor &a = ha.cast<const Tensor&>(), &b = hb.cast<const Tensor&>();
             if (a.storage() != b.storage()) return false;  // so in every iteration (loops.hpp)
             // Views of one storage may coincide in some iterations only, unless made the same way.
             if (ha.ptr() != hb.ptr() && (R.is_slot(ha) || R.is_slot(hb)) && !R.same_recipe(ha, hb)) R.poison_all();
             const auto &x = a.view(), &y = b.view();
             return x.dtype == y.dtype && x.nd == y.nd && x.size == y.size && x.stride == y.stride && x.kind == y.kind &&
                    x.offset == y.offset && x.part == y.part && x.block == y.block;
           })
      .def("__str__", &Tensor::str);
}

// tracing
void bind_tracing(py::module_& m) {
  py::class_<nki::Tracer>(m, "Tracer")
      .def("input",
           [](nki::Tracer& t, const std::string& name, const std::vector<int64_t>& shape, const std::string& dtype,
              const nki::Loc& at) {
             return t.input(name, nki::Shape(shape), dtype_of(dtype), at);
           })
      .def("output", [](nki::Tracer& t, const Tensor& x, const nki::Loc& at) {
        t.output(x, at);
      });

  py::class_<ncore::Program, std::shared_ptr<ncore::Program>>(m, "Program")
      .def_property_readonly("kernel", [](const ncore::Program& p) { return p.kernel; })
      .def_property_readonly("preset", [](const ncore::Program& p) { return p.preset; })
      .def("instruction_count", &ncore::Program::instruction_count)
      .def("inputs_written", &ncore::Program::inputs_written,
           "the input tensors some instruction writes into (arguments the kernel uses as outputs)")
      .def("listing", &ncore::Program::listing)
      .def("save", &ncore::Program::save)
      .def("opcode_counts",
           [](const ncore::Program& p) {
             std::map<std::string, uint64_t> c;
             for (const auto& s : p.streams)
               for (const auto& i : s.insns) ++c[ncore::isa::to_string(i.insn.opcode)];
             return c;
           })
      .def("code",
           [](const ncore::Program& p) {
             // The Program without names and source locations: each stream's encoded instructions
             // and the HBM layout (offset, bytes, role, dtype of each tensor), for comparing two
             // traces of one kernel.
             py::list streams;
             for (const auto& s : p.streams) {
               py::list insns;
               for (const auto& i : s.insns) {
                 uint8_t b[ncore::isa::kInsnBytes];
                 ncore::isa::encode(i.insn, b);
                 insns.append(py::bytes(reinterpret_cast<const char*>(b), sizeof b));
               }
               streams.append(py::make_tuple(s.name, insns));
             }
             py::list hbm;
             for (const auto& t : p.hbm_tensors)
               hbm.append(py::make_tuple(t.offset, t.bytes, static_cast<int>(t.role), ncore::isa::to_string(t.dtype)));
             return py::make_tuple(streams, hbm, p.hbm_bytes);
           })
      .def("tensors", [](const ncore::Program& p) {
        py::list l;
        static const char* roles[] = {"input", "output", "internal", "constant"};
        for (const auto& t : p.hbm_tensors)
          l.append(py::make_tuple(t.name, roles[static_cast<int>(t.role)], t.shape, ncore::isa::to_string(t.dtype)));
        return l;
      });

  m.def(
      "trace",
      [](const std::string& name, const std::string& preset, const std::function<void(nki::Tracer&)>& body,
         unsigned dma_queues, bool progress, bool keep_referenced_tiles, std::vector<uint64_t> last_uses,
         bool want_last_uses) -> py::object {
        nki::TraceOptions o;
        o.dma_queues_used = dma_queues;
        o.keep_referenced_tiles = keep_referenced_tiles;
        o.last_uses = std::move(last_uses);
        nki::TraceStats stats;
        if (want_last_uses) {
          o.stats = &stats;
          o.measure_last_uses = true;
        }
        // Ctrl-C while C++ replays a loop's iterations (the GIL held, Python's handler in place)
        o.poll = [] {
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        };
        ncore::run::Progress shown("[ncore]", progress);
        shown.attach(o);
        auto prog = std::make_shared<ncore::Program>(nki::trace(name, preset_of(preset), body, o));
        if (want_last_uses) return py::make_tuple(prog, stats.last_uses);
        return py::cast(prog);
      },
      py::arg("name"), py::arg("preset"), py::arg("body"), py::arg("dma_queues") = 4, py::arg("progress") = false,
      py::arg("keep_referenced_tiles") = false, py::arg("last_uses") = std::vector<uint64_t>{},
      py::arg("want_last_uses") = false,
      "Traces body into a Program (with want_last_uses: measures the tiles' last uses for a second trace's "
      "last_uses, TraceOptions::measure_last_uses, and returns them too).");

  loops::bind_loops(m);
}

// A new tensor (nl.ndarray, nl.zeros): make(shape, dtype, buffer, name, loc).
template <class Make>
void def_new_tensor(py::module_& m, const char* api, Make make) {
  m.def(api, [make](const std::vector<std::pair<int64_t, bool>>& shape, const std::string& dtype,
                    const std::string& buffer, const std::string& name, const nki::Loc& at) {
    const nki::Shape sh = shape_of(shape);
    const nki::Dtype dt = dtype_of(dtype);
    const nki::Buffer b = buffer_of(buffer);
    return loops::recorder().tensor_call([make, sh, dt, b, name, at](const Args&) { return make(sh, dt, b, name, at); },
                                         {});
  });
}

// nki.language
void bind_language(py::module_& m) {
  loops::Recorder& R = loops::recorder();
  def_new_tensor(m, "ndarray", [](const nki::Shape& sh, nki::Dtype dt, nki::Buffer b, const std::string& name,
                                  const nki::Loc& at) { return nki::nl::ndarray(sh, dt, b, name, at); });
  def_new_tensor(m, "zeros", [](const nki::Shape& sh, nki::Dtype dt, nki::Buffer b, const std::string& name,
                                const nki::Loc& at) { return nki::nl::zeros(sh, dt, b, name, at); });
  m.def("ndarray_alloc", [&R](const std::vector<std::pair<int64_t, bool>>& shape, const std::string& dtype,
                              int64_t base_addr, int64_t base_partition, const std::vector<int64_t>& num_par_tiles,
                              const std::vector<int64_t>& num_free_tiles, const std::string& name,
                              const nki::Loc& at, const std::string& buffer, bool by_address) {
    nki::Alloc al = nki::ncc::sbuf::mod_alloc(base_addr, base_partition, num_par_tiles, num_free_tiles);
    al.buffer = buffer_of(buffer).kind;
    al.by_address = by_address;
    const nki::Shape sh = shape_of(shape);
    const nki::Dtype dt = dtype_of(dtype);
    return R.tensor_call([sh, dt, al, name, at](const Args&) { return nki::nl::ndarray(sh, dt, al, name, at); }, {});
  },
  py::arg("shape"), py::arg("dtype"), py::arg("base_addr"), py::arg("base_partition"), py::arg("num_par_tiles"),
  py::arg("num_free_tiles"), py::arg("name"), py::arg("loc"), py::arg("buffer") = "sbuf",
  py::arg("by_address") = false);
}

// nki.language's tensor creation and the helpers the Python front end's own semantics use (the
// calls themselves are the call surface's: call_binding.cpp).
void bind_helpers(py::module_& m) {
  loops::Recorder& R = loops::recorder();
  m.def("broadcast_partitions", [&R](py::handle row, int64_t partitions, const nki::Loc& at) {
    return R.tensor_call(
        [partitions, at](const Args& a) { return nki::nl::broadcast_partitions(a.t(0), partitions, at); },
        {R.capture(row)});
  });
  m.def("fill", [&R](py::handle dst, double value, const nki::Loc& at) {
    R.void_call([value, at](const Args& a) { nki::nl::fill(a.t(0), static_cast<float>(value), at); }, {R.capture(dst)});
  });
  m.def("shared_constant", [&R](const py::array_t<float, py::array::c_style | py::array::forcecast>& values,
                                const std::string& dtype, const nki::Loc& at) {
    std::vector<int64_t> shape;
    for (py::ssize_t d = 0; d < values.ndim(); ++d) shape.push_back(values.shape(d));
    if (shape.empty()) shape.push_back(1);
    const std::vector<float> v(values.data(), values.data() + values.size());
    const nki::Shape sh(shape);
    const nki::Dtype dt = dtype_of(dtype);
    return R.tensor_call([v, sh, dt, at](const Args&) { return nki::nl::shared_constant(v, sh, dt, at); }, {});
  });
  m.def("shared_identity_matrix", [&R](int64_t n, const std::string& dtype, const nki::Loc& at) {
    const nki::Dtype dt = dtype_of(dtype);
    return R.tensor_call([n, dt, at](const Args&) { return nki::nl::shared_identity_matrix(n, dt, at); }, {});
  });
}

// The run's inputs from a dict of NumPy arrays: read in place where the dtype matches (the arrays
// kept alive in `keep`), float32 data rounded for a bfloat16 or fp8 tensor.
ncore::run::Arrays inputs_of(const ncore::Program& prog, const py::dict& inputs, std::vector<py::array>& keep) {
  ncore::run::Arrays in;
  for (const auto& [k, v] : inputs) {
    const std::string name = k.cast<std::string>();
    py::array a = py::array::ensure(v, py::array::c_style);
    if (!a) throw ncore::InputError("input '" + name + "' is not an array");
    ncore::run::Array arr;
    for (py::ssize_t d = 0; d < a.ndim(); ++d) arr.shape.push_back(a.shape(d));
    const ncore::isa::Dtype host = isa_of_numpy(a, name);
    const ncore::HbmTensor* t = prog.find_tensor(name);
    arr.dtype = t ? t->dtype : host;
    arr.origin = "argument '" + name + "'";
    const auto n = static_cast<uint64_t>(a.size());
    const unsigned esz = ncore::isa::dtype_bytes(arr.dtype);
    const auto* src = static_cast<const uint8_t*>(a.data());
    // read in place (the run copies it into HBM, once); a bfloat16 tensor's elements may come as their
    // 16-bit patterns (a torch bfloat16 tensor's, NumPy having no bfloat16)
    const bool bits = arr.dtype == ncore::isa::Dtype::bf16 && host == ncore::isa::Dtype::uint16;
    if (host == arr.dtype || bits) {
      arr.view = src;
      arr.view_bytes = n * esz;
      keep.push_back(a);
    } else if (host == ncore::isa::Dtype::fp32) {  // float32 data for a bfloat16 or fp8 tensor
      arr.bytes.resize(n * esz);
      for (uint64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, src + 4 * i, 4);
        const uint32_t b = ncore::num::from_float(f, arr.dtype);
        std::memcpy(arr.bytes.data() + i * esz, &b, esz);
      }
    } else {
      throw ncore::InputError("input '" + name + "' is a numpy array of " + std::string(py::str(a.dtype())) + " for a " +
                              ncore::isa::to_string(arr.dtype) + " tensor");
    }
    in[name] = std::move(arr);
  }
  return in;
}

// The run's arrays as NumPy arrays by name (bfloat16 and fp8 widened exactly to float32).
py::dict arrays_of(const ncore::run::Arrays& arrays) {
  py::dict out;
  for (const auto& [name, a] : arrays) {
    py::array arr(py::dtype(numpy_of_isa(a.dtype)), a.shape);
    auto* dst = static_cast<uint8_t*>(arr.mutable_data());
    const unsigned esz = ncore::isa::dtype_bytes(a.dtype);
    const uint64_t n = a.bytes.size() / esz;
    if (!widened_on_host(a.dtype)) {
      std::memcpy(dst, a.bytes.data(), a.bytes.size());
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t bits = 0;
        std::memcpy(&bits, a.bytes.data() + i * esz, esz);
        const uint32_t f = ncore::num::to_f32_bits(bits, a.dtype);
        std::memcpy(dst + 4 * i, &f, 4);
      }
    }
    out[py::str(name)] = arr;
  }
  return out;
}

// running
void bind_running(py::module_& m) {
  py::class_<PyResult>(m, "Result")
      .def_property_readonly("stats", &stats_of)
      .def("write_profile", [](const PyResult& r, const std::string& name, const std::string& title) {
        ncore::sim::ProfileRun pr;
        pr.prog = r.program.get();
        pr.preset = r.preset;
        pr.rtl = r.result.backend == ncore::run::Backend::rtl ? &r.result.stats : nullptr;
        pr.title = title;
        return ncore::sim::write_profile(name, pr);
      });

  m.def(
      "run_program",
      [](std::shared_ptr<ncore::Program> prog, const std::string& preset, const py::dict& inputs,
         const std::string& backend, unsigned threads, bool check, bool skip_idle, const std::string& waves,
         const std::vector<std::string>& waves_scopes, const std::string& waves_window, bool progress) {
        const ncore::Preset& p = preset_of(preset);
        std::vector<py::array> keep;  // the arrays whose buffers the run reads in place
        const ncore::run::Arrays in = inputs_of(*prog, inputs, keep);
        ncore::run::Options opt;
        if (backend == "golden") opt.backend = ncore::run::Backend::golden;
        else if (backend != "rtl") throw ncore::InputError("backend '" + backend + "': rtl or golden");
        opt.threads = threads;
        opt.sim.check = check;
        opt.sim.skip_idle = skip_idle;
        ncore::sim::set_waves(opt.sim, waves, waves_scopes, waves_window,
                              {"NCORE_WAVES (waves=)", "NCORE_WAVES_SCOPE (waves_scope=)",
                               "NCORE_WAVES_WINDOW (waves_window=)"});
        ncore::run::Progress shown("[ncore]", progress);
        shown.attach(opt.sim, static_cast<double>(p.clock_mhz));
        auto r = std::make_unique<PyResult>();
        try {
          // Ctrl-C: Python's handler cannot run while the GIL is released, so the run's own
          // guard takes it as a stop request and it comes back here as KeyboardInterrupt.
          const ncore::run::SigintGuard ctrl_c;
          py::gil_scoped_release nogil;
          r->result = ncore::run::run_program(*prog, p, in, opt);
        } catch (const ncore::Interrupted&) {
          shown.done();
          PyErr_SetString(PyExc_KeyboardInterrupt, "the run was interrupted (Ctrl-C)");
          throw py::error_already_set();
        }
        shown.done();
        r->program = prog;
        r->preset = &p;
        py::dict out = arrays_of(r->result.outputs), updated = arrays_of(r->result.updated);
        return py::make_tuple(out, updated, py::cast(r.release(), py::return_value_policy::take_ownership));
      },
      py::arg("program"), py::arg("preset"), py::arg("inputs"), py::arg("backend") = "rtl", py::arg("threads") = 0,
      py::arg("check") = false, py::arg("skip_idle") = true, py::arg("waves") = "",
      py::arg("waves_scopes") = std::vector<std::string>{}, py::arg("waves_window") = "", py::arg("progress") = false);

  m.def(
      "build_declared",
      [](const std::string& kernel, const std::map<std::string, int64_t>& params, const std::string& dtype,
         const std::string& preset, unsigned dma_queues) {
        kernels::Args a(kernel, params);
        ncore::isa::Dtype dt{};
        if (!ncore::isa::from_string(dtype, dt)) throw ncore::InputError("dtype '" + dtype + "': fp32, bf16 or fp16");
        a.dtype = dt;
        a.dma_queues = dma_queues;
        return std::make_shared<ncore::Program>(kernels::build(a, preset_of(preset)));
      },
      "Traces a C++ kernel declared in kernels/ (its Program, for comparison with a Python kernel's)",
      py::arg("kernel"), py::arg("params"), py::arg("dtype") = "fp32", py::arg("preset") = "trn2",
      py::arg("dma_queues") = 4);
  m.def("thread_counts", &ncore::sim::Core::thread_counts);
  m.def("check_writable", &ncore::run::check_writable,
        "Raises ValueError naming `what` when the file `path` cannot be written (its folder missing or read-only)");
  m.def("set_pe_model", &ncore::sim::Core::set_pe_model, "The RTL models' PE array for this process: rtl or fast");
  m.def("auto_threads", [](const std::string& preset, const ncore::Program& prog) {
    return ncore::sim::Core::auto_threads(preset_of(preset), prog);
  });
}

}  // namespace

void bind_calls(py::module_& m);  // call_binding.cpp

PYBIND11_MODULE(_ncore_native, m) {
  m.doc() = "The C++ NKI API, tracer and run pipeline of the ncore NeuronCore model (used by neuronxcc.nki)";
  m.attr("__version__") = ncore::version();
  m.attr("revision") = ncore::revision();
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  bind_errors(m);
  bind_locations(m);
  bind_tensors(m);
  bind_tracing(m);
  bind_language(m);
  bind_helpers(m);
  bind_running(m);
  bind_calls(m);
}
