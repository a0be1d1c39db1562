// The semaphore rules every model shares (ncore/semaphores.hpp): how often an instruction fires
// its update, conditions compared unsigned, counters that wrap.
#include <catch2/catch.hpp>

#include "ncore/error.hpp"
#include "ncore/semaphores.hpp"

namespace {

namespace isa = ncore::isa;
using isa::Opcode;
using isa::SemCond;
using isa::SemOp;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

isa::Insn updating(Opcode op, SemOp upd, uint32_t val) {
  isa::Insn i{};
  i.opcode = op;
  i.upd_sem = 3;
  i.upd_op = upd;
  i.upd_val = val;
  return i;
}

}  // namespace

TEST_CASE("a DMA transfer fires its update once per DMA engine, whatever the update, anything else once",
          "[firmware]") {
  const auto engines = static_cast<uint32_t>(trn2().dma_engines);
  CHECK(ncore::sem_update_fires(updating(Opcode::dma_copy, SemOp::inc, 0), trn2()) == engines);
  CHECK(ncore::sem_update_fires(updating(Opcode::tensor_tensor, SemOp::inc, 0), trn2()) == 1);
  CHECK(ncore::sem_update_fires(updating(Opcode::sem_wait, SemOp::inc, 0), trn2()) == 1);

  ncore::SemaphoreFile s;
  s.fire_all(updating(Opcode::dma_copy, SemOp::inc, 0), trn2());
  CHECK(s[3] == engines);
  s.fire_all(updating(Opcode::dma_copy, SemOp::add, 2), trn2());
  CHECK(s[3] == 3 * engines);
  s.fire_all(updating(Opcode::dma_copy, SemOp::dec, 0), trn2());
  CHECK(s[3] == 2 * engines);
  s.fire_all(updating(Opcode::dma_copy, SemOp::sub, 2), trn2());
  CHECK(s[3] == 0);
  s.fire_all(updating(Opcode::dma_copy, SemOp::set, 7), trn2());
  CHECK(s[3] == 7);
  s.fire_all(updating(Opcode::activation, SemOp::add, 5), trn2());
  CHECK(s[3] == 12);
  s.fire_all(updating(Opcode::activation, SemOp::none, 5), trn2());
  CHECK(s[3] == 12);
  s.reset();
  CHECK(s[3] == 0);
}

TEST_CASE("semaphore counters wrap and conditions compare them unsigned", "[firmware]") {
  ncore::SemaphoreFile s;
  s.fire(updating(Opcode::sem_wait, SemOp::dec, 0));
  CHECK(s[3] == 0xFFFFFFFFu);
  isa::Insn w{};
  w.wait_sem = 3;
  w.wait_cond = SemCond::gt;
  w.wait_val = 1;
  CHECK(s.wait_holds(w));
  w.wait_cond = SemCond::lt;
  CHECK_FALSE(s.wait_holds(w));
  w.wait_cond = SemCond::none;
  CHECK(s.wait_holds(w));
  CHECK(ncore::sem_cond_holds(SemCond::eq, 4, 4));
  CHECK_FALSE(ncore::sem_cond_holds(SemCond::ne, 4, 4));
  CHECK(ncore::sem_cond_holds(SemCond::ge, 4, 4));
  CHECK(ncore::sem_cond_holds(SemCond::le, 4, 4));
  CHECK_THROWS_AS(ncore::sem_cond_holds(static_cast<SemCond>(7), 0, 0), ncore::SimError);
  CHECK_THROWS_AS(ncore::sem_apply(static_cast<SemOp>(7), 0, 0), ncore::SimError);
}
