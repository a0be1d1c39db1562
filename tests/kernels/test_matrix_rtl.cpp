// The tensor-engine kernels on the full-size RTL (trn2), in check mode (every instruction
// compared with the golden model as it retires), with the result compared with a plain
// reference computed here: the transpose exactly, the matmul within the error bound of fp32
// accumulation plus one rounding to the output dtype.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "kernel_run.hpp"
#include "ncore/presets_gen.hpp"

using namespace ncore;

namespace {

struct Run {
  sim::RunResult run;
  std::vector<float> out;                  // the kernel's output, widened to float
  std::vector<std::vector<float>> inputs;  // each input, as the kernel saw it (rounded to its dtype)
};

// The kernel on the RTL in check mode, inputs uniform in [-2, 2).
Run run_kernel(const kernels::Args& a, uint64_t seed) {
  testing::RunSettings s;
  s.seed = seed;
  s.lo = -2.0f;
  s.hi = 2.0f;
  const run::KernelRun k = testing::run_kernel(a, s);
  Run r;
  r.run = k.result.stats;
  r.out = testing::floats(k.result.outputs.at(k.kernel->outputs.at(0).name));
  for (const auto& in : k.kernel->inputs) r.inputs.push_back(testing::floats(k.inputs.at(in.name)));
  return r;
}

kernels::Args args(const char* kernel, int64_t k, int64_t m, int64_t n, isa::Dtype dt) {
  kernels::Args a(kernel, {{"m", m}, {"n", n}}, dt);
  if (k) a.set("k", k);
  return a;
}

// Relative size of one unit in the last place of the output dtype (for the final rounding).
double out_ulp(isa::Dtype dt) { return dt == isa::Dtype::fp32 ? 0x1p-23 : dt == isa::Dtype::fp16 ? 0x1p-10 : 0x1p-7; }

}  // namespace

TEST_CASE("matrix_transpose on the RTL: 128x128, 256x384, 1024x1024 and the 16-bit dtypes, exact, and the per-tile transpose",
          "[kernels][pe]") {
  struct Case {
    const char* kernel;
    int64_t n, m;
    isa::Dtype dt;
  };
  const Case cases[] = {{"transpose", 128, 128, isa::Dtype::fp32},       {"transpose", 256, 384, isa::Dtype::fp32},
                        {"transpose", 1024, 1024, isa::Dtype::fp32},     {"transpose", 256, 128, isa::Dtype::bf16},
                        {"transpose", 128, 256, isa::Dtype::fp16},       {"transpose_tiled", 256, 384, isa::Dtype::fp32},
                        {"transpose_tiled", 256, 128, isa::Dtype::bf16}};
  for (const auto& c : cases) {
    INFO(c.kernel << " n=" << c.n << " m=" << c.m << " " << isa::to_string(c.dt));
    const Run r = run_kernel(args(c.kernel, 0, c.m, c.n, c.dt), 7);
    const std::vector<float>& x = r.inputs.at(0);  // (n, m)
    uint64_t wrong = 0;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        const float got = r.out[i * c.n + j], want = x[j * c.m + i];
        wrong += std::memcmp(&got, &want, 4) != 0;
      }
    CHECK(wrong == 0);
    CHECK(r.run.checked_instructions > 0);
    // every 128 x 128 block is a multiply by a 128 x 128 identity
    CHECK(r.run.pe_macs == static_cast<uint64_t>(c.n * c.m * 128));
  }
}

TEST_CASE("matmul_tiled and matmul_blocked on the RTL: several shapes, every dtype, within the fp32 accumulation bound",
          "[kernels][pe]") {
  struct Case {
    const char* kernel;
    int64_t k, m, n;
    isa::Dtype dt;
  };
  const Case cases[] = {{"matmul", 128, 128, 512, isa::Dtype::fp32},         {"matmul", 128, 128, 512, isa::Dtype::bf16},
                        {"matmul", 128, 128, 512, isa::Dtype::fp16},         {"matmul", 256, 256, 1024, isa::Dtype::fp32},
                        {"matmul", 384, 128, 512, isa::Dtype::bf16},         {"matmul", 256, 384, 512, isa::Dtype::fp16},
                        {"matmul_blocked", 512, 256, 1024, isa::Dtype::bf16}, {"matmul_blocked", 256, 256, 512, isa::Dtype::fp32}};
  for (const auto& c : cases) {
    INFO(c.kernel << " k=" << c.k << " m=" << c.m << " n=" << c.n << " " << isa::to_string(c.dt));
    const Run r = run_kernel(args(c.kernel, c.k, c.m, c.n, c.dt), 11);
    const std::vector<float>&lhsT = r.inputs.at(0), &rhs = r.inputs.at(1);  // (k, m), (k, n)
    uint64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0, mag = 0;
        for (int64_t t = 0; t < c.k; ++t) {
          const double p = double(lhsT[t * c.m + i]) * double(rhs[t * c.n + j]);
          want += p;
          mag += std::fabs(p);
        }
        // products exact, k fp32 additions each off by at most half an ulp of the running sum,
        // partial sums added once more per 128-row block, then one rounding to the dtype
        const double got = r.out[i * c.n + j];
        const double bound = double(c.k + c.k / 128) * 0x1p-24 * mag + out_ulp(c.dt) * std::fabs(want) + 1e-30;
        const double err = std::fabs(got - want);
        worst = std::max(worst, err / bound);
        bad += !(err <= bound);
      }
    CHECK(bad == 0);
    CHECK(worst > 0);  // the comparison saw real rounding, not an empty or zero result
    CHECK(r.run.checked_instructions > 0);
    // the tensor engine's MAC counter saw every multiply-accumulate of the product, once
    CHECK(r.run.pe_macs == static_cast<uint64_t>(c.k * c.m * c.n));
  }
}
