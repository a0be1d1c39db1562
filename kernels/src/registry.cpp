// The kernel registry and what is computed from a declaration: parameter values, tensor specs,
// tracing, the reference call. See kernel.hpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <deque>
#include <stdexcept>

#include "kernels/kernel.hpp"
#include "ncore/error.hpp"
#include "ncore/size.hpp"
#include "nki/tracer.hpp"

namespace kernels {
namespace {

std::vector<const Kernel*>& registry() {
  static std::vector<const Kernel*> r;
  return r;
}

std::deque<Kernel>& storage() {  // the declarations, alive for the whole program
  static std::deque<Kernel> s;
  return s;
}

const Param* find_param(const Kernel& k, const std::string& name) {
  for (const auto& p : k.params)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<TensorSpec> specs(const std::vector<TensorDecl>& decls, const Values& v) {
  std::vector<TensorSpec> out;
  for (const auto& d : decls) out.push_back({d.name, d.shape(v), v.dtype(), d.zeros && d.zeros(v)});
  return out;
}

}  // namespace

Register::Register(Kernel k) {
  for (const Kernel* e : registry())
    if (e->name == k.name) throw std::logic_error("kernel '" + k.name + "' is declared twice");
  if (!k.exact && !k.error_bound) throw std::logic_error("kernel '" + k.name + "' is not exact but has no error bound");
  registry().push_back(&storage().emplace_back(std::move(k)));
}

const std::vector<const Kernel*>& all() { return registry(); }

const Kernel& find(const std::string& name) {
  for (const Kernel* k : registry())
    if (k->name == name) return *k;
  std::vector<std::string> known;
  for (const Kernel* k : registry()) known.push_back(k->name);
  throw ncore::KernelError(fmt::format("unknown kernel '{}' (known: {})", name, fmt::join(known, ", ")));
}

int64_t Values::operator[](const std::string& name) const {
  for (const auto& [k, v] : v_)
    if (k == name) return v;
  throw std::out_of_range("kernel parameter '" + name + "' is not declared");
}

std::string Values::text() const {
  std::string s;
  for (const auto& [name, v] : v_) s += fmt::format("{}{}={}", s.empty() ? "" : " ", name, v);
  return s;
}

Values resolve(const Args& args) {
  const Kernel& k = find(args.kernel);
  if (!ncore::isa::is_valid(args.dtype))
    throw ncore::KernelError(fmt::format("invalid dtype {}", static_cast<unsigned>(args.dtype)));
  for (const auto& [name, v] : args.given)
    if (!find_param(k, name))
      throw ncore::KernelError(fmt::format("kernel {} has no parameter '{}'", k.name, name));
  std::vector<std::pair<std::string, int64_t>> vals;
  for (const Param& p : k.params) {
    auto it = args.given.find(p.name);
    const bool given = it != args.given.end();
    int64_t v = given ? it->second : p.def;
    if (p.is_switch) {
      vals.emplace_back(p.name, v ? 1 : 0);
      continue;
    }
    if (p.required && (!given || v == 0))
      throw ncore::KernelError(fmt::format("{}: kernel {} needs its {} (a positive number)", p.flag, k.name, p.what));
    if (!p.default_from.empty() && v == 0) {  // 0: the other parameter's value
      for (const auto& [name, value] : vals)
        if (name == p.default_from) v = value;
    } else if (!p.default_from.empty() && v < 0) {
      throw ncore::KernelError(fmt::format("{} must be positive (or 0 for the default, {}), got {} (the {})", p.flag,
                                           p.default_from, v, p.what));
    } else if (v <= 0) {
      throw ncore::KernelError(fmt::format("{} must be positive, got {} (the {})", p.flag, v, p.what));
    }
    vals.emplace_back(p.name, v);
  }
  Values out(std::move(vals), args.dtype);
  if (k.check) k.check(out);
  return out;
}

uint64_t TensorSpec::elements() const {
  const auto n = ncore::count_product(shape.begin(), shape.end());
  if (!n) throw ncore::KernelError(fmt::format("{} `{}` of shape ({}) has more than 2^60 elements", "tensor", name,
                                               fmt::join(shape, ", ")));
  return *n;
}

uint64_t TensorSpec::bytes() const { return elements() * ncore::isa::dtype_bytes(dtype); }

std::vector<TensorSpec> input_specs(const Kernel& k, const Values& v) { return specs(k.inputs, v); }
std::vector<TensorSpec> output_specs(const Kernel& k, const Values& v) { return specs(k.outputs, v); }
std::vector<TensorSpec> input_specs(const Args& args) { return input_specs(find(args.kernel), resolve(args)); }
std::vector<TensorSpec> output_specs(const Args& args) { return output_specs(find(args.kernel), resolve(args)); }

ncore::Program build(const Kernel& k, const Values& v, const ncore::Preset& preset, const nki::TraceOptions& opts) {
  const nki::Dtype dt = nki::from_isa(v.dtype());
  return nki::trace(
      k.function, preset,
      [&](nki::Tracer& t) {
        Inputs in;
        for (const TensorSpec& s : input_specs(k, v)) {
          nki::Shape shape(s.shape);
          in.push_back(t.input(s.name, shape, dt));
        }
        const Outputs out = k.body(in, v);
        if (out.size() != k.outputs.size())
          throw ncore::KernelError(fmt::format("kernel {} returned {} result(s), its declaration names {}", k.name,
                                               out.size(), k.outputs.size()));
        for (size_t i = 0; i < out.size(); ++i) {
          t.output(out[i]);
          if (out[i].name() != k.outputs[i].name)
            throw ncore::KernelError(fmt::format("kernel {} returned `{}` where its declaration names output '{}'",
                                                 k.name, out[i].name(), k.outputs[i].name));
        }
      },
      opts);
}

ncore::Program build(const Args& args, const ncore::Preset& preset) {
  nki::TraceOptions opts;
  opts.dma_queues_used = args.dma_queues;
  return build(find(args.kernel), resolve(args), preset, opts);
}

namespace {

void check_inputs(const Kernel& k, const Values& v, const ByteMap& inputs) {
  for (const auto& s : input_specs(k, v)) {
    auto it = inputs.find(s.name);
    if (it == inputs.end()) throw ncore::InputError(fmt::format("reference: input '{}' is missing", s.name));
    if (it->second.size() != s.bytes())
      throw ncore::InputError(fmt::format("reference: input '{}' has {} bytes, expected {} ({} x {})", s.name,
                                          it->second.size(), s.bytes(), fmt::join(s.shape, " x "),
                                          ncore::isa::to_string(s.dtype)));
  }
}

}  // namespace

ByteMap reference(const Kernel& k, const Values& v, const ByteMap& inputs) {
  check_inputs(k, v, inputs);
  return k.reference(v, inputs);
}

ErrorBound error_bound(const Kernel& k, const Values& v, const ByteMap& inputs) {
  if (!k.error_bound) throw ncore::KernelError(fmt::format("kernel {} is exact: it has no error bound", k.name));
  check_inputs(k, v, inputs);
  return k.error_bound(v, inputs);
}

ByteMap reference(const Args& args, const ByteMap& inputs) {
  return reference(find(args.kernel), resolve(args), inputs);
}

Param vector_length() {
  return Param{.name = "n",
               .flag = "-n",
               .help = "vector length (elements; taken from the --a/--b files when given)",
               .required = true,
               .what = "vector length",
               .from_inputs = {{"a_vec", -1}, {"b_vec", -1}}};
}

std::vector<Param> matrix_dims(const std::string& input, const std::string& what) {
  return {Param{.name = "n",
                .flag = "-n",
                .help = "rows of the input " + input + " (a multiple of 128)",
                .required = true,
                .what = "row count",
                .from_inputs = {{input, 0}}},
          Param{.name = "m",
                .flag = "-m",
                .help = "columns of " + input + " (" + what + "default: n)",
                .what = "column count",
                .default_from = "n",
                .from_inputs = {{input, 1}}}};
}

TensorDecl matrix_input(const std::string& name, const std::string& help) {
  return {.name = name,
          .shape = [](const Values& v) { return Dims{v["n"], v["m"]}; },
          .help = help,
          .dims = {"rows", "columns"}};
}

}  // namespace kernels
