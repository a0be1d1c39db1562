// The kernel registry of the command-line tools, and plain C++ references. See registry.hpp.
#include "nki/registry.hpp"

#include <fmt/format.h>

#include <cstring>
#include <functional>

#include "kernels/vector_add.hpp"
#include "ncore/error.hpp"
#include "nki/nki.hpp"

namespace kernels {
namespace {

namespace isa = ncore::isa;

struct KernelDef {
  KernelInfo info;
  const char* function;  // the Program's kernel name
  std::function<nki::Tensor(const nki::Tensor&, const nki::Tensor&, const Args&)> fn;
  bool column_output;  // result shaped (n, 1) instead of (n,)
};

const std::vector<KernelDef>& defs() {
  static const std::vector<KernelDef> d = {
      {{"naive", "vector_add_naive: n <= 128, one (n, 1) tile per input, tensor_scalar add"},
       "vector_add_naive",
       [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_naive(a, b); },
       false},
      {{"tiled", "vector_add_tiled: --row-chunk rows per iteration (<= 128), tensor_scalar add"},
       "vector_add_tiled",
       [](const nki::Tensor& a, const nki::Tensor& b, const Args& x) { return vector_add_tiled(a, b, x.row_chunk); },
       false},
      {{"stream", "vector_add_stream: (128, n/128) view, --free-dim columns per tile, tensor_tensor add"},
       "vector_add_stream",
       [](const nki::Tensor& a, const nki::Tensor& b, const Args& x) { return vector_add_stream(a, b, x.free_dim); },
       false},
      {{"direct_alloc", "vector_add_direct_allocation: (128, 1000) tiles placed by mod_alloc, 4 per tensor; "
                        "n a multiple of 128000"},
       "vector_add_direct_allocation",
       [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_direct_allocation(a, b); },
       true},
      {{"direct_alloc_bad", "vector_add_direct_allocation_bad: as direct_alloc with a, b and the result all at SBUF "
                            "offset 0; its output is wrong on purpose"},
       "vector_add_direct_allocation_bad",
       [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_direct_allocation_bad(a, b); },
       true},
  };
  return d;
}

const KernelDef& find(const std::string& name) {
  for (const auto& d : defs())
    if (d.info.name == name) return d;
  std::string known;
  for (const auto& d : defs()) known += (known.empty() ? "" : ", ") + d.info.name;
  throw ncore::KernelError(fmt::format("unknown kernel '{}' (known: {})", name, known));
}

void check_args(const Args& a) {
  if (a.n <= 0) throw ncore::KernelError(fmt::format("the vector length n must be positive, got {}", a.n));
  if (!isa::is_valid(a.dtype))
    throw ncore::KernelError(fmt::format("invalid dtype {}", static_cast<unsigned>(a.dtype)));
}

float bf16_to_float(uint16_t h) {
  const uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x0040u);  // quiet NaN
  const uint32_t lsb = (b >> 16) & 1u;
  return static_cast<uint16_t>((b + 0x7fffu + lsb) >> 16);  // round to nearest, ties to even
}

float load(const uint8_t* p, isa::Dtype dt) {
  switch (dt) {
    case isa::Dtype::fp32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case isa::Dtype::bf16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_float(h);
    }
    case isa::Dtype::fp16: {
      _Float16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
  }
  return 0;
}

void store(uint8_t* p, isa::Dtype dt, float v) {
  switch (dt) {
    case isa::Dtype::fp32: std::memcpy(p, &v, 4); break;
    case isa::Dtype::bf16: {
      const uint16_t h = float_to_bf16(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case isa::Dtype::fp16: {
      const _Float16 h = static_cast<_Float16>(v);
      std::memcpy(p, &h, 2);
      break;
    }
  }
}

}  // namespace

uint64_t TensorSpec::bytes() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n * isa::dtype_bytes(dtype);
}

const std::vector<KernelInfo>& list() {
  static const std::vector<KernelInfo> l = [] {
    std::vector<KernelInfo> v;
    for (const auto& d : defs()) v.push_back(d.info);
    return v;
  }();
  return l;
}

ncore::Program build(const Args& args, const ncore::Preset& preset) {
  const KernelDef& k = find(args.kernel);
  check_args(args);
  nki::TraceOptions opts;
  opts.dma_queues_used = args.dma_queues;
  return nki::trace(
      k.function, preset,
      [&](nki::Tracer& t) {
        const nki::Dtype dt = nki::from_isa(args.dtype);
        nki::Tensor a = t.input("a_vec", {args.n}, dt);
        nki::Tensor b = t.input("b_vec", {args.n}, dt);
        t.output(k.fn(a, b, args));
      },
      opts);
}

std::vector<InputSpec> inputs(const Args& args) {
  find(args.kernel);
  check_args(args);
  return {{"a_vec", {args.n}, args.dtype}, {"b_vec", {args.n}, args.dtype}};
}

TensorSpec output(const Args& args) {
  const KernelDef& k = find(args.kernel);
  check_args(args);
  if (k.column_output) return {"out", {args.n, 1}, args.dtype};
  return {"out", {args.n}, args.dtype};
}

std::vector<uint8_t> reference(const Args& args, const std::map<std::string, std::vector<uint8_t>>& in) {
  const std::vector<InputSpec> specs = inputs(args);
  for (const auto& s : specs) {
    auto it = in.find(s.name);
    if (it == in.end()) throw ncore::InputError(fmt::format("reference: input '{}' is missing", s.name));
    if (it->second.size() != s.bytes())
      throw ncore::InputError(fmt::format("reference: input '{}' has {} bytes, expected {} ({} x {})", s.name,
                                          it->second.size(), s.bytes(), args.n, isa::to_string(s.dtype)));
  }
  const std::vector<uint8_t>& a = in.at("a_vec");
  const std::vector<uint8_t>& b = in.at("b_vec");
  const size_t esz = isa::dtype_bytes(args.dtype);
  std::vector<uint8_t> out(static_cast<size_t>(args.n) * esz);
  for (size_t i = 0; i < static_cast<size_t>(args.n); ++i) {
    const float s = load(&a[i * esz], args.dtype) + load(&b[i * esz], args.dtype);
    store(&out[i * esz], args.dtype, s);
  }
  return out;
}

}  // namespace kernels
