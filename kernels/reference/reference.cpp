// The kernels' references. See reference.hpp (and why they share nothing with the golden model).
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "host_float.hpp"

namespace kernels::ref {
namespace {

namespace isa = ncore::isa;

size_t esize(isa::Dtype dt) { return isa::dtype_bytes(dt); }

// o[c] += w * x[c] (a multiply and an add, no fused rounding: -ffp-contract=off), compiled for
// AVX2 too and chosen at run time.
__attribute__((target_clones("avx2", "default"))) void axpy(double* o, const double* x, double w, int64_t n) {
  for (int64_t c = 0; c < n; ++c) o[c] += w * x[c];
}

}  // namespace

ByteMap vector_add(const Values& v, const ByteMap& in) {
  const Bytes& a = in.at("a_vec");
  const Bytes& b = in.at("b_vec");
  const isa::Dtype dt = v.dtype();
  const size_t esz = esize(dt), n = static_cast<size_t>(v["n"]);
  Bytes out(n * esz);
  for (size_t i = 0; i < n; ++i) store(&out[i * esz], dt, load(&a[i * esz], dt) + load(&b[i * esz], dt));
  return {{"out", std::move(out)}};
}

ByteMap transpose(const Values& v, const ByteMap& in) {
  const Bytes& a = in.at("a_tensor");
  const size_t rows = static_cast<size_t>(v["n"]), cols = static_cast<size_t>(v["m"]);
  const size_t esz = esize(v.dtype());
  Bytes out(a.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) std::memcpy(&out[(j * rows + i) * esz], &a[(i * cols + j) * esz], esz);
  return {{"out", std::move(out)}};
}

ByteMap matmul(const Values& v, const ByteMap& in) {
  const Bytes& l = in.at("lhsT");
  const Bytes& r = in.at("rhs");
  const size_t K = static_cast<size_t>(v["k"]), M = static_cast<size_t>(v["m"]), N = static_cast<size_t>(v["n"]);
  const isa::Dtype dt = v.dtype();
  const size_t esz = esize(dt);
  std::vector<double> acc(M * N, 0.0), row(N);
  for (size_t k = 0; k < K; ++k) {
    for (size_t j = 0; j < N; ++j) row[j] = load(&r[(k * N + j) * esz], dt);
    for (size_t i = 0; i < M; ++i) {
      const double w = load(&l[(k * M + i) * esz], dt);
      double* o = &acc[i * N];
      for (size_t j = 0; j < N; ++j) o[j] += w * row[j];
    }
  }
  Bytes out(M * N * esz);
  for (size_t i = 0; i < M * N; ++i) store_double(&out[i * esz], dt, acc[i]);
  return {{"result", std::move(out)}};
}

ByteMap conv(const Values& v, const ByteMap& in) {
  const isa::Dtype dt = v.dtype();
  const size_t esz = esize(dt);
  const int64_t B = v["batch"], Ci = v["in_channels"], Co = v["out_channels"], H = v["height"], Wd = v["width"],
                K = v["filter"];
  const int64_t p = v["pool_size"], Hout = H - K + 1, Wout = Wd - K + 1, Ho = Hout / p, Wo = Wout / p;
  auto floats = [&](const Bytes& b) {
    std::vector<double> f(b.size() / esz);
    for (size_t i = 0; i < f.size(); ++i) f[i] = load(&b[i * esz], dt);
    return f;
  };
  const std::vector<double> x = floats(in.at("X")), w = floats(in.at("W")), bias = floats(in.at("bias"));
  Bytes out(static_cast<size_t>(B * Co * Ho * Wo) * esz);
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
  return {{"out", std::move(out)}};
}

}  // namespace kernels::ref
