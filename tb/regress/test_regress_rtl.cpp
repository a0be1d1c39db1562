// The lockstep regression's machinery on the RTL: a difference planted in the golden model's HBM
// (the check mode's test hook) is reported as a mismatch by a random Program that reads it, and
// the shrinker reduces that Program to one DMA transfer that reads the planted element.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/core_sim.hpp"
#include "golden_model.hpp"
#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "program_gen.hpp"
#include "shrink.hpp"

using namespace ncore;

namespace {

// The first message of a check-mode run of `p` with the golden model's HBM byte `byte` flipped
// (its top bit), or "" when the run passes.
std::string run_planted(const Preset& pr, const Program& p, uint64_t byte) {
  std::vector<uint8_t> hbm(p.hbm_bytes, 0);
  sim::RunOptions ro;
  ro.check = true;
  ro.stall_limit = 200000;
  ro.golden_setup = [byte](GoldenModel& g) { g.hbm()[byte] ^= 0x80; };
  try {
    sim::Core::get(pr, 1).run(p, hbm, ro);
  } catch (const SimError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a planted difference is found in lockstep and shrunk to the DMA that reads it", "[regress]") {
  const Preset& pr = *find_preset("tiny");
  unsigned shrunk = 0;
  for (uint64_t seed = 1; seed <= 40 && shrunk < 2; ++seed) {
    const regress::Draft d = regress::draw(pr, seed);
    // the sign byte of the first element the first HBM->SBUF transfer reads
    const isa::Insn* first = nullptr;
    for (const auto& s : d.steps)
      if (s.kind == regress::Step::Kind::data && s.insn.opcode == isa::Opcode::dma_copy &&
          s.insn.src0.mem == isa::Buffer::hbm && s.insn.dst.mem == isa::Buffer::sbuf) {
        first = &s.insn;
        break;
      }
    if (!first) continue;
    int64_t addr = -1;
    ap_for_each(first->src0, [&](uint32_t, uint64_t i, int64_t a) {
      if (addr < 0 && i == 0) addr = a;
    });
    const uint64_t byte = static_cast<uint64_t>(addr) + isa::dtype_bytes(first->src0.dtype) - 1;
    const std::string msg = run_planted(pr, regress::assemble(pr, d), byte);
    if (msg.rfind("check:", 0) != 0) continue;  // e.g. a NaN, whose sign the cast does not keep
    INFO("seed " << seed << ": " << msg);
    const regress::ShrinkResult r = regress::shrink(
        pr, d, [&](const Program& p) { return run_planted(pr, p, byte).rfind("check:", 0) == 0; });
    CHECK(r.complete);
    REQUIRE(r.draft.steps.size() == 1);
    const isa::Insn& i = r.draft.steps[0].insn;
    CHECK(i.opcode == isa::Opcode::dma_copy);
    CHECK(i.src0.mem == isa::Buffer::hbm);
    CHECK(r.instructions_after <= 2);  // the transfer, perhaps the sem_wait of a tail update
    CHECK(r.instructions_after < r.instructions_before);
    // The shrunk failure again with its waveforms around the failing cycle, as ncore-regress
    // writes them next to its image.
    const std::string msg2 = run_planted(pr, r.program, byte);
    const std::string window = regress::failure_window(msg2);
    REQUIRE(!window.empty());
    const std::string fst = "regress-planted-" + std::to_string(seed) + ".fst";
    std::vector<uint8_t> hbm(r.program.hbm_bytes, 0);
    sim::RunOptions ro;
    sim::set_waves(ro, fst, {"dma"}, window, {"--waves", "--waves-scope", "--waves-window"});
    ro.check = true;
    ro.golden_setup = [byte](GoldenModel& g) { g.hbm()[byte] ^= 0x80; };
    CHECK_THROWS_AS(sim::Core::get(pr, 1).run(r.program, hbm, ro), SimError);
    CHECK(std::filesystem::file_size(fst) > 0);
    std::filesystem::remove(fst);
    ++shrunk;
  }
  CHECK(shrunk == 2);
}
