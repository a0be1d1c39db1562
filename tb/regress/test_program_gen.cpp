// The random program generator: every Program passes the validator, runs to the end on the golden
// model (no deadlock), is the same for the same seed, and a few hundred seeds hit every bin of the
// census (every instruction, dtype, DMA direction and cast, access-pattern dimensionality,
// reduction axes, ALU op, semaphore op and condition, PSUM operands, sem_waits on every stream).
// Drafts with steps left out (the shrinker's candidates) stay legal and deadlock-free, and the
// shrinker reduces a Program to the one instruction a stand-in failure needs.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "golden_model.hpp"
#include "ncore/semaphores.hpp"
#include "ncore/validate.hpp"
#include "ncore/error.hpp"
#include "program_gen.hpp"
#include "shrink.hpp"

using namespace ncore;

namespace {

std::string image_of(const Program& p) {
  std::ostringstream o;
  p.write_image(o);
  return o.str();
}

}  // namespace

TEST_CASE("the same seed gives the same Program, another seed another", "[regress]") {
  for (const char* name : {"tiny", "trn2"}) {
    const Preset& pr = *find_preset(name);
    const std::string a = image_of(regress::generate(pr, 7));
    CHECK(a == image_of(regress::generate(pr, 7)));
    CHECK(a != image_of(regress::generate(pr, 8)));
  }
}

TEST_CASE("random Programs are legal, end on the golden model and cover the ISA", "[regress]") {
  for (const char* name : {"tiny", "trn2", "trn1"}) {
    const Preset& pr = *find_preset(name);
    std::map<std::string, uint64_t> total;
    const unsigned seeds = std::string(name) == "tiny" ? 300 : 120;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      INFO("preset " << name << " seed " << seed);
      const Program p = regress::generate(pr, seed);
      REQUIRE_NOTHROW(validate_program(p, pr));
      REQUIRE(p.preset == name);
      REQUIRE(p.instruction_count() > 0);
      // the image reads back as the same Program
      std::istringstream in(image_of(p));
      REQUIRE(image_of(Program::read_image(in)) == image_of(p));
      // no deadlock: the golden model runs it to the end, and every wait was reached
      GoldenModel g(pr, p.hbm_bytes);
      GoldenModel::RunStats st;
      REQUIRE_NOTHROW(st = g.run(p));
      REQUIRE(st.instructions == p.instruction_count());
      for (const auto& [bin, n] : regress::census(p)) total[bin] += n;
    }
    for (const std::string& bin : regress::census_bins(pr)) {
      INFO("preset " << name << ": bin " << bin << " never hit in " << seeds << " Programs");
      CHECK(total[bin] > 0);
    }
  }
}

TEST_CASE("weights leave instruction kinds out", "[regress]") {
  const Preset& pr = *find_preset("tiny");
  regress::GenOptions o;
  o.weights = regress::Weights{};
  o.weights.load_stationary = o.weights.multiply_moving = o.weights.dma_copy = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto c = regress::census(regress::generate(pr, seed, o));
    CHECK(c.count("opcode.multiply_moving") == 0);
    CHECK(c.count("opcode.load_stationary") == 0);
    CHECK(c.count("opcode.dma_copy") == 0);
  }
  o.weights = regress::Weights{0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_THROWS_AS(regress::generate(pr, 1, o), std::invalid_argument);
}

TEST_CASE("a draft with steps left out still assembles into a legal Program that ends", "[regress]") {
  for (const char* name : {"tiny", "trn2"}) {
    const Preset& pr = *find_preset(name);
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      INFO("preset " << name << " seed " << seed);
      const regress::Draft d = regress::draw(pr, seed);
      for (unsigned keep : {2u, 3u, 5u}) {
        // every keep-th step only: updates gone under their waits, multiplies without their load
        regress::Draft c = d;
        c.steps.clear();
        for (size_t k = 0; k < d.steps.size(); k += keep) c.steps.push_back(d.steps[k]);
        Program p;
        try {
          p = regress::assemble(pr, c);
        } catch (const SimError&) {
          continue;  // a multiply left without a matching load_stationary: not a candidate
        }
        GoldenModel g(pr, p.hbm_bytes);
        REQUIRE_NOTHROW(g.run(p));
      }
    }
  }
}

TEST_CASE("the shrinker keeps what makes a Program fail and drops the rest", "[regress]") {
  const Preset& pr = *find_preset("tiny");
  // A stand-in for an RTL bug: "fails" when some tensor_reduce reduces fp16 data over two axes.
  auto bad = [](const isa::Insn& i) {
    return i.opcode == isa::Opcode::tensor_reduce && i.src0.dtype == isa::Dtype::fp16 && i.red_axes == 2;
  };
  auto fails = [&](const Program& p) {
    for (const auto& s : p.streams)
      for (const auto& in : s.insns)
        if (bad(in.insn)) return true;
    return false;
  };
  unsigned shrunk = 0;
  for (uint64_t seed = 1; seed <= 200 && shrunk < 3; ++seed) {
    const regress::Draft d = regress::draw(pr, seed);
    if (!fails(regress::assemble(pr, d))) continue;
    const regress::ShrinkResult r = regress::shrink(pr, d, fails);
    INFO("seed " << seed);
    CHECK(r.complete);
    REQUIRE(r.draft.steps.size() == 1);
    const isa::Insn& i = r.draft.steps[0].insn;
    CHECK(bad(i));
    // the operands simplified as far as the rule allows: one partition, at partition 0
    CHECK(i.src0.num_part == 1);
    CHECK(i.src0.start_part == 0);
    CHECK(r.program.instruction_count() <= 2);  // and perhaps the sem_wait of a tail update
    CHECK(r.instructions_after < r.instructions_before);
    ++shrunk;
  }
  CHECK(shrunk == 3);
}


TEST_CASE("a failure's waveform window is the cycles before and just after the cycle it names", "[regress]") {
  CHECK(regress::failure_window("check: RTL and golden model differ after dve[3] completed at cycle 5000\n  x") ==
        "3000:5200");
  CHECK(regress::failure_window("no instruction completed for 200000 cycles (at cycle 900); giving up") == "0:1100");
  CHECK(regress::failure_window("deadlock: every stream waits on a semaphore that nothing in flight will change") ==
        "");
  CHECK(regress::failure_window("at cycle 100", 10, 5) == "90:105");
}

