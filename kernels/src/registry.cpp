// The kernel registry of the command-line tools, and plain C++ references. See registry.hpp.
//
// The references are independent of the model: no ISA, no golden model, only the inputs'
// bytes and C++ arithmetic. Vector add: a + b in fp32 (exact, then one rounding to the
// dtype: the engines' numerics). Transpose: a byte permutation. Matmul: the products summed
// in double and rounded once to the dtype (double rounding through fp32 avoided), so the
// Program's fp32 sums differ from it by their accumulation error only.
#include "nki/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "kernels/conv.hpp"
#include "kernels/matrix.hpp"
#include "kernels/vector_add.hpp"
#include "ncore/error.hpp"
#include "nki/nki.hpp"

namespace kernels {
namespace {

namespace isa = ncore::isa;
using Inputs = std::map<std::string, std::vector<uint8_t>>;

// A kernel of the registry: its description, how to trace it (declare the inputs, call the
// kernel, mark the result), its HBM inputs and output, and its plain C++ reference (called
// with inputs already checked against the specs).
struct KernelDef {
  KernelInfo info;
  const char* function;  // the Program's kernel name
  std::function<void(nki::Tracer&, const Args&, nki::Dtype)> body;
  std::function<std::vector<InputSpec>(const Args&)> inputs;
  std::function<TensorSpec(const Args&)> output;
  std::function<std::vector<uint8_t>(const Args&, const Inputs&)> reference;
};

std::vector<uint8_t> vector_add_reference(const Args& args, const Inputs& in);
std::vector<uint8_t> transpose_reference(const Args& args, const Inputs& in);
std::vector<uint8_t> matmul_reference(const Args& args, const Inputs& in);
std::vector<uint8_t> conv_reference(const Args& args, const Inputs& in);

int64_t transpose_cols(const Args& a) { return a.m == 0 ? a.n : a.m; }

using VectorKernel = nki::Tensor (*)(const nki::Tensor&, const nki::Tensor&, const Args&);

// The five vector-add kernels: inputs a_vec and b_vec of shape (n,).
KernelDef vector_add(const char* name, const char* doc, const char* function, VectorKernel fn, bool column_output,
                     bool row_chunk = false, bool free_dim = false) {
  KernelDef d;
  d.info.name = name;
  d.info.doc = doc;
  d.info.sizes = {{'n', "vector length", "vector length (elements)", true, "", 1}};
  d.info.row_chunk = row_chunk;
  d.info.free_dim = free_dim;
  d.function = function;
  d.body = [fn](nki::Tracer& t, const Args& a, nki::Dtype dt) {
    nki::Tensor x = t.input("a_vec", {a.n}, dt);
    nki::Tensor y = t.input("b_vec", {a.n}, dt);
    t.output(fn(x, y, a));
  };
  d.inputs = [](const Args& a) {
    return std::vector<InputSpec>{{"a_vec", {a.n}, a.dtype}, {"b_vec", {a.n}, a.dtype}};
  };
  d.output = [column_output](const Args& a) {
    return column_output ? TensorSpec{"out", {a.n, 1}, a.dtype} : TensorSpec{"out", {a.n}, a.dtype};
  };
  d.reference = vector_add_reference;
  return d;
}

using MatmulKernel = nki::Tensor (*)(const nki::Tensor&, const nki::Tensor&);

// The matmul kernels: inputs lhsT (k, m) and rhs (k, n), result (m, n).
KernelDef matmul(const char* name, const char* doc, const char* function, MatmulKernel fn) {
  KernelDef mm;
  mm.info.name = name;
  mm.info.doc = doc;
  mm.info.sizes = {
      {'k', "contraction dimension", "contraction dimension: rows of lhsT and rhs (a multiple of 128)", true, "", 128},
      {'m', "row count", "columns of lhsT, rows of the result (a multiple of 128)", true, "", 128},
      {'n', "column count", "columns of rhs and of the result (a multiple of 512)", true, "", 512}};
  mm.info.exact = false;
  mm.function = function;
  mm.body = [fn](nki::Tracer& tr, const Args& a, nki::Dtype dt) {
    nki::Tensor lhsT = tr.input("lhsT", {a.k, a.m}, dt);
    nki::Tensor rhs = tr.input("rhs", {a.k, a.n}, dt);
    tr.output(fn(lhsT, rhs));
  };
  mm.inputs = [](const Args& a) {
    return std::vector<InputSpec>{{"lhsT", {a.k, a.m}, a.dtype}, {"rhs", {a.k, a.n}, a.dtype}};
  };
  mm.output = [](const Args& a) { return TensorSpec{"result", {a.m, a.n}, a.dtype}; };
  mm.reference = matmul_reference;
  return mm;
}

std::vector<KernelDef> make_defs() {
  std::vector<KernelDef> v;
  v.push_back(vector_add(
      "naive", "vector_add_naive: n <= 128, one (n, 1) tile per input, tensor_scalar add", "vector_add_naive",
      [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_naive(a, b); }, false));
  v.push_back(vector_add(
      "tiled", "vector_add_tiled: --row-chunk rows per iteration (<= 128), tensor_scalar add", "vector_add_tiled",
      [](const nki::Tensor& a, const nki::Tensor& b, const Args& x) { return vector_add_tiled(a, b, x.row_chunk); },
      false, true, false));
  v.push_back(vector_add(
      "stream", "vector_add_stream: (128, n/128) view, --free-dim columns per tile, tensor_tensor add",
      "vector_add_stream",
      [](const nki::Tensor& a, const nki::Tensor& b, const Args& x) { return vector_add_stream(a, b, x.free_dim); },
      false, false, true));
  v.push_back(vector_add(
      "direct_alloc",
      "vector_add_direct_allocation: (128, 1000) tiles placed by mod_alloc, 4 per tensor; n a multiple of 128000",
      "vector_add_direct_allocation",
      [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_direct_allocation(a, b); },
      true));
  v.push_back(vector_add(
      "direct_alloc_bad",
      "vector_add_direct_allocation_bad: as direct_alloc with a, b and the result all at SBUF offset 0; its output is "
      "wrong on purpose",
      "vector_add_direct_allocation_bad",
      [](const nki::Tensor& a, const nki::Tensor& b, const Args&) { return vector_add_direct_allocation_bad(a, b); },
      true));

  KernelDef t;
  t.info.name = "transpose";
  t.info.doc = "matrix_transpose: a_tensor (n, m) to out (m, n) with nc_transpose on the tensor engine; n and m "
               "multiples of 128 (m = n when not given); exact for finite inputs (-0 becomes +0)";
  t.info.sizes = {{'n', "row count", "rows of the input a_tensor (a multiple of 128)", true, "", 128},
                  {'m', "column count", "columns of a_tensor (a multiple of 128; default: n)", false, "n", 128}};
  t.function = "matrix_transpose";
  t.body = [](nki::Tracer& tr, const Args& a, nki::Dtype dt) {
    nki::Tensor x = tr.input("a_tensor", {a.n, transpose_cols(a)}, dt);
    tr.output(matrix_transpose(x));
  };
  t.inputs = [](const Args& a) { return std::vector<InputSpec>{{"a_tensor", {a.n, transpose_cols(a)}, a.dtype}}; };
  t.output = [](const Args& a) { return TensorSpec{"out", {transpose_cols(a), a.n}, a.dtype}; };
  t.reference = transpose_reference;
  v.push_back(std::move(t));

  v.push_back(matmul(
      "matmul",
      "matmul_tiled (nki_matmul_tiled_): result (m, n) = lhsT (k, m).T @ rhs (k, n), 128 x 512 tiles accumulated "
      "in PSUM, both input tiles loaded for every multiply; k and m multiples of 128, n a multiple of 512; sums in "
      "fp32 (compare with a tolerance)",
      "matmul_tiled", matmul_tiled));
  KernelDef cv;
  cv.info.name = "conv";
  cv.info.doc = "fused_conv2d_maxpool (handout part 2): out = maxpool(conv2d(X, W) + bias, --pool-size) for X "
                "[--batch, --in-channels, --height, --width] and W [--out-channels, --in-channels, --filter, --filter], "
                "stride 1, no padding; channels multiples of 128; inputs from --x/--w/--bias .npy files or random "
                "(--no-bias: zeros); sums in fp32 (compare with a tolerance)";
  cv.info.conv = true;
  cv.info.exact = false;
  cv.function = "fused_conv2d_maxpool";
  cv.body = [](nki::Tracer& tr, const Args& a, nki::Dtype dt) {
    nki::Tensor x = tr.input("X", {a.batch, a.in_channels, a.height, a.width}, dt);
    nki::Tensor w = tr.input("W", {a.out_channels, a.in_channels, a.filter, a.filter}, dt);
    nki::Tensor b = tr.input("bias", {a.out_channels}, dt);
    tr.output(fused_conv2d_maxpool(x, w, b, a.pool_size));
  };
  cv.inputs = [](const Args& a) {
    std::vector<InputSpec> v{{"X", {a.batch, a.in_channels, a.height, a.width}, a.dtype},
                             {"W", {a.out_channels, a.in_channels, a.filter, a.filter}, a.dtype},
                             {"bias", {a.out_channels}, a.dtype}};
    v[2].zeros = !a.bias;
    return v;
  };
  cv.output = [](const Args& a) {
    const int64_t p = a.pool_size > 0 ? a.pool_size : 1;
    return TensorSpec{"out", {a.batch, a.out_channels, (a.height - a.filter + 1) / p, (a.width - a.filter + 1) / p},
                      a.dtype};
  };
  cv.reference = conv_reference;
  v.push_back(matmul(
      "matmul_blocked",
      "matmul_blocked: the same product with lhsT and rhs loaded once per block into the SBUF and reused by every "
      "tile of the block, loads overlapping the multiplies (the tensor engine kept busy); same sizes and bits as "
      "matmul",
      "matmul_blocked", matmul_blocked));
  v.push_back(std::move(cv));
  return v;
}

const std::vector<KernelDef>& defs() {
  static const std::vector<KernelDef> d = make_defs();
  return d;
}

const KernelDef& find(const std::string& name) {
  for (const auto& d : defs())
    if (d.info.name == name) return d;
  std::string known;
  for (const auto& d : defs()) known += (known.empty() ? "" : ", ") + d.info.name;
  throw ncore::KernelError(fmt::format("unknown kernel '{}' (known: {})", name, known));
}

int64_t size_value(const Args& a, char flag) {
  switch (flag) {
    case 'n': return a.n;
    case 'm': return a.m;
    case 'k': return a.k;
  }
  return 0;
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


// A double rounded once to the dtype, to nearest even. fp32 and fp16: the host's conversion
// (one rounding). bf16: through fp32 rounded to odd, which is exact for a second rounding to
// the 8-bit significand (fp32 carries more than 2 extra bits).
void store_double(uint8_t* p, isa::Dtype dt, double v) {
  switch (dt) {
    case isa::Dtype::fp32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case isa::Dtype::fp16: {
      const _Float16 h = static_cast<_Float16>(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case isa::Dtype::bf16: {
      float f = static_cast<float>(v);
      if (!std::isnan(v) && static_cast<double>(f) != v) {
        // Round to odd: truncate toward zero, then set the last bit.
        if (std::isinf(f) || std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        b |= 1u;
        std::memcpy(&f, &b, 4);
      }
      const uint16_t h = float_to_bf16(f);
      std::memcpy(p, &h, 2);
      break;
    }
  }
}

std::vector<uint8_t> vector_add_reference(const Args& args, const Inputs& in) {
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

std::vector<uint8_t> transpose_reference(const Args& args, const Inputs& in) {
  const std::vector<uint8_t>& a = in.at("a_tensor");
  const size_t rows = static_cast<size_t>(args.n), cols = static_cast<size_t>(transpose_cols(args));
  const size_t esz = isa::dtype_bytes(args.dtype);
  std::vector<uint8_t> out(a.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) std::memcpy(&out[(j * rows + i) * esz], &a[(i * cols + j) * esz], esz);
  return out;
}

// o[c] += w * x[c] (a multiply and an add, no fused rounding: -ffp-contract=off), compiled for
// AVX2 too and chosen at run time.
__attribute__((target_clones("avx2", "default"))) void axpy(double* o, const double* x, double w, int64_t n) {
  for (int64_t c = 0; c < n; ++c) o[c] += w * x[c];
}

// Conv: per output channel, the sums over (ci, i, j) in double, plus the bias, max-pooled, then
// one rounding to the dtype. The output channels are split over the machine's cores.
std::vector<uint8_t> conv_reference(const Args& a, const Inputs& in) {
  const isa::Dtype dt = a.dtype;
  const size_t esz = isa::dtype_bytes(dt);
  const int64_t B = a.batch, Ci = a.in_channels, Co = a.out_channels, H = a.height, Wd = a.width, K = a.filter;
  const int64_t p = a.pool_size, Hout = H - K + 1, Wout = Wd - K + 1, Ho = Hout / p, Wo = Wout / p;
  auto floats = [&](const std::vector<uint8_t>& b) {
    std::vector<double> v(b.size() / esz);
    for (size_t i = 0; i < v.size(); ++i) v[i] = load(&b[i * esz], dt);
    return v;
  };
  const std::vector<double> x = floats(in.at("X")), w = floats(in.at("W")), bias = floats(in.at("bias"));
  std::vector<uint8_t> out(static_cast<size_t>(B * Co * Ho * Wo) * esz);
  auto work = [&](int64_t co_begin, int64_t co_end) {
    std::vector<double> acc(static_cast<size_t>(Hout * Wout));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t co = co_begin; co < co_end; ++co) {
        std::fill(acc.begin(), acc.end(), bias[co]);
        for (int64_t ci = 0; ci < Ci; ++ci)
          for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) {
              const double wv = w[((co * Ci + ci) * K + i) * K + j];
              for (int64_t y = 0; y < Hout; ++y) axpy(&acc[y * Wout], &x[((b * Ci + ci) * H + y + i) * Wd + j], wv, Wout);
            }
        for (int64_t y = 0; y < Ho; ++y)
          for (int64_t c = 0; c < Wo; ++c) {
            double m = acc[(y * p) * Wout + c * p];
            for (int64_t dy = 0; dy < p; ++dy)
              for (int64_t dx = 0; dx < p; ++dx) m = std::max(m, acc[(y * p + dy) * Wout + c * p + dx]);
            store_double(&out[static_cast<size_t>(((b * Co + co) * Ho + y) * Wo + c) * esz], dt, m);
          }
      }
  };
  const int64_t nt = std::max<int64_t>(1, std::min<int64_t>(Co, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < nt; ++t) threads.emplace_back(work, Co * t / nt, Co * (t + 1) / nt);
  work(0, Co / nt);
  for (auto& t : threads) t.join();
  return out;
}

std::vector<uint8_t> matmul_reference(const Args& args, const Inputs& in) {
  const std::vector<uint8_t>& l = in.at("lhsT");
  const std::vector<uint8_t>& r = in.at("rhs");
  const size_t K = static_cast<size_t>(args.k), M = static_cast<size_t>(args.m), N = static_cast<size_t>(args.n);
  const isa::Dtype dt = args.dtype;
  const size_t esz = isa::dtype_bytes(dt);
  std::vector<double> acc(M * N, 0.0), row(N);
  for (size_t k = 0; k < K; ++k) {
    for (size_t j = 0; j < N; ++j) row[j] = load(&r[(k * N + j) * esz], dt);
    for (size_t i = 0; i < M; ++i) {
      const double w = load(&l[(k * M + i) * esz], dt);
      double* o = &acc[i * N];
      for (size_t j = 0; j < N; ++j) o[j] += w * row[j];
    }
  }
  std::vector<uint8_t> out(M * N * esz);
  for (size_t i = 0; i < M * N; ++i) store_double(&out[i * esz], dt, acc[i]);
  return out;
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

const KernelInfo& info(const std::string& name) { return find(name).info; }

void check_args(const Args& a) {
  const KernelDef& k = find(a.kernel);
  for (const SizeArg& s : k.info.sizes) {
    const int64_t v = size_value(a, s.flag);
    if (s.required && v == 0)
      throw ncore::KernelError(fmt::format("-{}: kernel {} needs its {} (a positive number)", s.flag, a.kernel, s.what));
    if (s.required && v < 0)
      throw ncore::KernelError(fmt::format("the {} {} must be positive, got {}", s.what, s.flag, v));
    if (!s.required && v < 0)
      throw ncore::KernelError(fmt::format("the {} {} must be positive (or 0 for the default, {}), got {}", s.what,
                                           s.flag, s.default_doc, v));
  }
  if (k.info.conv) {
    const std::pair<const char*, int64_t> sizes[] = {{"--batch", a.batch},           {"--in-channels", a.in_channels},
                                                     {"--out-channels", a.out_channels}, {"--height", a.height},
                                                     {"--width", a.width},           {"--filter", a.filter},
                                                     {"--pool-size", a.pool_size}};
    for (const auto& [flag, v] : sizes)
      if (v <= 0) throw ncore::KernelError(fmt::format("{} must be positive, got {}", flag, v));
  }
  if (!isa::is_valid(a.dtype))
    throw ncore::KernelError(fmt::format("invalid dtype {}", static_cast<unsigned>(a.dtype)));
}

std::vector<std::pair<std::string, int64_t>> arg_values(const Args& a) {
  const KernelDef& k = find(a.kernel);
  std::vector<std::pair<std::string, int64_t>> out;
  for (const SizeArg& s : k.info.sizes) {
    int64_t v = size_value(a, s.flag);
    if (!s.required && v == 0 && !s.default_doc.empty()) v = size_value(a, s.default_doc[0]);
    out.emplace_back(std::string(1, s.flag), v);
  }
  if (k.info.row_chunk) out.emplace_back("row_chunk", a.row_chunk);
  if (k.info.free_dim) out.emplace_back("free_dim", a.free_dim);
  if (k.info.conv) {
    out.emplace_back("batch", a.batch);
    out.emplace_back("in_channels", a.in_channels);
    out.emplace_back("out_channels", a.out_channels);
    out.emplace_back("height", a.height);
    out.emplace_back("width", a.width);
    out.emplace_back("filter", a.filter);
    out.emplace_back("pool_size", a.pool_size);
    out.emplace_back("bias", a.bias ? 1 : 0);
  }
  return out;
}

std::string args_text(const Args& a) {
  std::string s;
  for (const auto& [name, v] : arg_values(a)) s += fmt::format("{}{}={}", s.empty() ? "" : " ", name, v);
  return s;
}

ncore::Program build(const Args& args, const ncore::Preset& preset) {
  const KernelDef& k = find(args.kernel);
  check_args(args);
  nki::TraceOptions opts;
  opts.dma_queues_used = args.dma_queues;
  const nki::Dtype dt = nki::from_isa(args.dtype);
  return nki::trace(
      k.function, preset, [&](nki::Tracer& t) { k.body(t, args, dt); }, opts);
}

std::vector<InputSpec> inputs(const Args& args) {
  const KernelDef& k = find(args.kernel);
  check_args(args);
  return k.inputs(args);
}

TensorSpec output(const Args& args) {
  const KernelDef& k = find(args.kernel);
  check_args(args);
  return k.output(args);
}

std::vector<uint8_t> reference(const Args& args, const Inputs& in) {
  const KernelDef& k = find(args.kernel);
  for (const auto& s : inputs(args)) {
    auto it = in.find(s.name);
    if (it == in.end()) throw ncore::InputError(fmt::format("reference: input '{}' is missing", s.name));
    if (it->second.size() != s.bytes())
      throw ncore::InputError(fmt::format("reference: input '{}' has {} bytes, expected {} ({} x {})", s.name,
                                          it->second.size(), s.bytes(), fmt::join(s.shape, " x "),
                                          isa::to_string(s.dtype)));
  }
  return k.reference(args, in);
}

}  // namespace kernels
