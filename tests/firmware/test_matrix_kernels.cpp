// The tensor-engine kernels of handout 003 (matrix_transpose, matmul_tiled): instruction
// counts for several shapes and dtypes, their Programs run on the golden model against the
// plain C++ references (transpose exactly; matmul within dtype tolerances and bit for bit
// against an independent fma chain in the tensor engine's order), random interleavings,
// the registry entries, and trace times at full size.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "exec_check.hpp"
#include "golden_model.hpp"
#include "kernel_run.hpp"
#include "kernels/matrix.hpp"
#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/validate.hpp"
#include "nki/nki.hpp"
#include "kernels/kernel.hpp"
#include "ncore/numerics.hpp"

namespace {

namespace isa = ncore::isa;
namespace nl = nki::nl;
using nki::Tensor;
using Bytes = std::vector<uint8_t>;
using Op = isa::Opcode;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

kernels::Args transpose_args(int64_t n, int64_t m, isa::Dtype dt) {
  kernels::Args a;
  a.kernel = "transpose";
  a.set("n", n);
  a.set("m", m);
  a.dtype = dt;
  return a;
}

kernels::Args matmul_args(int64_t k, int64_t m, int64_t n, isa::Dtype dt) {
  kernels::Args a;
  a.kernel = "matmul";
  a.set("k", k);
  a.set("m", m);
  a.set("n", n);
  a.dtype = dt;
  return a;
}

struct Run {
  ncore::Program prog;
  std::map<std::string, Bytes> inputs;
  Bytes got, want;
};

// A declared kernel on the golden model with random inputs uniform in [lo, hi) (never -0), its
// output next to the reference.
Run run_golden(const kernels::Args& a, uint64_t seed, float lo, float hi) {
  testing::RunSettings st;
  st.backend = ncore::run::Backend::golden;
  st.seed = seed;
  st.lo = lo;
  st.hi = hi;
  st.no_negative_zero = true;
  const ncore::run::KernelRun k = testing::run_kernel(a, st);
  const ncore::run::Array& out = k.result.outputs.at(k.kernel->outputs.at(0).name);
  REQUIRE(out.shape == kernels::output_specs(a).at(0).shape);
  Run r;
  r.prog = k.program;
  for (const auto& [name, arr] : k.inputs) r.inputs[name] = arr.bytes;
  r.got = out.bytes;
  r.want = testing::expected(k);
  return r;
}

float elem(const Bytes& b, size_t i, isa::Dtype dt) {
  const unsigned esz = isa::dtype_bytes(dt);
  uint32_t v = 0;
  std::memcpy(&v, &b[i * esz], esz);
  return ncore::num::to_float(v, dt);
}

std::vector<float> floats(const Bytes& b, isa::Dtype dt) {
  std::vector<float> v(b.size() / isa::dtype_bytes(dt));
  for (size_t i = 0; i < v.size(); ++i) v[i] = elem(b, i, dt);
  return v;
}

// The tensor engine's arithmetic, written out: per output element, for each 128-row tile of
// K an fma chain from +0 down the rows (std::fma on floats: one rounding per step), the tile
// sums added in order in fp32 (the first overwrites PSUM, the others accumulate), then one
// rounding to the dtype when copied out of PSUM.
Bytes fma_chain(const Bytes& lhsT, const Bytes& rhs, int64_t K, int64_t M, int64_t N, isa::Dtype dt) {
  const std::vector<float> w = floats(lhsT, dt), x = floats(rhs, dt);
  const unsigned esz = isa::dtype_bytes(dt);
  Bytes out(static_cast<size_t>(M * N) * esz);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float total = 0;
      for (int64_t kt = 0; kt < K / 128; ++kt) {
        float acc = 0.0f;
        for (int64_t kk = kt * 128; kk < (kt + 1) * 128; ++kk) acc = std::fma(w[kk * M + i], x[kk * N + j], acc);
        total = kt == 0 ? acc : total + acc;
      }
      const uint32_t v = ncore::num::from_float(total, dt);
      std::memcpy(&out[(i * N + j) * esz], &v, esz);
    }
  return out;
}

// A tolerance test for matmul results: |got - want| <= rtol * (sum over k of |w x| + |want|),
// the accumulation error's scale (so that cancellation does not make it unbounded) plus the
// dtype's rounding of the result.
void check_close(const Run& r, const kernels::Args& a) {
  const isa::Dtype dt = a.dtype;
  const double rtol = dt == isa::Dtype::fp32 ? 1e-5 : dt == isa::Dtype::fp16 ? 1e-3 : 1e-2;
  const std::vector<float> l = floats(r.inputs.at("lhsT"), dt), x = floats(r.inputs.at("rhs"), dt);
  const std::vector<float> got = floats(r.got, dt), want = floats(r.want, dt);
  const kernels::Values v = kernels::resolve(a);
  const int64_t K = v["k"], M = v["m"], N = v["n"];
  std::vector<double> scale(static_cast<size_t>(M * N), 0.0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) scale[i * N + j] += std::fabs(double{l[k * M + i]} * x[k * N + j]);
  uint64_t bad = 0;
  for (size_t e = 0; e < got.size(); ++e)
    if (!(std::fabs(double{got[e]} - want[e]) <= rtol * (scale[e] + std::fabs(want[e])))) ++bad;
  CHECK(bad == 0);
}

uint64_t count(const ncore::Program& p, Op op) { return fwtest::count_opcode(p, op); }

// A matrix_transpose case: n x m elements of dt.
struct TransposeCase {
  int64_t n, m;
  isa::Dtype dt;
};

// check(c, the kernel's arguments for c) for each case c, the case named in what a failing check reports.
void each_transpose(const std::vector<TransposeCase>& cases,
                    const std::function<void(const TransposeCase& c, const kernels::Args& a)>& check) {
  for (const TransposeCase& c : cases) {
    INFO(c.n << " x " << c.m << " " << isa::to_string(c.dt));
    check(c, transpose_args(c.n, c.m, c.dt));
  }
}

// The cases whose instructions are counted, and the cases run on the golden model. The second:
// groups of ROWS x COLS blocks 2x3 (one group), 5x2 (two PSUM banks per row tile), 3x1 (one bank),
// 1x16, 8x1, 3x2 in three row groups, 1x6 in three column groups.
const std::vector<TransposeCase> kCountedTransposes = {
    {128, 128, isa::Dtype::fp32},  {256, 384, isa::Dtype::fp32},  {640, 256, isa::Dtype::bf16},
    {1024, 128, isa::Dtype::fp16}, {128, 2048, isa::Dtype::bf16}, {4096, 4096, isa::Dtype::fp32},
    {2048, 4096, isa::Dtype::bf16}};
const std::vector<TransposeCase> kRunTransposes = {
    {256, 384, isa::Dtype::fp32},  {640, 256, isa::Dtype::bf16},  {384, 128, isa::Dtype::fp16},
    {128, 2048, isa::Dtype::bf16}, {1024, 128, isa::Dtype::fp32}, {1152, 256, isa::Dtype::fp32},
    {128, 2304, isa::Dtype::fp32}};

int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

}  // namespace

TEST_CASE("matrix_transpose: instruction counts for several shapes and dtypes", "[firmware][kernels][matrix]") {
  each_transpose(kCountedTransposes, [](const TransposeCase& c, const kernels::Args& a) {
    const ncore::Program p = kernels::build(a, trn2());
    // Input rows n = M of the kernel, columns m = N. Groups of ROWS x COLS blocks.
    const int64_t rb = c.n / 128, cb = c.m / 128;
    const int64_t rows = largest_divisor(rb, 8), cols = largest_divisor(cb, 4096 / (128 * isa::dtype_bytes(c.dt)));
    const int64_t groups = (rb / rows) * (cb / cols), banks = (rows + 3) / 4;
    CHECK(count(p, Op::load_stationary) == static_cast<uint64_t>(rb * cb));
    CHECK(count(p, Op::multiply_moving) == static_cast<uint64_t>(rb * cb));
    CHECK(count(p, Op::tensor_copy) == static_cast<uint64_t>(groups * cols * banks));
    CHECK(count(p, Op::dma_copy) == static_cast<uint64_t>(1 + groups * rows + groups * cols));
    CHECK(count(p, Op::memset) == 0u);
    CHECK(p.instruction_count() == count(p, Op::load_stationary) + count(p, Op::multiply_moving) +
                                       count(p, Op::tensor_copy) + count(p, Op::dma_copy) + count(p, Op::sem_wait));
    // Only the tensor engine computes; every transpose overwrites a region inside one bank.
    CHECK(count(p, Op::tensor_tensor) + count(p, Op::tensor_scalar) == 0u);
    for (const auto& i : p.streams[0].insns)
      if (i.insn.opcode == Op::multiply_moving) {
        CHECK_FALSE(i.insn.acc);
        CHECK(i.insn.dst.offset / 2048 == (i.insn.dst.offset + 4 * 128 - 1) / 2048);
      }
    // One constant: the identity of the dtype class.
    const ncore::HbmTensor* id = p.find_tensor(c.dt == isa::Dtype::fp32 ? "identity_fp32" : "identity_bf16");
    REQUIRE(id);
    CHECK(id->role == ncore::TensorRole::constant);
    REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
  });
  // 4096 x 4096 fp32: 16 groups of 8 x 8 blocks, [128, 1024] loads and stores (4 KiB per partition).
  const ncore::Program p = kernels::build(transpose_args(4096, 4096, isa::Dtype::fp32), trn2());
  CHECK(count(p, Op::dma_copy) == 257u);
  CHECK(count(p, Op::tensor_copy) == 256u);
  for (size_t s = 5; s < p.streams.size(); ++s)
    for (const auto& i : p.streams[s].insns)
      if (i.insn.opcode == Op::dma_copy && i.insn.src0.mem == isa::Buffer::hbm && i.insn.dst.mem == isa::Buffer::sbuf &&
          i.insn.src0.dtype == isa::Dtype::fp32 && i.insn.src0.num_part == 128 && ncore::ap_free_elems(i.insn.dst) != 128)
        CHECK(ncore::ap_free_elems(i.insn.dst) == 1024u);
}

TEST_CASE("matmul_tiled: instruction counts and accumulate flags", "[firmware][kernels][matrix]") {
  struct Case {
    int64_t k, m, n;
    isa::Dtype dt;
  };
  for (const Case& c : {Case{128, 128, 512, isa::Dtype::fp32}, Case{384, 256, 1024, isa::Dtype::bf16},
                        Case{256, 128, 512, isa::Dtype::fp16}, Case{1024, 1024, 2048, isa::Dtype::bf16}}) {
    INFO(c.k << " " << c.m << " " << c.n << " " << isa::to_string(c.dt));
    const ncore::Program p = kernels::build(matmul_args(c.k, c.m, c.n, c.dt), trn2());
    const uint64_t tiles = static_cast<uint64_t>((c.m / 128) * (c.n / 512)), kt = static_cast<uint64_t>(c.k / 128);
    CHECK(count(p, Op::multiply_moving) == tiles * kt);
    CHECK(count(p, Op::load_stationary) == tiles * kt);  // a new lhsT tile every time
    CHECK(count(p, Op::dma_copy) == 2 * tiles * kt + tiles);
    CHECK(count(p, Op::memset) == 0);  // nl::zeros in PSUM: elided, each tile's first matmul overwrites
    CHECK(count(p, Op::tensor_copy) == tiles);  // nl::copy out of PSUM, cast to the dtype
    // Under inference the first matmul of each output tile overwrites, the others accumulate.
    std::vector<int> flags;
    for (const auto& i : p.streams[0].insns)
      if (i.insn.opcode == Op::multiply_moving) flags.push_back(i.insn.acc);
    for (size_t f = 0; f < flags.size(); ++f) CHECK(flags[f] == (f % kt == 0 ? 0 : 1));
    for (const auto& i : p.streams[3].insns)
      if (i.insn.opcode == Op::tensor_copy) {
        CHECK(i.insn.src0.mem == isa::Buffer::psum);
        CHECK(i.insn.dst.dtype == c.dt);
      }
    REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
  }
}

TEST_CASE("kernel size checks, as the handout's asserts", "[firmware][kernels][matrix][constraints]") {
  auto err = [](const kernels::Args& a) {
    try {
      kernels::build(a, trn2());
    } catch (const ncore::KernelError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  CHECK_THAT(err(transpose_args(200, 128, isa::Dtype::fp32)),
             Catch::StartsWith("kernels/src/matrix.cpp:") &&
                 Catch::Contains("Matrix dimensions not divisible by tile dimension! (200 x 128, tile dimension 128)"));
  CHECK_THAT(err(transpose_args(128, 100, isa::Dtype::fp32)), Catch::Contains("not divisible by tile dimension"));
  CHECK_THAT(err(matmul_args(128, 128, 256, isa::Dtype::fp32)),
             Catch::Contains("N = 256 is not a multiple of TILE_N = 512"));
  CHECK_THAT(err(matmul_args(100, 128, 512, isa::Dtype::fp32)), Catch::Contains("K = 100 is not a multiple of TILE_K = 128"));
  CHECK_THAT(err(matmul_args(128, 64, 512, isa::Dtype::fp32)), Catch::Contains("M = 64 is not a multiple of TILE_M = 128"));
  CHECK_THAT(err(matmul_args(0, 128, 512, isa::Dtype::fp32)), Catch::Contains("-k: kernel matmul needs its contraction dimension"));
  CHECK_THAT(err(transpose_args(128, -1, isa::Dtype::fp32)),
             Catch::Contains("-m must be positive (or 0 for the default, n), got -1 (the column count)"));
  // Contraction dimensions that differ, traced directly.
  try {
    nki::trace("mm", trn2(), [](nki::Tracer& t) {
      Tensor a = t.input("lhsT", {256, 128}, nl::float32);
      Tensor b = t.input("rhs", {128, 512}, nl::float32);
      t.output(kernels::matmul_tiled(a, b));
    });
    FAIL("no error");
  } catch (const ncore::KernelError& e) {
    CHECK_THAT(e.what(), Catch::Contains("lhsT and rhs must have the same contraction dimension (lhsT [256, 128], rhs "
                                         "[128, 512])"));
  }
}

TEST_CASE("matrix_transpose on the golden model equals the reference exactly", "[firmware][kernels][matrix][golden]") {
  each_transpose(kRunTransposes, [](const TransposeCase& c, const kernels::Args& a) {
    const Run r = run_golden(a, 7, -1000.0f, 1000.0f);
    CHECK(r.got == r.want);
    // and the reference is the transpose
    CHECK(elem(r.want, 1 * c.n + 2, c.dt) == elem(r.inputs.at("a_tensor"), 2 * c.m + 1, c.dt));
  });
  // m = 0: square
  const Run r = run_golden(transpose_args(256, 0, isa::Dtype::bf16), 3, -1.0f, 1.0f);
  CHECK(r.got == r.want);
  CHECK(r.prog.find_tensor("out")->shape == std::vector<int64_t>{256, 256});
}

TEST_CASE("nc_transpose on the golden model: -0 becomes +0, NaN and inf spread over their row", "[firmware][pe][golden]") {
  // A [4, 3] fp32 block with -0 at (0, 0), inf at (1, 2), NaN at (3, 1).
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float x[4][3] = {{-0.0f, 1.5f, 2.0f}, {3.0f, -4.0f, inf}, {5.0f, 6.0f, 7.0f}, {8.0f, nan, 9.0f}};
  const ncore::Program p = nki::trace("t", trn2(), [](nki::Tracer& t) {
    Tensor a = t.input("a", {4, 3}, nl::float32);
    Tensor out = nl::ndarray({3, 4}, nl::float32, nl::hbm, "out");
    Tensor s = nl::ndarray({4, 3}, nl::float32, nl::sbuf, "s");
    nki::nisa::dma_copy(s, a);
    Tensor r = nl::copy(nki::nisa::nc_transpose(s));
    nki::nisa::dma_copy(out, r);
    t.output(out);
  });
  ncore::GoldenModel g(trn2(), p.hbm_bytes);
  std::memcpy(g.hbm() + p.find_tensor("a")->offset, x, sizeof x);
  g.run(p);
  float y[3][4];
  std::memcpy(y, g.hbm() + p.find_tensor("out")->offset, sizeof y);
  uint32_t b00;
  std::memcpy(&b00, &y[0][0], 4);
  CHECK(b00 == 0u);  // +0
  CHECK(y[0][1] == 3.0f);
  CHECK(y[0][2] == 5.0f);
  CHECK(y[2][0] != y[2][0]);
  CHECK(y[2][1] == inf);  // in place
  CHECK(std::isnan(y[2][0]));
  CHECK(std::isnan(y[2][2]));
  CHECK(std::isnan(y[2][3]));
  for (int j = 0; j < 4; ++j) CHECK(std::isnan(y[1][j]));  // row 1 of the output: column 1 of x, which holds the NaN
  CHECK(y[0][3] == 8.0f);
}

TEST_CASE("matmul_tiled on the golden model: the fma chain exactly, the reference within tolerance",
          "[firmware][kernels][matrix][golden]") {
  struct Case {
    int64_t k, m, n;
    isa::Dtype dt;
  };
  for (const Case& c : {Case{256, 128, 512, isa::Dtype::fp32}, Case{384, 256, 512, isa::Dtype::bf16},
                        Case{128, 128, 1024, isa::Dtype::fp16}}) {
    INFO(c.k << " " << c.m << " " << c.n << " " << isa::to_string(c.dt));
    const kernels::Args a = matmul_args(c.k, c.m, c.n, c.dt);
    // Mixed signs: cancellation, so rounding order matters.
    const Run r = run_golden(a, 11, -1.0f, 1.0f);
    CHECK(r.got == fma_chain(r.inputs.at("lhsT"), r.inputs.at("rhs"), c.k, c.m, c.n, c.dt));
    check_close(r, a);
  }
  // Positive inputs like the CLI's: numpy-style allclose against the reference.
  const kernels::Args a = matmul_args(256, 128, 512, isa::Dtype::fp32);
  const Run r = run_golden(a, 5, 0.0f, 1.0f);
  uint64_t bad = 0;
  for (size_t i = 0; i < r.want.size() / 4; ++i) {
    const double g = elem(r.got, i, a.dtype), w = elem(r.want, i, a.dtype);
    bad += !(std::fabs(g - w) <= 1e-8 + 1e-5 * std::fabs(w));
  }
  CHECK(bad == 0);
  CHECK_FALSE(kernels::find("matmul").exact);
}

TEST_CASE("matmul_blocked: each input element loaded once per block, the same bits as matmul_tiled",
          "[firmware][kernels][matrix]") {
  struct Case {
    int64_t k, m, n;
    isa::Dtype dt;
    uint64_t n_blocks, m_blocks;  // rhs blocks (column blocks) and lhsT blocks per column block
  };
  // fp32 K=1024 N=2048: rhs fits whole, lhsT in 256-row blocks; fp32 K=2048 N=2048: rhs in two
  // 1024-column blocks, lhsT in 128-row blocks; bf16 K=2048 M=N=2048 (the benchmark's large
  // case): rhs whole, lhsT in 256-row blocks.
  for (const Case& c : {Case{1024, 512, 2048, isa::Dtype::fp32, 1, 2}, Case{2048, 256, 2048, isa::Dtype::fp32, 2, 2},
                        Case{2048, 2048, 2048, isa::Dtype::bf16, 1, 8}, Case{256, 256, 1024, isa::Dtype::fp16, 1, 1}}) {
    INFO(c.k << " " << c.m << " " << c.n << " " << isa::to_string(c.dt));
    kernels::Args a = matmul_args(c.k, c.m, c.n, c.dt);
    a.kernel = "matmul_blocked";
    const ncore::Program p = kernels::build(a, trn2());
    const uint64_t kt = static_cast<uint64_t>(c.k / 128), mt = static_cast<uint64_t>(c.m / 128);
    const uint64_t tiles = mt * static_cast<uint64_t>(c.n / 512);
    CHECK(count(p, Op::multiply_moving) == tiles * kt);
    CHECK(count(p, Op::tensor_copy) == tiles);
    // rhs: kt DMAs per column block; lhsT: kt per row block of every column block; one store
    // per 128-row tile of every column block
    CHECK(count(p, Op::dma_copy) == c.n_blocks * kt + c.n_blocks * c.m_blocks * kt + c.n_blocks * mt);
    // bytes moved from HBM: rhs once, lhsT once per column block
    uint64_t hbm_read = 0;
    for (const auto& st : p.streams)
      for (const auto& i : st.insns)
        if (i.insn.opcode == Op::dma_copy && i.insn.src0.mem == isa::Buffer::hbm)
          hbm_read += ncore::ap_elems(i.insn.src0) * isa::dtype_bytes(i.insn.src0.dtype);
    const uint64_t esz = isa::dtype_bytes(c.dt);
    CHECK(hbm_read == esz * static_cast<uint64_t>(c.k) * static_cast<uint64_t>(c.n + c.m * static_cast<int64_t>(c.n_blocks)));
    REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
  }
  // The same fp32 sums in the same order as matmul_tiled: bit for bit, on the golden model.
  kernels::Args a = matmul_args(256, 512, 1024, isa::Dtype::bf16);
  const Run tiled = run_golden(a, 3, -1.0f, 1.0f);
  a.kernel = "matmul_blocked";
  const Run blocked = run_golden(a, 3, -1.0f, 1.0f);
  CHECK(blocked.got == tiled.got);
  CHECK(blocked.got == fma_chain(blocked.inputs.at("lhsT"), blocked.inputs.at("rhs"), 256, 512, 1024, a.dtype));
  // A contraction too long for any block to fit in the SBUF is refused with the reason.
  a = matmul_args(128 * 128, 128, 512, isa::Dtype::fp32);
  a.kernel = "matmul_blocked";
  try {
    kernels::build(a, trn2());
    FAIL("K = 16384 fp32 should not fit");
  } catch (const ncore::KernelError& e) {
    CHECK_THAT(e.what(), Catch::Contains("K = 16384 is too large for matmul_blocked"));
  }
}

TEST_CASE("the tensor-engine kernels run to completion with every conflict ordered", "[firmware][kernels][matrix]") {
  std::vector<std::pair<std::string, kernels::Args>> cases = {
      {"transpose", transpose_args(256, 384, isa::Dtype::fp32)},
      {"transpose", transpose_args(640, 128, isa::Dtype::bf16)},
      {"transpose", transpose_args(1152, 256, isa::Dtype::fp32)},
      {"transpose", transpose_args(128, 2304, isa::Dtype::fp16)},
      {"matmul", matmul_args(256, 256, 512, isa::Dtype::bf16)},
      {"matmul_blocked", matmul_args(512, 512, 1024, isa::Dtype::fp32)},
  };
  for (auto& c : cases) {
    nki::TraceStats st;
    nki::TraceOptions o;
    o.record_order = true;
    o.stats = &st;
    kernels::Args a = c.second;
    a.kernel = c.first;
    const ncore::Program p = kernels::build(kernels::find(a.kernel), kernels::resolve(a), trn2(), o);
    REQUIRE(st.order.size() == p.instruction_count() - count(p, Op::sem_wait));
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const fwtest::Execution e = fwtest::execute(p, trn2(), seed);
      INFO(c.first << " seed " << seed << ": " << e.error);
      REQUIRE(e.completed);
      const auto bad = fwtest::check_hazards(p, e, st.order);
      CHECK(bad.empty());
      if (!bad.empty()) FAIL_CHECK(bad.front());
    }
  }
}

TEST_CASE("registry: transpose and matmul", "[firmware][kernels][registry][matrix]") {
  const kernels::Kernel& t = kernels::find("transpose");
  REQUIRE(t.params.size() == 2);
  CHECK(t.params[0].flag == "-n");
  CHECK(t.params[0].required);
  CHECK(t.params[1].flag == "-m");
  CHECK_FALSE(t.params[1].required);
  CHECK(t.params[1].default_from == "n");
  CHECK(t.exact);
  const kernels::Kernel& m = kernels::find("matmul");
  REQUIRE(m.params.size() == 3);
  CHECK(m.params[0].flag == "-k");
  CHECK_FALSE(m.exact);
  CHECK(kernels::find("tiled").params.at(1).name == "row_chunk");
  CHECK(kernels::find("stream").params.at(1).name == "free_dim");
  CHECK_THROWS_WITH(kernels::find("nope"), Catch::Contains("unknown kernel 'nope'"));

  kernels::Args a = transpose_args(256, 0, isa::Dtype::bf16);
  CHECK(kernels::resolve(a).text() == "n=256 m=256");
  a.set("m", 384);
  CHECK(kernels::resolve(a).text() == "n=256 m=384");
  const auto in = kernels::input_specs(a);
  REQUIRE(in.size() == 1);
  CHECK(in[0].name == "a_tensor");
  CHECK(in[0].shape == std::vector<int64_t>{256, 384});
  CHECK(kernels::output_specs(a).at(0).name == "out");
  CHECK(kernels::output_specs(a).at(0).shape == std::vector<int64_t>{384, 256});
  const ncore::Program p = kernels::build(a, trn2());
  CHECK(p.kernel == "matrix_transpose");
  CHECK(p.find_tensor("a_tensor")->role == ncore::TensorRole::input);

  kernels::Args b = matmul_args(256, 128, 1024, isa::Dtype::fp16);
  CHECK(kernels::resolve(b).text() == "k=256 m=128 n=1024");
  CHECK(kernels::resolve(b).items() == std::vector<std::pair<std::string, int64_t>>{{"k", 256}, {"m", 128}, {"n", 1024}});
  const auto bin = kernels::input_specs(b);
  REQUIRE(bin.size() == 2);
  CHECK(bin[0].name == "lhsT");
  CHECK(bin[0].shape == std::vector<int64_t>{256, 128});
  CHECK(bin[1].name == "rhs");
  CHECK(bin[1].shape == std::vector<int64_t>{256, 1024});
  CHECK(kernels::output_specs(b).at(0).name == "result");
  CHECK(kernels::output_specs(b).at(0).shape == std::vector<int64_t>{128, 1024});
  CHECK(kernels::build(b, trn2()).kernel == "matmul_tiled");

  CHECK(kernels::resolve(kernels::Args("tiled", {{"n", 256}})).text() == "n=256 row_chunk=128");
  CHECK_THROWS_WITH(kernels::resolve(kernels::Args("tiled", {{"n", 256}, {"free_dim", 2}})),
                    Catch::Contains("kernel tiled has no parameter 'free_dim'"));
}

TEST_CASE("registry references: transpose exactly, matmul rounded once from double", "[firmware][kernels][registry]") {
  // 2 x 3 fp32 -> 3 x 2
  kernels::Args a = transpose_args(2, 3, isa::Dtype::fp32);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  Bytes in(sizeof x);
  std::memcpy(in.data(), x, sizeof x);
  const Bytes out = kernels::reference(a, {{"a_tensor", in}}).at("out");
  float y[6];
  std::memcpy(y, out.data(), sizeof y);
  CHECK(std::vector<float>(y, y + 6) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK_THROWS_AS(kernels::reference(a, {{"a_tensor", Bytes(20)}}), ncore::InputError);

  // bf16: 1 + 2^-8 + 2^-30 is just above the tie between 1 and 1 + 2^-7. Rounded once it goes
  // up (0x3F81); through fp32 (1 + 2^-8, a tie) it would go to even (0x3F80).
  kernels::Args b = matmul_args(3, 1, 1, isa::Dtype::bf16);
  auto bf = [](std::initializer_list<uint16_t> v) {
    Bytes r;
    for (uint16_t h : v) {
      r.push_back(static_cast<uint8_t>(h));
      r.push_back(static_cast<uint8_t>(h >> 8));
    }
    return r;
  };
  // lhsT = [1, 2^-8, 2^-30], rhs = [1, 1, 1]
  CHECK(kernels::reference(b, {{"lhsT", bf({0x3F80, 0x3B80, 0x3080})}, {"rhs", bf({0x3F80, 0x3F80, 0x3F80})}}).at("result") ==
        bf({0x3F81}));
  // fp32: 1 + 2^-24 + 2^-40 (exact in double) rounds up; fp16: 1 + 2^-11 + 2^-24 too (through
  // fp32, where 2^-24 is half an ulp of 1, it would tie to even and round down).
  kernels::Args f = matmul_args(3, 1, 1, isa::Dtype::fp32);
  auto f32 = [](std::initializer_list<float> v) {
    Bytes r(v.size() * 4);
    size_t k = 0;
    for (float q : v) std::memcpy(&r[4 * k++], &q, 4);
    return r;
  };
  CHECK(kernels::reference(f, {{"lhsT", f32({1.0f, 0x1p-24f, 0x1p-40f})}, {"rhs", f32({1.0f, 1.0f, 1.0f})}}).at("result") ==
        f32({1.0f + 0x1p-23f}));
  kernels::Args h = matmul_args(3, 1, 1, isa::Dtype::fp16);
  CHECK(kernels::reference(h, {{"lhsT", bf({0x3C00, 0x1000, 0x0001})}, {"rhs", bf({0x3C00, 0x3C00, 0x3C00})}}).at("result") ==
        bf({0x3C01}));
}

TEST_CASE("trace times of transpose 4096x4096 and matmul K=M=1024 N=2048", "[firmware][kernels][matrix][timing]") {
  for (int which = 0; which < 2; ++which) {
    const kernels::Args a =
        which == 0 ? transpose_args(4096, 4096, isa::Dtype::fp32) : matmul_args(1024, 1024, 2048, isa::Dtype::bf16);
    const auto t0 = std::chrono::steady_clock::now();
    const ncore::Program p = kernels::build(a, trn2());
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[firmware] trace of " << p.kernel << " " << kernels::resolve(a).text() << " " << isa::to_string(a.dtype)
              << ": " << p.instruction_count() << " instructions in " << sec << " s\n";
    CHECK(sec < 10.0);
  }
}

// run::compare against the forward error bound of an fp32 accumulation: within it passes, just
// beyond it fails, and the bound's two parts (the sums' magnitude, the final rounding) each count.
TEST_CASE("compare within the forward error bound of the accumulation", "[firmware][matmul]") {
  auto f32 = [](std::vector<float> v) {
    ncore::run::Array a;
    a.dtype = isa::Dtype::fp32;
    a.shape = {static_cast<int64_t>(v.size())};
    const auto* b = reinterpret_cast<const uint8_t*>(v.data());
    a.bytes.assign(b, b + 4 * v.size());
    return a;
  };
  const int64_t n = 1000;
  const double gamma = n * 0x1p-24 / (1 - n * 0x1p-24) * (1 + 0x1p-24);
  // an output near zero whose terms are large: the bound is gamma * sum|terms| (+ the roundings)
  const std::vector<double> mag = {1000.0, 1.0};
  const float ref0 = 1e-6f, ref1 = 1.0f;
  const ncore::run::Array want = f32({ref0, ref1});
  const double b0 = gamma * 1000.0 + 0x1p-24 * 2 * ref0;  // about 6e-5
  const float inside = ref0 + static_cast<float>(b0 * 0.9), outside = ref0 + static_cast<float>(b0 * 1.1);
  auto cmp = [&](float g0, float g1) { return ncore::run::compare(f32({g0, g1}), want.bytes, &mag, n); };
  CHECK(cmp(ref0, ref1).exact);
  const ncore::run::Compare in = cmp(inside, ref1);
  CHECK((in.close && !in.exact));
  CHECK(in.max_bound_ratio > 0.8);
  CHECK(in.max_bound_ratio < 1.0);
  const ncore::run::Compare out = cmp(outside, ref1);
  CHECK_FALSE(out.close);
  CHECK(out.mismatches == 1);
  CHECK(out.first == 0);
  // the allclose rule (rtol 1e-5, atol 1e-8) would have refused the one inside the bound
  CHECK_FALSE(ncore::run::compare(f32({inside, ref1}), want.bytes).close);
  // an element of magnitude 1 is allowed gamma + 2 ulp-ish: 1.0 + 2^-10 is far outside
  CHECK_FALSE(cmp(ref0, 1.0f + 0x1p-10f).close);
  CHECK(cmp(ref0, 1.0f + 0x1p-23f).close);
  CHECK_THAT(in.rule, Catch::Contains("the forward error bound of 1000 fp32 roundings"));
  // NaN only matches NaN
  CHECK_FALSE(cmp(std::nanf(""), ref1).close);
}
