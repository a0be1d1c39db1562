// The NKI call surface from C++ (nki/calls.hpp): the declarations, masks (nki/mask.hpp) and the
// tiling of high-level calls, used by a C++ kernel as the Python front end uses them, traced and
// run on the golden model against plain C++ arithmetic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "golden_model.hpp"
#include "nki/calls.hpp"
#include "nki/nki.hpp"

namespace {

namespace nl = nki::nl;
namespace calls = nki::calls;
using calls::Value;
using nki::Tensor;

int64_t count(const ncore::Program& p, ncore::isa::Opcode op) {
  int64_t n = 0;
  for (const auto& s : p.streams)
    for (const auto& i : s.insns) n += i.insn.opcode == op;
  return n;
}

}  // namespace

TEST_CASE("every declaration has a lowering and well-formed parameters", "[firmware][calls]") {
  std::set<std::string> seen;
  for (const calls::Decl& d : calls::all()) {
    INFO(d.ns << "." << d.name);
    CHECK((d.ns == "isa" || d.ns == "language"));
    CHECK(seen.insert(d.ns + "." + d.name).second);
    CHECK(static_cast<bool>(d.lower));
    CHECK(calls::find(d.ns, d.name) == &d);
    bool keyword = false;
    bool defaulted = false;
    for (const calls::Param& p : d.params) {
      if (p.keyword_only) keyword = true;
      CHECK((!keyword || p.keyword_only));                      // keyword-only parameters come last
      if (!p.keyword_only) {
        CHECK((!defaulted || !p.required()));                   // no required one after a defaulted one
        defaulted |= !p.required();
      }
    }
    if (d.mask == calls::MaskRule::boxes && d.result)
      CHECK((!d.grid_param.empty() || static_cast<bool>(d.grid)));  // a per-box call knows its grid
  }
  // the calls NKI 0.x kernels use most, in both namespaces
  for (const char* n : {"dma_copy", "tensor_tensor", "tensor_scalar", "tensor_copy", "memset", "tensor_reduce",
                        "activation", "nc_matmul", "nc_transpose", "iota", "affine_select"})
    CHECK(calls::find("isa", n));
  for (const char* n : {"load", "store", "copy", "add", "multiply", "exp", "max", "sum", "mean", "matmul", "softmax"})
    CHECK(calls::find("language", n));
}

TEST_CASE("masks: boxes of one and two axes, transposed, refused in NKI's terms", "[firmware][calls][mask]") {
  const nki::Loc loc{"k.py", 3};
  // i * 128 + p < 200 with i = 1: the first 72 partitions of 128
  nki::MaskTerm ragged;
  ragged.coeff = {{0, 1}};
  ragged.sizes = {{0, 128}};
  ragged.start = 128 - 200;
  ragged.cmp = nki::AluOp::less;
  const auto one = nki::Mask::of({ragged}, "load", loc).boxes();
  REQUIRE(one.size() == 1);
  CHECK(one[0].bounds.at(0) == std::make_pair<int64_t, int64_t>(0, 72));
  // p - f >= 0 on a 4 x 4 grid: the lower triangle, one box per run of f with the same rows
  nki::MaskTerm tri;
  tri.coeff = {{0, 1}, {1, -1}};
  tri.sizes = {{0, 4}, {1, 4}};
  tri.cmp = nki::AluOp::greater_equal;
  const nki::Mask m = nki::Mask::of({tri}, "add", loc);
  const auto boxes = m.boxes();
  REQUIRE(boxes.size() == 4);
  int64_t kept = 0;
  for (const auto& b : boxes) kept += (b.bounds.at(0).second - b.bounds.at(0).first) * (b.bounds.at(1).second - b.bounds.at(1).first);
  CHECK(kept == 10);  // 4 + 3 + 2 + 1
  CHECK_FALSE(m.keeps_all());
  CHECK(m.transposed().boxes().size() == 4);
  // a reduced free axis cannot be split: the partition axis is enumerated instead
  CHECK(m.boxes({1}).size() == 4);
  CHECK_THROWS_WITH(m.boxes({0, 1}), Catch::Contains("compares two axes the instruction reduces"));
  nki::MaskTerm ne = ragged;
  ne.cmp = nki::AluOp::not_equal;
  CHECK_THROWS_WITH(nki::Mask::of({ne}, "load", loc), Catch::Contains("uses '!='"));
  CHECK(nki::Mask::nothing("load", loc).keeps_nothing());
  // a box of 70000 elements per partition, tiled into instructions of at most 64K
  std::vector<nki::Box> parts;
  nki::fit(nki::Box{}, {128, 70000}, {}, parts);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].bounds.at(1) == std::make_pair<int64_t, int64_t>(0, 65536));
  CHECK(parts[1].bounds.at(1) == std::make_pair<int64_t, int64_t>(65536, 70000));
}

TEST_CASE("a C++ kernel with a ragged mask and a tiled high-level call, through the call surface",
          "[firmware][calls][golden]") {
  constexpr int64_t R = 200, F = 16, W = 70000;
  const auto& preset = *ncore::find_preset("trn2");
  const ncore::Program p = nki::trace("calls", preset, [&](nki::Tracer& t) {
    const Tensor x = t.input("x", {R, F}, nl::float32);
    const Tensor y = nl::ndarray({R, F}, nl::float32, nl::hbm, "y");
    for (int64_t i = 0; i < (R + 127) / 128; ++i) {
      // x[i * 128 + p, f] for p < 128: past the end on the last tile, kept inside by the mask
      auto rows = [&](const Tensor& base) {
        return nki::TileArg(nki::Deferred{base, {i * 128, 0}, {{1, 0}, {0, 1}}, {128, F}, "past the end"});
      };
      nki::MaskTerm m;
      m.coeff = {{0, 1}};
      m.sizes = {{0, 128}};
      m.start = i * 128 - R;
      m.cmp = nki::AluOp::less;
      calls::Options o;
      o.mask = nki::Mask::of({m}, "load", nki::Loc::here());
      const Tensor tile = calls::invoke("language", "load", {Value::of_tile(rows(x))}, o);
      const Tensor sum = calls::invoke("language", "add", {Value::of_tile(tile), Value::of_scalar(1.5)}, o);
      calls::invoke("language", "store", {Value::of_tile(rows(y)), Value::of_tile(sum)}, o);
    }
    // a copy of 70000 bytes per partition: two instructions (65536 + 4464)
    const Tensor wide = nl::ndarray({128, W}, nl::uint8, nl::sbuf, "wide");
    calls::Options split;
    split.dst = &wide;
    split.split = true;  // as within a high-level call: tiled
    calls::invoke("isa", "memset", {Value::of_shape({128, W}), Value::of_number(7), Value::of_dtype(nl::uint8)}, split);
    const Tensor copied = calls::invoke("language", "copy", {Value::of_tile(wide)}, {});
    const Tensor z = nl::ndarray({128, W}, nl::uint8, nl::hbm, "z");
    nl::store(z, copied);
    t.output(y);
    t.output(z);
  });
  // memset and the copy of the wide tile are each two instructions
  CHECK(count(p, ncore::isa::Opcode::memset) == 2);
  CHECK(count(p, ncore::isa::Opcode::tensor_copy) == 2);
  std::vector<float> x(static_cast<size_t>(R * F));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 37) * 0.25f - 3.0f;
  ncore::GoldenModel g(preset, p.hbm_bytes);
  std::memcpy(g.hbm() + p.find_tensor("x")->offset, x.data(), x.size() * 4);
  g.run(p);
  const ncore::HbmTensor* yt = p.find_tensor("y");
  std::vector<float> y(x.size());
  std::memcpy(y.data(), g.hbm() + yt->offset, yt->bytes);
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i);
    CHECK(y[i] == x[i] + 1.5f);  // exact in fp32 for these values
  }
  const ncore::HbmTensor* zt = p.find_tensor("z");
  std::vector<uint8_t> z(static_cast<size_t>(zt->bytes));
  std::memcpy(z.data(), g.hbm() + zt->offset, z.size());
  CHECK(std::all_of(z.begin(), z.end(), [](uint8_t v) { return v == 7; }));
}

TEST_CASE("dma_transpose: NKI's axis orders from HBM and from the SBUF, typed and through the call surface",
          "[firmware][calls][golden]") {
  // NKI's permutations: dst dimension d is src dimension order[d]
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int> order;
    bool from_sbuf;
  };
  const std::vector<Case> cases = {{{64, 96}, {1, 0}, false},
                                   {{4, 8, 16}, {2, 1, 0}, false},
                                   {{2, 3, 4, 5}, {3, 1, 2, 0}, false},
                                   {{32, 48}, {1, 0}, true},
                                   {{6, 5, 7}, {2, 1, 0}, true}};
  const auto& preset = *ncore::find_preset("trn2");
  const ncore::Program p = nki::trace("dma_transpose", preset, [&](nki::Tracer& t) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      const Tensor x = t.input("x" + std::to_string(k), nki::Shape(c.shape), nl::float32);
      std::vector<int64_t> ts;
      for (int a : c.order) ts.push_back(c.shape[static_cast<size_t>(a)]);
      const Tensor y = nl::ndarray(nki::Shape(ts), nl::float32, nl::hbm, "y" + std::to_string(k));
      const Tensor src = c.from_sbuf ? nl::load(x) : x;
      // even cases through the typed API, odd ones through the declaration
      const Tensor r = k % 2 == 0 ? nki::nisa::dma_transpose(src)
                                  : calls::invoke("isa", "dma_transpose", {Value::of_tile(src)}, {});
      nl::store(y, r);
      t.output(y);
    }
  });
  // a transfer and a store per case; from the SBUF also the load and the copy to the HBM scratch
  CHECK(count(p, ncore::isa::Opcode::dma_copy) == 2 * 5 + 2 * 2);
  ncore::GoldenModel g(preset, p.hbm_bytes);
  std::vector<std::vector<float>> xs;
  for (size_t k = 0; k < cases.size(); ++k) {
    const ncore::HbmTensor* xt = p.find_tensor("x" + std::to_string(k));
    std::vector<float> x(static_cast<size_t>(xt->bytes / 4));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5f * static_cast<float>(k);
    std::memcpy(g.hbm() + xt->offset, x.data(), xt->bytes);
    xs.push_back(std::move(x));
  }
  g.run(p);
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const size_t nd = c.shape.size();
    std::vector<int64_t> stride(nd, 1);
    for (size_t d = nd - 1; d > 0; --d) stride[d - 1] = stride[d] * c.shape[d];
    const ncore::HbmTensor* yt = p.find_tensor("y" + std::to_string(k));
    std::vector<float> y(static_cast<size_t>(yt->bytes / 4));
    std::memcpy(y.data(), g.hbm() + yt->offset, yt->bytes);
    // walk y in row-major order: its index (i_0 .. i_nd-1) reads x at i_d on axis order[d]
    std::vector<int64_t> idx(nd, 0);
    for (size_t e = 0; e < y.size(); ++e) {
      int64_t off = 0;
      for (size_t d = 0; d < nd; ++d) off += idx[d] * stride[static_cast<size_t>(c.order[d])];
      INFO("case " << k << " element " << e);
      REQUIRE(y[e] == xs[k][static_cast<size_t>(off)]);
      for (size_t d = nd; d-- > 0;) {
        if (++idx[d] < c.shape[static_cast<size_t>(c.order[d])]) break;
        idx[d] = 0;
      }
    }
  }
}

TEST_CASE("dma_transpose refuses PSUM and ranks other than 2 to 4 in NKI's terms", "[firmware][calls]") {
  const auto& preset = *ncore::find_preset("trn2");
  auto refused = [&](std::vector<int64_t> shape, nki::Buffer buf) {
    try {
      (void)nki::trace("bad", preset, [&](nki::Tracer&) {
        const Tensor x = nl::ndarray(nki::Shape(shape), nl::float32, buf, "x");
        (void)nki::nisa::dma_transpose(x);
      });
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused({2, 2, 2, 2, 2}, nl::hbm),
             Catch::Contains("Expected operand 'src' of 'dma_transpose' to have 2, 3 or 4 dimensions, but got 5"));
  CHECK_THAT(refused({8}, nl::hbm), Catch::Contains("to have 2, 3 or 4 dimensions, but got 1"));
  CHECK_THAT(refused({8, 8}, nl::psum),
             Catch::Contains("Expected operand 'src' of 'dma_transpose' to be in address space 'hbm' or 'sbuf'"));
}
