// The vector-add kernels on the RTL: every kernel at several sizes and all three dtypes, in
// check mode (every instruction compared with the golden model as it completes), with the
// result compared with a plain C++ reference; and the timing behaviour the real chip shows.
#include <catch2/catch.hpp>

#include <cstring>

#include "golden_model.hpp"
#include "kernel_run.hpp"
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"

using namespace ncore;
using testing::expected;
using testing::output;
using testing::run_kernel;

namespace {

kernels::Args args(const std::string& k, int64_t n, isa::Dtype dt = isa::Dtype::fp32) {
  return kernels::Args(k, {{"n", n}}, dt);
}

testing::RunSettings on(const char* preset, bool check = true, bool skip = true) {
  return testing::RunSettings{.preset = preset, .check = check, .skip = skip};
}

// A kernel run whose output is checked against the plain C++ reference.
run::KernelRun run_right(const kernels::Args& a, const testing::RunSettings& s = {}) {
  run::KernelRun o = run_kernel(a, s);
  CHECK(output(o) == expected(o));
  return o;
}

}  // namespace

TEST_CASE("every vector-add kernel is right on the RTL, all dtypes, in check mode", "[kernels]") {
  const isa::Dtype dt = GENERATE(isa::Dtype::fp32, isa::Dtype::bf16, isa::Dtype::fp16);
  struct Case {
    const char* kernel;
    int64_t n, row_chunk, free_dim;
  };
  const Case cases[] = {
      {"naive", 1, 0, 0},       {"naive", 100, 0, 0},      {"naive", 128, 0, 0},
      {"tiled", 48, 1, 0},      {"tiled", 256, 64, 0},     {"tiled", 1280, 128, 0},
      {"stream", 2560, 0, 2},   {"stream", 12800, 0, 50},  {"stream", 25600, 0, 200},
      {"direct_alloc", 128000, 0, 0},
  };
  for (const auto& c : cases) {
    kernels::Args a = args(c.kernel, c.n, dt);
    if (c.row_chunk) a.set("row_chunk", c.row_chunk);
    if (c.free_dim) a.set("free_dim", c.free_dim);
    INFO(c.kernel << " n=" << c.n << " dtype=" << isa::to_string(dt));
    const run::KernelRun o = run_right(a);
    CHECK(o.exact);
    CHECK(o.result.stats.checked_instructions == o.result.stats.instructions - [&] {
      // sem_wait instructions are not compared (they have no destination)
      uint64_t w = 0;
      for (const auto& s : o.program.streams)
        for (const auto& in : s.insns) w += in.insn.opcode == isa::Opcode::sem_wait;
      return w;
    }());
  }
}

TEST_CASE("direct_alloc_bad: the overlapping tiles give a wrong answer, the same on RTL and golden model", "[kernels]") {
  // a, b and the result share one SBUF buffer: b's load overwrites a, and the add computes
  // b + b. Check mode passes (the RTL does what the program says); the answer is wrong.
  kernels::Args a = args("direct_alloc_bad", 256000);
  const run::KernelRun o = run_kernel(a);
  CHECK(output(o) != expected(o));
  CHECK_FALSE(o.correct);
  const auto& b = o.inputs.at("b_vec").bytes;
  size_t doubled = 0;
  for (size_t i = 0; i < b.size(); i += 4) {
    float bv, ov;
    std::memcpy(&bv, b.data() + i, 4);
    std::memcpy(&ov, output(o).data() + i, 4);
    doubled += (ov == bv + bv);
  }
  CHECK(doubled == b.size() / 4);
  // The good kernel with the same inputs is right.
  const run::KernelRun good = run_right(args("direct_alloc", 256000));
}

TEST_CASE("skipping idle cycles leaves the cycle count exact", "[kernels]") {
  const kernels::Args t = args("tiled", 64).set("row_chunk", 1);
  const kernels::Args s = args("stream", 256000).set("free_dim", 1000);
  const kernels::Args d = args("tiled", 1280);
  for (const auto& a : {t, s, d}) {
    INFO(a.kernel);
    const run::KernelRun fast = run_kernel(a, on("trn2", false, true));
    const run::KernelRun slow = run_kernel(a, on("trn2", false, false));
    CHECK(fast.result.stats.cycles == slow.result.stats.cycles);
    CHECK(fast.result.stats.skipped_cycles > 0);
    CHECK(slow.result.stats.skipped_cycles == 0);
    CHECK(output(fast) == output(slow));
  }
}

TEST_CASE("the trn1 configuration runs the kernels at its own clock", "[kernels]") {
  const run::KernelRun o = run_right(args("stream", 25600), on("trn1"));
  CHECK(o.result.stats.time_us == Approx(static_cast<double>(o.result.stats.cycles) / 2800.0));
}

TEST_CASE("at n=256000, FREE_DIM=1000 beats FREE_DIM=2000: loads overlap the adds", "[kernels][timing]") {
  const run::KernelRun o1 = run_right(args("stream", 256000).set("free_dim", 1000), on("trn2", false));
  const run::KernelRun o2 = run_right(args("stream", 256000).set("free_dim", 2000), on("trn2", false));
  CHECK(o1.result.stats.dma_transfers == 6);
  CHECK(o2.result.stats.dma_transfers == 3);
  CHECK(o1.result.stats.cycles < o2.result.stats.cycles);
}

TEST_CASE("at n=25600, ROW_CHUNK=128 is at least 50x faster than ROW_CHUNK=1", "[kernels][timing][slow]") {
  const run::KernelRun o1 = run_right(args("tiled", 25600).set("row_chunk", 1), on("trn2", false));
  const run::KernelRun o128 = run_right(args("tiled", 25600).set("row_chunk", 128), on("trn2", false));
  CHECK(o1.result.stats.dma_transfers == 76800);
  CHECK(o128.result.stats.dma_transfers == 600);
  // Tens of milliseconds of device time, as on the chip: every transfer pays the fixed cost.
  CHECK(o1.result.stats.time_us > 10000.0);
  CHECK(o1.result.stats.cycles >= 50 * o128.result.stats.cycles);
}

TEST_CASE("check mode stops at the first instruction whose result differs from the golden model", "[kernels]") {
  // The golden model gets one input element changed; the first instruction whose destination
  // shows it is the load of that tile (q1: the loads of b go to DMA queue 1).
  kernels::Args a = args("stream", 25600);
  const Program prog = kernels::build(a, *find_preset("trn2"));
  const HbmTensor* b = prog.find_tensor("b_vec");
  REQUIRE(b != nullptr);
  const uint64_t flip = b->offset + 4 * 201;  // element 201 = partition 1, column 1 of the (128, 200) view
  try {
    testing::RunSettings st;
    st.golden_setup = [&](GoldenModel& g) { g.hbm()[flip] ^= 0x01; };
    run_kernel(a, st);
    FAIL("check mode did not report the difference");
  } catch (const SimError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK_THAT(m, Catch::Contains("check: RTL and golden model differ after q1[0] completed at cycle"));
    CHECK_THAT(m, Catch::Contains("dma_copy"));
    CHECK_THAT(m, Catch::Contains("kernels/src/vector_add.cpp:"));
    CHECK_THAT(m, Catch::Contains("first difference: element 201 (partition 1, byte 0x"));
  }
}
