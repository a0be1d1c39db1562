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

ByteMap causal_mask(const Values& v, const ByteMap& in) {
  const Bytes& a = in.at("scores");
  const size_t rows = static_cast<size_t>(v["n"]), cols = static_cast<size_t>(v["m"]);
  const isa::Dtype dt = v.dtype();
  const size_t esz = esize(dt);
  Bytes out(a);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = i + 1; j < cols; ++j) store(&out[(i * cols + j) * esz], dt, -INFINITY);
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

namespace {

// The inputs' values in double; with `magnitude`, their absolute values.
std::vector<double> values(const Bytes& b, isa::Dtype dt, bool magnitude) {
  const size_t esz = esize(dt);
  std::vector<double> f(b.size() / esz);
  for (size_t i = 0; i < f.size(); ++i) f[i] = magnitude ? std::fabs(load(&b[i * esz], dt)) : load(&b[i * esz], dt);
  return f;
}

// lhsT (k, m).T @ rhs (k, n) in double; with `magnitude`, the sums of |products| instead.
std::vector<double> matmul_sums(const Values& v, const ByteMap& in, bool magnitude) {
  const size_t K = static_cast<size_t>(v["k"]), M = static_cast<size_t>(v["m"]), N = static_cast<size_t>(v["n"]);
  const std::vector<double> l = values(in.at("lhsT"), v.dtype(), magnitude), r = values(in.at("rhs"), v.dtype(), magnitude);
  std::vector<double> acc(M * N, 0.0);
  for (size_t k = 0; k < K; ++k)
    for (size_t i = 0; i < M; ++i) axpy(&acc[i * N], &r[k * N], l[k * M + i], static_cast<int64_t>(N));
  return acc;
}

// maxpool(conv2d(X, W) + bias) in double; with `magnitude`, per pooled element the largest sum
// of |products| + |bias| over its window instead. The output channels are split over the
// machine's cores.
std::vector<double> conv_sums(const Values& v, const ByteMap& in, bool magnitude) {
  const isa::Dtype dt = v.dtype();
  const int64_t B = v["batch"], Ci = v["in_channels"], Co = v["out_channels"], H = v["height"], Wd = v["width"],
                K = v["filter"];
  const int64_t p = v["pool_size"], Hout = H - K + 1, Wout = Wd - K + 1, Ho = Hout / p, Wo = Wout / p;
  const std::vector<double> x = values(in.at("X"), dt, magnitude), w = values(in.at("W"), dt, magnitude),
                            bias = values(in.at("bias"), dt, magnitude);
  std::vector<double> out(static_cast<size_t>(B * Co * Ho * Wo));
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
        // whole p x p windows; the rows and columns past the last one are dropped (floor)
        for (int64_t y = 0; y < Ho; ++y)
          for (int64_t c = 0; c < Wo; ++c) {
            double m = acc[(y * p) * Wout + c * p];
            for (int64_t dy = 0; dy < p; ++dy)
              for (int64_t dx = 0; dx < p; ++dx) m = std::max(m, acc[(y * p + dy) * Wout + c * p + dx]);
            out[static_cast<size_t>(((b * Co + co) * Ho + y) * Wo + c)] = m;
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

// Each value rounded once to the dtype.
Bytes rounded(const std::vector<double>& sums, isa::Dtype dt) {
  const size_t esz = esize(dt);
  Bytes out(sums.size() * esz);
  for (size_t i = 0; i < sums.size(); ++i) store_double(&out[i * esz], dt, sums[i]);
  return out;
}

}  // namespace

ByteMap matmul(const Values& v, const ByteMap& in) { return {{"result", rounded(matmul_sums(v, in, false), v.dtype())}}; }

ErrorBound matmul_bound(const Values& v, const ByteMap& in) {
  // k multiply-adds down the array's rows (one rounding each), one PSUM accumulation per further
  // 128 rows of k; one more for safety
  return {{{"result", matmul_sums(v, in, true)}}, v["k"] + (v["k"] + 127) / 128 + 1};
}

ByteMap conv(const Values& v, const ByteMap& in) { return {{"out", rounded(conv_sums(v, in, false), v.dtype())}}; }

ErrorBound conv_bound(const Values& v, const ByteMap& in) {
  // Cin * K * K multiply-adds (one rounding each), a PSUM accumulation per 128-channel matmul
  // (Cin / 128 * K * K of them), the bias added on the way out (pooling is exact)
  const int64_t kk = v["filter"] * v["filter"];
  return {{{"out", conv_sums(v, in, true)}}, v["in_channels"] * kk + (v["in_channels"] + 127) / 128 * kk + 1};
}

}  // namespace kernels::ref
