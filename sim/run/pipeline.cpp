// The run pipeline. See pipeline.hpp.
#include "run/pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "golden_model.hpp"
#include "ncore/error.hpp"
#include "ncore/size.hpp"
#include "ncore/numerics.hpp"

namespace ncore::run {
namespace {

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("({})", fmt::join(s, ", ")); }

// "a.npy" or "input 'a_vec'": how a message names an array.
std::string named(const std::string& name, const Array& a) {
  return a.origin.empty() ? fmt::format("input '{}'", name) : a.origin;
}

// Parameters that given inputs fix: for each parameter the kernel declares as read off an
// input's shape, the value from every given input, all of which must agree (with each other
// and with a value given for the parameter itself).
kernels::Args sizes_from_inputs(const kernels::Kernel& k, kernels::Args args, const Arrays& given) {
  for (const kernels::Param& p : k.params) {
    std::string source;  // what fixed the value so far
    if (args.given.count(p.name)) source = p.flag + " " + std::to_string(args.given.at(p.name));
    for (const auto& [input, dim] : p.from_inputs) {
      auto it = given.find(input);
      if (it == given.end()) continue;
      const Array& a = it->second;
      int64_t v = 0;
      std::string what;
      if (dim < 0) {
        v = static_cast<int64_t>(a.elements());
        what = fmt::format("{} has {} elements", named(input, a), v);
        if (!source.empty()) continue;  // an element count is checked against the spec later
      } else {
        const kernels::TensorDecl* d = nullptr;
        for (const auto& t : k.inputs)
          if (t.name == input) d = &t;
        const size_t nd = d ? d->dims.size() : 0;
        if (a.shape.size() != nd)
          throw InputError(fmt::format("{}: {} must have {} dimensions ({}), got shape {}", named(input, a), input, nd,
                                       d ? fmt::format("{}", fmt::join(d->dims, ", ")) : "", shape_text(a.shape)));
        v = a.shape[static_cast<size_t>(dim)];
        what = fmt::format("{} has {} {} (dimension {} of {})", named(input, a), v, d->dims[static_cast<size_t>(dim)],
                           dim, input);
      }
      if (source.empty()) {
        args.given[p.name] = v;
        source = what;
      } else if (args.given.at(p.name) != v) {
        throw InputError(fmt::format("{}, but {} ({})", what, source, p.what));
      }
    }
  }
  return args;
}

}  // namespace

uint64_t Array::elements() const {
  const auto n = count_product(shape.begin(), shape.end());
  if (!n) throw InputError(fmt::format("{}: shape {} has more than 2^60 elements", origin.empty() ? "an array" : origin,
                                       shape_text(shape)));
  return *n;
}

const char* to_string(Backend b) { return b == Backend::rtl ? "rtl" : "golden"; }

void check_writable(const std::string& what, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (path.empty()) throw InputError(fmt::format("{}: an empty path", what));
  if (fs::is_directory(p, ec)) throw InputError(fmt::format("{} {}: is a directory, not a file", what, path));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("{} {}: cannot write there: folder {} does not exist", what, path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0 && !(fs::exists(p, ec) && ::access(p.c_str(), W_OK) == 0))
    throw InputError(fmt::format("{} {}: cannot write there: folder {} is not writable", what, path, dir.string()));
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)
    throw InputError(fmt::format("{} {}: the file is not writable", what, path));
}

Result run_program(const Program& prog, const Preset& preset, const Arrays& inputs, const Options& opt) {
  // HBM: zeros (pages the host provides as they are touched), the Program's constants, the inputs
  // (each copied once, from where the caller holds it).
  ZeroedBytes hbm(prog.hbm_bytes, fmt::format("the HBM of kernel '{}'", prog.kernel));
  prog.load_constants(hbm.data(), hbm.size());
  size_t used = 0;
  for (const HbmTensor& t : prog.hbm_tensors) {
    if (t.role != TensorRole::input) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end()) throw InputError(fmt::format("the kernel's input '{}' is not given", t.name));
    const Array& a = it->second;
    if (a.dtype != t.dtype)
      throw InputError(fmt::format("{} holds {} elements, the kernel's input '{}' is {}", named(t.name, a),
                                   isa::to_string(a.dtype), t.name, isa::to_string(t.dtype)));
    if (a.size_bytes() != t.bytes)
      throw InputError(fmt::format("{}: has {} elements, the kernel's input '{}' needs {}", named(t.name, a),
                                   a.size_bytes() / isa::dtype_bytes(a.dtype), t.name,
                                   t.bytes / isa::dtype_bytes(t.dtype)));
    std::memcpy(hbm.data() + t.offset, a.data(), a.size_bytes());
    ++used;
  }
  if (used != inputs.size())
    for (const auto& [name, a] : inputs) {
      const HbmTensor* t = prog.find_tensor(name);
      if (!t || t->role != TensorRole::input)
        throw InputError(fmt::format("{}: the kernel has no input '{}'", a.origin.empty() ? name : a.origin, name));
    }

  Result r;
  r.backend = opt.backend;
  if (opt.backend == Backend::rtl) {
    r.threads = opt.threads ? opt.threads : sim::Core::auto_threads(preset, prog);
    r.stats = sim::Core::get(preset, r.threads).run(prog, ByteSpan{hbm.data(), hbm.size()}, opt.sim);
    r.stats.pe_model = sim::Core::pe_model();
  } else {
    GoldenModel g(preset, ByteSpan{hbm.data(), hbm.size()});  // on the run's HBM, in place
    const auto st = g.run(prog);
    r.stats.instructions = st.instructions;
    r.stats.dma_transfers = st.dma_transfers;
  }

  for (const HbmTensor& t : prog.hbm_tensors) {
    const auto at = hbm.begin() + static_cast<long>(t.offset);
    if (t.role == TensorRole::output) {
      Array& o = r.outputs[t.name];
      o.shape = t.shape;
      o.dtype = t.dtype;
      o.bytes.assign(at, at + static_cast<long>(t.bytes));
    } else if (t.role == TensorRole::input) {
      const Array& in = inputs.at(t.name);
      if (!std::equal(in.data(), in.data() + in.size_bytes(), at)) {
        Array& u = r.updated[t.name];
        u.shape = in.shape;
        u.dtype = t.dtype;
        u.bytes.assign(at, at + static_cast<long>(t.bytes));
      }
    }
  }
  return r;
}

Array random_array(const kernels::TensorSpec& spec, std::mt19937_64& rng, const Fill& fill) {
  Array a;
  a.shape = spec.shape;
  a.dtype = spec.dtype;
  const unsigned esz = isa::dtype_bytes(spec.dtype);
  a.bytes.assign(spec.bytes(), 0);
  if (spec.zeros) return a;
  std::uniform_real_distribution<float> uni(fill.lo, fill.hi);
  const uint32_t neg_zero = esz == 2 ? 0x8000u : 0x80000000u;
  for (uint64_t i = 0; i < spec.elements(); ++i) {
    uint32_t v = num::from_float(uni(rng), spec.dtype);
    if (fill.no_negative_zero && v == neg_zero) v = 0;
    std::memcpy(a.bytes.data() + i * esz, &v, esz);
  }
  return a;
}

Compare compare(const Array& got, const Bytes& want, const std::vector<double>* magnitude, int64_t roundings) {
  Compare c;
  const isa::Dtype dt = got.dtype;
  const unsigned esz = isa::dtype_bytes(dt);
  c.elements = want.size() / esz;
  const bool bounded = magnitude != nullptr;
  // numpy.allclose's tolerances for the exact kernels
  const double rtol = dt == isa::Dtype::fp32 ? 1e-5 : dt == isa::Dtype::fp16 ? 1e-3 : 1e-2, atol = 1e-8;
  // the forward error bound for the others
  const int mant = dt == isa::Dtype::fp32 ? 24 : dt == isa::Dtype::fp16 ? 11 : 8;
  const double u = std::ldexp(1.0, -24), u_dt = std::ldexp(1.0, -mant);
  const double eta = dt == isa::Dtype::fp32 ? std::ldexp(1.0, -149) : dt == isa::Dtype::fp16 ? std::ldexp(1.0, -24)
                                                                                                : std::ldexp(1.0, -133);
  const double n = static_cast<double>(roundings);
  const double gamma = n * u < 1 ? n * u / (1 - n * u) * (1 + u_dt) : HUGE_VAL;
  if (bounded)
    c.rule = fmt::format("|out - ref| <= {:.3g} x sum|terms| + 2^-{} x (|out| + |ref|): the forward error bound of "
                         "{} fp32 roundings (gamma({}), u = 2^-24) and one rounding of each side to {}",
                         gamma, mant, roundings, roundings, isa::to_string(dt));
  else
    c.rule = fmt::format("bit for bit, else numpy.allclose with rtol {:g}, atol {:g}", rtol, atol);
  if (got.bytes.size() != want.size() || (bounded && magnitude->size() != c.elements)) {
    c.exact = c.close = false;
    c.mismatches = c.elements;
    return c;
  }
  for (uint64_t i = 0; i < c.elements; ++i) {
    uint32_t g = 0, w = 0;
    std::memcpy(&g, got.bytes.data() + i * esz, esz);
    std::memcpy(&w, want.data() + i * esz, esz);
    if (g == w) continue;
    c.exact = false;
    const double gv = num::to_float(g, dt), wv = num::to_float(w, dt);
    const double err = std::fabs(gv - wv);
    const double bound = bounded ? gamma * (*magnitude)[i] + u_dt * (std::fabs(gv) + std::fabs(wv)) + 2 * eta
                                 : atol + rtol * std::fabs(wv);
    if (!(err <= bound) && !(std::isnan(gv) && std::isnan(wv))) {
      if (c.mismatches++ == 0) c.first = i;
      c.close = false;
    }
    if (err > c.max_abs_err || std::isnan(err)) c.max_abs_err = err;
    if (bounded && err / bound > c.max_bound_ratio) c.max_bound_ratio = err / bound;
  }
  return c;
}

KernelRun prepare(const KernelRequest& req) {
  KernelRun run;
  run.kernel = &kernels::find(req.args.kernel);
  const kernels::Kernel& k = *run.kernel;
  run.preset = req.preset ? req.preset : find_preset("trn2");
  for (const auto& [name, a] : req.inputs) {
    bool known = false;
    for (const auto& t : k.inputs) known |= t.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& t : k.inputs) names.push_back(t.name);
      throw InputError(fmt::format("{}: kernel {} has no input '{}' (its inputs: {})", named(name, a), k.name, name,
                                   fmt::join(names, ", ")));
    }
  }
  run.values = kernels::resolve(sizes_from_inputs(k, req.args, req.inputs));

  if (req.image) {
    if (req.image->kernel != k.function)
      throw InputError(fmt::format("{} holds kernel '{}', not --kernel {} ({})", req.image_origin, req.image->kernel,
                                   k.name, k.function));
    if (req.image->preset != run.preset->name)
      throw InputError(fmt::format("{} was traced for '{}', not --config {}", req.image_origin, req.image->preset,
                                   run.preset->name));
    run.program = *req.image;
  } else {
    nki::TraceOptions opts = req.trace;
    opts.dma_queues_used = req.args.dma_queues;
    run.program = kernels::build(k, run.values, *run.preset, opts);
  }

  std::mt19937_64 rng(req.fill.seed);
  for (const kernels::TensorSpec& spec : kernels::input_specs(k, run.values)) {
    auto it = req.inputs.find(spec.name);
    if (it == req.inputs.end()) {
      try {
        run.inputs[spec.name] = random_array(spec, rng, req.fill);
      } catch (const std::bad_alloc&) {
        throw InputError(fmt::format("input '{}' of shape {} ({} bytes) cannot be allocated on this host",
                                     spec.name, shape_text(spec.shape), spec.bytes()));
      }
      continue;
    }
    const Array& a = it->second;
    if (spec.zeros) {  // the kernel's parameters make this input zeros (the conv's --no-bias)
      std::string why = "the kernel's parameters";
      for (const kernels::Param& p : k.params)
        if (p.is_switch && p.name == spec.name) why = p.flag;
      throw InputError(fmt::format("{} gives input '{}', but {} makes it zeros: leave out one of the two",
                                   named(spec.name, a), spec.name, why));
    }
    if (a.elements() != spec.elements())
      throw InputError(fmt::format("{}: has {} elements, the kernel's input '{}' needs {}", named(spec.name, a),
                                   a.elements(), spec.name, spec.elements()));
    Array copy = a;
    copy.shape = spec.shape;
    run.inputs[spec.name] = std::move(copy);
  }
  return run;
}

void execute(KernelRun& run, const Options& opt, bool reference) {
  run.result = run_program(run.program, *run.preset, run.inputs, opt);
  run.reference.clear();
  run.compare.clear();
  run.checked = reference;
  run.correct = run.exact = true;
  if (!reference) return;
  kernels::ByteMap in;
  for (const auto& [name, a] : run.inputs) in[name] = Bytes(a.data(), a.data() + a.size_bytes());
  run.reference = kernels::reference(*run.kernel, run.values, in);
  kernels::ErrorBound bound;
  if (!run.kernel->exact) bound = kernels::error_bound(*run.kernel, run.values, in);
  for (const auto& [name, want] : run.reference) {
    auto it = run.result.outputs.find(name);
    if (it == run.result.outputs.end())
      throw SimError(fmt::format("the program has no output '{}' (kernel {}'s declared output)", name, run.kernel->name));
    const auto mag = bound.magnitude.find(name);
    const Compare c = compare(it->second, want, mag == bound.magnitude.end() ? nullptr : &mag->second, bound.roundings);
    run.correct &= c.close;
    run.exact &= c.exact;
    run.compare[name] = c;
  }
}

KernelRun run_kernel(const KernelRequest& req, const Options& opt, bool reference) {
  KernelRun run = prepare(req);
  execute(run, opt, reference);
  return run;
}

}  // namespace ncore::run
