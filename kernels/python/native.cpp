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
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"
#include "nki/nki.hpp"
#include "numerics.hpp"
#include "profile/profile.hpp"
#include "run/pipeline.hpp"

namespace py = pybind11;
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


nki::Dtype dtype_of(const std::string& name) {
  static const std::pair<const char*, nki::Dtype> names[] = {
      {"float32", nki::Dtype::float32},   {"bfloat16", nki::Dtype::bfloat16},       {"float16", nki::Dtype::float16},
      {"tfloat32", nki::Dtype::tfloat32}, {"float8_e4m3", nki::Dtype::float8_e4m3}, {"float8_e5m2", nki::Dtype::float8_e5m2},
      {"int8", nki::Dtype::int8},         {"uint8", nki::Dtype::uint8},             {"int16", nki::Dtype::int16},
      {"uint16", nki::Dtype::uint16},     {"int32", nki::Dtype::int32},             {"uint32", nki::Dtype::uint32}};
  for (const auto& [n, d] : names)
    if (name == n) return d;
  throw ncore::KernelError("unknown dtype '" + name + "'");
}

nki::Buffer buffer_of(const std::string& name) {
  if (name == "hbm") return nki::nl::hbm;
  if (name == "shared_hbm") return nki::nl::shared_hbm;
  if (name == "sbuf") return nki::nl::sbuf;
  if (name == "psum") return nki::nl::psum;
  throw ncore::KernelError("unknown buffer '" + name + "' (hbm, shared_hbm, sbuf or psum)");
}

// NKI's name of an ALU op (the ISA's, but maximum and minimum for max and min).
std::string alu_nki_name(nki::AluOp op) {
  if (op == nki::AluOp::max) return "maximum";
  if (op == nki::AluOp::min) return "minimum";
  return ncore::isa::to_string(op);
}

// The names of the ALU ops (bypass excepted) and of the activation functions, in ISA order: the
// front end's lists of what the engines have.
std::vector<std::string> alu_names() {
  std::vector<std::string> v;
  for (nki::AluOp op : ncore::isa::kAluOpValues)
    if (op != nki::AluOp::bypass) v.push_back(alu_nki_name(op));
  return v;
}
std::vector<std::string> act_names() {
  std::vector<std::string> v;
  for (nki::ActFunc f : ncore::isa::kActFuncValues) v.push_back(ncore::isa::to_string(f));
  return v;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s;
}

nki::AluOp alu_of(const std::string& name) {
  for (nki::AluOp op : ncore::isa::kAluOpValues)
    if (alu_nki_name(op) == name || ncore::isa::to_string(op) == name) return op;
  throw ncore::KernelError("the ALU operation '" + name + "' is not modelled (this model's engines have " +
                           joined(alu_names()) + ")");
}

nki::ActFunc act_of(const std::string& name) {
  if (name == "identity") return nki::ActFunc::copy;
  nki::ActFunc f;
  if (ncore::isa::from_string(name, f)) return f;
  throw ncore::KernelError("the activation function '" + name + "' is not modelled by this model's scalar engine (it has " +
                           joined(act_names()) + ")");
}

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

// An index item from Python: an int, (start, size, step) for a slice, or None for everything.
nki::Index index_of(const py::handle& h) {
  if (h.is_none()) return nki::Index(nki::All{});
  if (py::isinstance<py::tuple>(h)) {
    auto t = h.cast<py::tuple>();
    return nki::Index(nki::Slice{t[0].cast<int64_t>(), t[1].cast<int64_t>(), t[2].cast<int64_t>()});
  }
  return nki::Index(h.cast<int64_t>());
}

// A tensor_scalar/activation operand: None, a number or a tile.
nki::Operand operand_of(const py::handle& h) {
  if (h.is_none()) return {};
  if (py::isinstance<Tensor>(h)) return nki::Operand(h.cast<Tensor>());
  return nki::Operand(h.cast<double>());
}

std::optional<nki::Dtype> opt_dtype(const std::optional<std::string>& d) {
  if (!d) return std::nullopt;
  return dtype_of(*d);
}

const ncore::Preset& preset_of(const std::string& name) {
  const ncore::Preset* p = ncore::find_preset(name);
  if (!p || std::string(p->name) == "tiny")
    throw ncore::InputError("unknown configuration '" + name + "' (trn2 or trn1)");
  return *p;
}

// A loop of nl.affine_range / sequential_range: the C++ Range, entered, stepped and left by the
// Python iterator (whose finally-block leaves it on break and on errors).
class PyRange {
 public:
  PyRange(int64_t n, bool sequential, const nki::Loc& loc) : r_(std::make_unique<nki::Range>(n, sequential, loc)) {}
  void enter() { it_.emplace(r_->begin()); }
  py::object next() {
    if (!it_ || !(*it_ != r_->end())) return py::none();
    const int64_t v = **it_;
    ++*it_;
    return py::int_(v);
  }
  void exit() {
    it_.reset();
    r_.reset();
  }

 private:
  std::unique_ptr<nki::Range> r_;
  std::optional<nki::Range::iterator> it_;
};

// numpy dtype name of an isa dtype's host form: fp32 and fp16 as they are, bf16 as float32.
ncore::isa::Dtype isa_of_numpy(const py::array& a, const std::string& name) {
  const std::string k = py::str(a.dtype());
  if (k == "float32") return ncore::isa::Dtype::fp32;
  if (k == "float16") return ncore::isa::Dtype::fp16;
  throw ncore::InputError("input '" + name + "' is a numpy array of " + k +
                          ": the model's HBM tensors are float32, float16 or bfloat16 (given as float32 with "
                          "ncore.bfloat16)");
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
    }
  });
}

// The kernel's own source line: the first frame on the Python stack whose code is not the front
// end's (its file is not under the front end's directory), as a Loc made once per (file, line).
// Every call a kernel makes asks for it, so the walk is here rather than in Python.
class CallerLocs {
 public:
  void set_frontend(const std::string& dir, py::function relative) {
    dir_ = dir;
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
        const int line = PyFrame_GetLineNumber(f);
        Py_DECREF(f);
        auto& loc = locs_[{file, line}];
        if (!loc) loc = py::cast(nki::Loc{file, line});
        return loc;
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
    if (name.compare(0, dir_.size(), dir_) != 0)
      file = intern(relative_ ? relative_(name).cast<std::string>() : name);
    Py_INCREF(code);
    files_.emplace(code, file);
    return file;
  }

  struct KeyHash {
    size_t operator()(const std::pair<const char*, int>& k) const {
      return std::hash<const void*>()(k.first) * 31 + static_cast<size_t>(k.second);
    }
  };
  std::string dir_ = "\x01";  // matches no file until set
  py::function relative_;
  std::unordered_map<PyCodeObject*, const char*> files_;
  std::unordered_map<std::pair<const char*, int>, py::object, KeyHash> locs_;
};

CallerLocs& caller_locs() {
  static auto* c = new CallerLocs;  // never destroyed: its Python objects outlive the interpreter's teardown
  return *c;
}

// source locations: made once per (file, line) and passed to every call
void bind_locations(py::module_& m) {
  m.def("set_frontend", [](const std::string& dir, py::function relative) {
    caller_locs().set_frontend(dir, std::move(relative));
  });
  m.def("caller", [] { return caller_locs().get(); });
  m.def("alu_names", &alu_names);
  m.def("act_names", &act_names);
  py::class_<nki::Loc>(m, "Loc")
      .def(py::init([](const std::string& file, int line) { return nki::Loc{intern(file), line}; }))
      .def_property_readonly("file", [](const nki::Loc& l) { return std::string(l.file); })
      .def_readonly("line", &nki::Loc::line)
      .def("__str__", [](const nki::Loc& l) { return std::string(l.file) + ":" + std::to_string(l.line); });
}

// tensors
void bind_tensors(py::module_& m) {
  py::class_<Tensor>(m, "Tensor")
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape().vec())); })
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(nki::to_string(t.dtype())); })
      .def_property_readonly("name", [](const Tensor& t) { return t.name(); })
      .def_property_readonly("buffer", [](const Tensor& t) { return std::string(nki::to_string(t.buffer())); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.ndim(); })
      .def_property_readonly("on_chip", &Tensor::on_chip)
      .def("index",
           [](const Tensor& t, const py::list& items, const nki::Loc& at) {
             std::vector<nki::Index> idx;
             for (const auto& h : items) idx.push_back(index_of(h));
             return t.index(idx, at);
           })
      .def("affine",
           [](const Tensor& t, const std::vector<int64_t>& offset, const std::vector<std::vector<int64_t>>& coeff,
              const std::vector<int64_t>& grid, const nki::Loc& at) { return t.affine(offset, coeff, grid, at); })
      .def("permute", [](const Tensor& t, const std::vector<int>& order,
                         const nki::Loc& at) { return t.permute(order, at); })
      .def("broadcast", [](const Tensor& t, int dim, int64_t size, const nki::Loc& at) {
        return t.broadcast(dim, size, at);
      })
      .def("reshape",
           [](const Tensor& t, const std::vector<int64_t>& shape, const nki::Loc& at) {
             return t.reshape(nki::Shape(shape), at);
           })
      .def("same_view",
           [](const Tensor& a, const Tensor& b) {
             if (a.storage() != b.storage()) return false;
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
         unsigned dma_queues) {
        nki::TraceOptions o;
        o.dma_queues_used = dma_queues;
        return std::make_shared<ncore::Program>(nki::trace(name, preset_of(preset), body, o));
      },
      py::arg("name"), py::arg("preset"), py::arg("body"), py::arg("dma_queues") = 4);

  py::class_<PyRange>(m, "Range")
      .def(py::init([](int64_t n, bool sequential, const nki::Loc& at) { return new PyRange(n, sequential, at); }))
      .def("enter", &PyRange::enter)
      .def("next", &PyRange::next)
      .def("exit", &PyRange::exit);
}

// nki.language
void bind_language(py::module_& m) {
  m.def("ndarray", [](const std::vector<std::pair<int64_t, bool>>& shape, const std::string& dtype,
                      const std::string& buffer, const std::string& name, const nki::Loc& at) {
    return nki::nl::ndarray(shape_of(shape), dtype_of(dtype), buffer_of(buffer), name, at);
  });
  m.def("ndarray_alloc", [](const std::vector<std::pair<int64_t, bool>>& shape, const std::string& dtype,
                            int64_t base_addr, int64_t base_partition, const std::vector<int64_t>& num_par_tiles,
                            const std::vector<int64_t>& num_free_tiles, const std::string& name,
                            const nki::Loc& at) {
    const nki::Alloc a = nki::ncc::sbuf::mod_alloc(base_addr, base_partition, num_par_tiles, num_free_tiles);
    return nki::nl::ndarray(shape_of(shape), dtype_of(dtype), a, name, at);
  });
  m.def("zeros", [](const std::vector<std::pair<int64_t, bool>>& shape, const std::string& dtype,
                    const std::string& buffer, const std::string& name, const nki::Loc& at) {
    return nki::nl::zeros(shape_of(shape), dtype_of(dtype), buffer_of(buffer), name, at);
  });
  m.def("load", [](const Tensor& src, const std::optional<std::string>& dtype, const nki::Loc& at) {
    return nki::nl::load(src, dtype ? dtype_of(*dtype) : src.dtype(), at);
  });
  m.def("store", [](const Tensor& dst, const Tensor& value, const nki::Loc& at) {
    nki::nl::store(dst, value, at);
  });
  m.def("elementwise", [](const std::optional<Tensor>& dst, const std::string& op, const py::object& x,
                          const py::object& y, const std::optional<std::string>& dtype, const nki::Loc& at) {
    if (dst) {
      nki::nl::elementwise(*dst, alu_of(op), operand_of(x), operand_of(y), at);
      return *dst;
    }
    return nki::nl::elementwise(alu_of(op), operand_of(x), operand_of(y), opt_dtype(dtype), at);
  });
}

// nki.isa
void bind_isa(py::module_& m) {
  m.def("dma_copy", [](const Tensor& dst, const Tensor& src, const nki::Loc& at) {
    nki::nisa::dma_copy(dst, src, at);
  });
  // The instructions with a result tile: into `dst`, or into a new tile on the source's
  // partitions (of `dtype`, default the source's).
  auto result = [](const std::optional<Tensor>& dst, const Tensor& like, const std::optional<std::string>& dtype,
                   const nki::Loc& l) {
    return dst ? *dst : nki::nl::result_tile(like, dtype ? dtype_of(*dtype) : like.dtype(), l);
  };
  m.def("tensor_tensor", [result](const std::optional<Tensor>& dst, const Tensor& d1, const Tensor& d2,
                                  const std::string& op, const std::optional<std::string>& dtype,
                                  const nki::Loc& at) {
    const nki::Loc& l = at;
    if (!dst && !dtype) return nki::nisa::tensor_tensor(d1, d2, alu_of(op), l);
    const Tensor t = result(dst, d1, dtype, l);
    nki::nisa::tensor_tensor(t, d1, d2, alu_of(op), l);
    return t;
  });
  m.def("tensor_scalar", [result](const std::optional<Tensor>& dst, const Tensor& data, const std::string& op0,
                                  const py::object& operand0, bool reverse0, const std::string& op1,
                                  const py::object& operand1, bool reverse1, const std::optional<std::string>& dtype,
                                  const nki::Loc& at) {
    const nki::Loc& l = at;
    if (!dst && !dtype)
      return nki::nisa::tensor_scalar(data, alu_of(op0), operand_of(operand0), reverse0, alu_of(op1),
                                      operand_of(operand1), reverse1, l);
    const Tensor t = result(dst, data, dtype, l);
    nki::nisa::tensor_scalar(t, data, alu_of(op0), operand_of(operand0), reverse0, alu_of(op1), operand_of(operand1),
                             reverse1, l);
    return t;
  });
  m.def("tensor_copy", [](const std::optional<Tensor>& dst, const Tensor& src,
                                const std::optional<std::string>& dtype, const nki::Loc& at) {
    const nki::Loc& l = at;
    if (!dst) return nki::nisa::tensor_copy(src, dtype ? dtype_of(*dtype) : src.dtype(), l);
    nki::nisa::tensor_copy(*dst, src, l);
    return *dst;
  });
  m.def("fill", [](const Tensor& dst, double value, const nki::Loc& at) {
    nki::nl::fill(dst, static_cast<float>(value), at);
  });
  m.def("memset", [](const Tensor& dst, double value, const nki::Loc& at) {
    nki::nisa::memset(dst, static_cast<float>(value), at);
  });
  m.def("tensor_reduce", [](const std::optional<Tensor>& dst, const std::string& op, const Tensor& data,
                            const std::vector<int>& axes, const std::optional<std::string>& dtype, bool keepdims,
                            const nki::Loc& at) {
    const nki::Loc& l = at;
    nki::nisa::Axes ax(0);
    ax.v = axes;
    if (dst) {
      nki::nisa::tensor_reduce(*dst, alu_of(op), data, ax, l);
      return *dst;
    }
    return nki::nisa::tensor_reduce(alu_of(op), data, ax, dtype ? dtype_of(*dtype) : data.dtype(), keepdims, l);
  });
  m.def("activation", [result](const std::optional<Tensor>& dst, const std::string& op, const Tensor& data,
                               const py::object& bias, const py::object& scale,
                               const std::optional<std::string>& dtype, const nki::Loc& at) {
    const nki::Loc& l = at;
    if (!dst)
      return nki::nisa::activation(act_of(op), data, operand_of(bias), operand_of(scale),
                                   dtype ? dtype_of(*dtype) : data.dtype(), l);
    nki::nisa::activation(*dst, act_of(op), data, operand_of(bias), operand_of(scale), l);
    return *dst;
  });
  m.def("activation_reduce", [result](const std::optional<Tensor>& dst, const std::string& op, const Tensor& data,
                                      const std::string& reduce_op, const Tensor& reduce_res, const py::object& bias,
                                      const py::object& scale, const std::optional<std::string>& dtype,
                                      const nki::Loc& at) {
    const nki::Loc& l = at;
    const Tensor t = result(dst, data, dtype, l);
    nki::nisa::activation_reduce(t, act_of(op), data, alu_of(reduce_op), reduce_res, operand_of(bias),
                                 operand_of(scale), l);
    return t;
  });
  m.def("nc_matmul", [](const std::optional<Tensor>& dst, const Tensor& stationary, const Tensor& moving,
                        std::optional<bool> accumulate, const nki::Loc& at) {
    const nki::Loc& l = at;
    if (dst) {
      nki::nisa::nc_matmul(*dst, stationary, moving, accumulate, l);
      return *dst;
    }
    return static_cast<Tensor>(nki::nisa::nc_matmul(stationary, moving, l));
  });
  m.def("nc_transpose", [](const std::optional<Tensor>& dst, const Tensor& data, const nki::Loc& at) {
    const nki::Loc& l = at;
    if (dst) {
      nki::nisa::nc_transpose(*dst, data, l);
      return *dst;
    }
    return nki::nisa::nc_transpose(data, l);
  });
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
         const std::string& backend, unsigned threads, bool check, bool skip_idle) {
        const ncore::Preset& p = preset_of(preset);
        ncore::run::Arrays in;
        for (const auto& [k, v] : inputs) {
          const std::string name = k.cast<std::string>();
          py::array a = py::array::ensure(v, py::array::c_style);
          if (!a) throw ncore::InputError("input '" + name + "' is not an array");
          ncore::run::Array arr;
          for (py::ssize_t d = 0; d < a.ndim(); ++d) arr.shape.push_back(a.shape(d));
          const ncore::isa::Dtype host = isa_of_numpy(a, name);
          const ncore::HbmTensor* t = prog->find_tensor(name);
          arr.dtype = t ? t->dtype : host;
          arr.origin = "argument '" + name + "'";
          const auto n = static_cast<uint64_t>(a.size());
          const unsigned esz = ncore::isa::dtype_bytes(arr.dtype);
          arr.bytes.resize(n * esz);
          const auto* src = static_cast<const uint8_t*>(a.data());
          if (host == arr.dtype) {
            std::memcpy(arr.bytes.data(), src, n * esz);
          } else if (host == ncore::isa::Dtype::fp32) {  // float32 data for a bfloat16 tensor
            for (uint64_t i = 0; i < n; ++i) {
              float f;
              std::memcpy(&f, src + 4 * i, 4);
              const uint32_t b = ncore::num::from_float(f, arr.dtype);
              std::memcpy(arr.bytes.data() + i * esz, &b, esz);
            }
          } else {
            throw ncore::InputError("input '" + name + "' is a numpy array of " + std::string(py::str(a.dtype())) +
                                    " for a " + ncore::isa::to_string(arr.dtype) + " tensor");
          }
          in[name] = std::move(arr);
        }
        ncore::run::Options opt;
        if (backend == "golden") opt.backend = ncore::run::Backend::golden;
        else if (backend != "rtl") throw ncore::InputError("backend '" + backend + "': rtl or golden");
        opt.threads = threads;
        opt.sim.check = check;
        opt.sim.skip_idle = skip_idle;
        auto r = std::make_unique<PyResult>();
        {
          py::gil_scoped_release nogil;
          r->result = ncore::run::run_program(*prog, p, in, opt);
        }
        r->program = prog;
        r->preset = &p;
        py::dict out, updated;
        for (const auto* arrays : {&r->result.outputs, &r->result.updated})
        for (const auto& [name, a] : *arrays) {
          const bool half = a.dtype == ncore::isa::Dtype::fp16;
          py::array arr(py::dtype(half ? "float16" : "float32"), a.shape);
          auto* dst = static_cast<uint8_t*>(arr.mutable_data());
          const unsigned esz = ncore::isa::dtype_bytes(a.dtype);
          const uint64_t n = a.bytes.size() / esz;
          if (half || a.dtype == ncore::isa::Dtype::fp32) {
            std::memcpy(dst, a.bytes.data(), a.bytes.size());
          } else {  // bfloat16, widened exactly
            for (uint64_t i = 0; i < n; ++i) {
              uint32_t bits = 0;
              std::memcpy(&bits, a.bytes.data() + i * esz, esz);
              const uint32_t f = ncore::num::to_f32_bits(bits, a.dtype);
              std::memcpy(dst + 4 * i, &f, 4);
            }
          }
          (arrays == &r->result.outputs ? out : updated)[py::str(name)] = arr;
        }
        return py::make_tuple(out, updated, py::cast(r.release(), py::return_value_policy::take_ownership));
      },
      py::arg("program"), py::arg("preset"), py::arg("inputs"), py::arg("backend") = "rtl", py::arg("threads") = 0,
      py::arg("check") = false, py::arg("skip_idle") = true);

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
  m.def("set_pe_model", &ncore::sim::Core::set_pe_model, "The RTL models' PE array for this process: rtl or fast");
  m.def("auto_threads", [](const std::string& preset, const ncore::Program& prog) {
    return ncore::sim::Core::auto_threads(preset_of(preset), prog);
  });
}

}  // namespace

PYBIND11_MODULE(_ncore_native, m) {
  m.doc() = "The C++ NKI API, tracer and run pipeline of the ncore NeuronCore model (used by neuronxcc.nki)";
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  bind_errors(m);
  bind_locations(m);
  bind_tensors(m);
  bind_tracing(m);
  bind_language(m);
  bind_isa(m);
  bind_running(m);
}
