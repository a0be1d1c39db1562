// The vector-add kernels on the RTL: every kernel at several sizes and all three dtypes, in
// check mode (every instruction compared with the golden model as it completes), with the
// result compared with a plain C++ reference; and the timing behaviour the real chip shows.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <random>

#include "core_sim.hpp"
#include "golden_model.hpp"
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"
#include "nki/registry.hpp"
#include "numerics.hpp"

using namespace ncore;

namespace {

struct Outcome {
  sim::RunResult run;
  std::vector<uint8_t> out, want;
  std::map<std::string, std::vector<uint8_t>> inputs;
};

// Random inputs in [-4, 4) in the kernel's dtype, the run, the output and the reference.
Outcome run_kernel(const kernels::Args& a, const char* preset = "trn2", bool check = true, bool skip = true,
                   uint64_t seed = 1, std::function<void(GoldenModel&)> golden_setup = {}) {
  const Preset& p = *find_preset(preset);
  Program prog = kernels::build(a, p);
  std::vector<uint8_t> hbm(prog.hbm_bytes, 0);
  Outcome o;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (const auto& spec : kernels::inputs(a)) {
    const unsigned esz = isa::dtype_bytes(spec.dtype);
    std::vector<uint8_t> bytes(spec.bytes());
    for (uint64_t i = 0; i < bytes.size() / esz; ++i) {
      const uint32_t v = num::from_float(u(rng), spec.dtype);
      std::memcpy(bytes.data() + i * esz, &v, esz);
    }
    const HbmTensor* t = prog.find_tensor(spec.name);
    REQUIRE(t != nullptr);
    std::memcpy(hbm.data() + t->offset, bytes.data(), bytes.size());
    o.inputs[spec.name] = bytes;
  }
  sim::RunOptions opt;
  opt.check = check;
  opt.skip_idle = skip;
  opt.golden_setup = std::move(golden_setup);
  o.run = sim::Core::get(p).run(prog, hbm, opt);
  const HbmTensor* ot = prog.find_tensor("out");
  REQUIRE(ot != nullptr);
  o.out.assign(hbm.begin() + static_cast<long>(ot->offset), hbm.begin() + static_cast<long>(ot->offset + ot->bytes));
  o.want = kernels::reference(a, o.inputs);
  return o;
}

kernels::Args args(const std::string& k, int64_t n, isa::Dtype dt = isa::Dtype::fp32) {
  kernels::Args a;
  a.kernel = k;
  a.n = n;
  a.dtype = dt;
  return a;
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
    if (c.row_chunk) a.row_chunk = c.row_chunk;
    if (c.free_dim) a.free_dim = c.free_dim;
    INFO(c.kernel << " n=" << c.n << " dtype=" << isa::to_string(dt));
    const Outcome o = run_kernel(a);
    CHECK(o.out == o.want);
    CHECK(o.run.checked_instructions == o.run.instructions - [&] {
      // sem_wait instructions are not compared (they have no destination)
      uint64_t w = 0;
      for (const auto& s : kernels::build(a, *find_preset("trn2")).streams)
        for (const auto& in : s.insns) w += in.insn.opcode == isa::Opcode::sem_wait;
      return w;
    }());
  }
}

TEST_CASE("direct_alloc_bad: the overlapping tiles give a wrong answer, the same on RTL and golden model", "[kernels]") {
  // a, b and the result share one SBUF buffer: b's load overwrites a, and the add computes
  // b + b. Check mode passes (the RTL does what the program says); the answer is wrong.
  kernels::Args a = args("direct_alloc_bad", 256000);
  const Outcome o = run_kernel(a);
  CHECK(o.out != o.want);
  const auto& b = o.inputs.at("b_vec");
  size_t doubled = 0;
  for (size_t i = 0; i < b.size(); i += 4) {
    float bv, ov;
    std::memcpy(&bv, b.data() + i, 4);
    std::memcpy(&ov, o.out.data() + i, 4);
    doubled += (ov == bv + bv);
  }
  CHECK(doubled == b.size() / 4);
  // The good kernel with the same inputs is right.
  const Outcome good = run_kernel(args("direct_alloc", 256000));
  CHECK(good.out == good.want);
}

TEST_CASE("skipping idle cycles leaves the cycle count exact", "[kernels]") {
  kernels::Args t = args("tiled", 64);
  t.row_chunk = 1;
  kernels::Args s = args("stream", 256000);
  s.free_dim = 1000;
  kernels::Args d = args("tiled", 1280);
  for (const auto& a : {t, s, d}) {
    INFO(a.kernel);
    const Outcome fast = run_kernel(a, "trn2", false, true);
    const Outcome slow = run_kernel(a, "trn2", false, false);
    CHECK(fast.run.cycles == slow.run.cycles);
    CHECK(fast.run.skipped_cycles > 0);
    CHECK(slow.run.skipped_cycles == 0);
    CHECK(fast.out == slow.out);
  }
}

TEST_CASE("the trn1 configuration runs the kernels at its own clock", "[kernels]") {
  kernels::Args a = args("stream", 25600);
  const Outcome o = run_kernel(a, "trn1");
  CHECK(o.out == o.want);
  CHECK(o.run.time_us == Approx(static_cast<double>(o.run.cycles) / 2800.0));
}

TEST_CASE("at n=256000, FREE_DIM=1000 beats FREE_DIM=2000: loads overlap the adds", "[kernels][timing]") {
  kernels::Args a1 = args("stream", 256000), a2 = args("stream", 256000);
  a1.free_dim = 1000;
  a2.free_dim = 2000;
  const Outcome o1 = run_kernel(a1, "trn2", false), o2 = run_kernel(a2, "trn2", false);
  CHECK(o1.out == o1.want);
  CHECK(o2.out == o2.want);
  CHECK(o1.run.dma_transfers == 6);
  CHECK(o2.run.dma_transfers == 3);
  CHECK(o1.run.cycles < o2.run.cycles);
}

TEST_CASE("at n=25600, ROW_CHUNK=128 is at least 50x faster than ROW_CHUNK=1", "[kernels][timing][slow]") {
  kernels::Args a1 = args("tiled", 25600), a128 = args("tiled", 25600);
  a1.row_chunk = 1;
  a128.row_chunk = 128;
  const Outcome o1 = run_kernel(a1, "trn2", false), o128 = run_kernel(a128, "trn2", false);
  CHECK(o1.out == o1.want);
  CHECK(o128.out == o128.want);
  CHECK(o1.run.dma_transfers == 76800);
  CHECK(o128.run.dma_transfers == 600);
  // Tens of milliseconds of device time, as on the chip: every transfer pays the fixed cost.
  CHECK(o1.run.time_us > 10000.0);
  CHECK(o1.run.cycles >= 50 * o128.run.cycles);
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
    run_kernel(a, "trn2", true, true, 1, [&](GoldenModel& g) { g.hbm()[flip] ^= 0x01; });
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
