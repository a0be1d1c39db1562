// The composite calls from C++ (kernels/nki/src/compose.cpp): a kernel using nisa::iota,
// nl::shared_constant, nl::where, nisa::tensor_tensor_scan, nisa::bn_stats and nisa::bn_aggr,
// traced and run on the golden model, against the same arithmetic written out here in plain
// floats (the Python front end's tests hold the same calls to NumPy).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "golden_model.hpp"
#include "nki/nki.hpp"

namespace {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;

constexpr int64_t P = 4, F = 6;

std::vector<float> read(const ncore::GoldenModel& g, const ncore::Program& p, const char* name) {
  const ncore::HbmTensor* t = p.find_tensor(name);
  std::vector<float> v(t->bytes / 4);
  std::memcpy(v.data(), g.hbm() + t->offset, t->bytes);
  return v;
}

}  // namespace

TEST_CASE("composite calls from C++ on the golden model", "[firmware][compose][golden]") {
  std::vector<float> x(P * F), table(P * F);
  for (int64_t i = 0; i < P * F; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 11) - 5.0f + 0.25f * static_cast<float>(i % 3);
    table[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 3.0f;
  }
  const ncore::Program p = nki::trace("compose", *ncore::find_preset("trn2"), [&](nki::Tracer& t) {
    Tensor a = t.input("x", {P, F}, nl::float32);
    Tensor io = nl::ndarray({P, F}, nl::float32, nl::hbm, "iota");
    Tensor wh = nl::ndarray({P, F}, nl::float32, nl::hbm, "where");
    Tensor sc = nl::ndarray({P, F}, nl::float32, nl::hbm, "scan");
    Tensor mv = nl::ndarray({P, 2}, nl::float32, nl::hbm, "mean_var");
    Tensor xs = nl::load(a);
    nl::store(io, nisa::iota(nisa::Affine{5, {10, -1}, {P, F}}, nl::float32));  // 5 + 10 p - f
    Tensor tab = nl::load(nl::shared_constant(table, {P, F}, nl::float32));
    Tensor w = nl::ndarray({P, F}, nl::float32, nl::sbuf, "w");
    nl::where(w, nl::greater(xs, 0.0f), xs, tab);
    nl::store(wh, w);
    Tensor s = nl::ndarray({P, F}, nl::float32, nl::sbuf, "s");
    nisa::tensor_tensor_scan(s, xs, tab, 1.0f, nl::multiply, nl::add);
    nl::store(sc, s);
    nl::store(mv, nisa::bn_aggr(nisa::bn_stats(xs, nl::float32), nl::float32));
    for (const Tensor& o : {io, wh, sc, mv}) t.output(o);
  });
  ncore::GoldenModel g(*ncore::find_preset("trn2"), p.hbm_bytes);
  std::memcpy(g.hbm() + p.find_tensor("x")->offset, x.data(), x.size() * 4);
  g.run(p);
  const auto io = read(g, p, "iota"), wh = read(g, p, "where"), sc = read(g, p, "scan"), mv = read(g, p, "mean_var");
  for (int64_t r = 0; r < P; ++r) {
    float prev = 1.0f;
    double sum = 0, sq = 0;
    for (int64_t f = 0; f < F; ++f) {
      const size_t i = static_cast<size_t>(r * F + f);
      CHECK(io[i] == static_cast<float>(5 + 10 * r - f));
      CHECK(wh[i] == (x[i] > 0 ? x[i] : table[i]));
      volatile float prod = x[i] * prev;  // one rounding per operation, as the engine
      volatile float next = prod + table[i];
      prev = next;
      CHECK(sc[i] == prev);
      sum += x[i];
      sq += static_cast<double>(x[i]) * x[i];
    }
    const double mean = sum / F, var = sq / F - mean * mean;
    CHECK(mv[static_cast<size_t>(2 * r)] == Approx(mean).epsilon(1e-6).margin(1e-6));
    CHECK(mv[static_cast<size_t>(2 * r + 1)] == Approx(var).epsilon(1e-5));
  }
  // The constants (iota's values, the table) are the Program's, each once.
  int constants = 0;
  for (const auto& t : p.hbm_tensors) constants += t.role == ncore::TensorRole::constant;
  CHECK(constants == 2);
}
