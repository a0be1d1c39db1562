// A one-instruction-at-a-time engine's sequencer; see engine_sequencer.hpp.
#include "core/engine_sequencer.hpp"

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::sim {

bool EngineSequencer::issue(uint64_t now) {
  bool drive = false;
  if (st_.has_head() && st_.idle() && pins_.ready.read()) {
    const isa::Insn& in = st_.head();
    if (in.opcode != isa::Opcode::sem_wait && st_.semaphores().wait_holds(in)) {
      pins_.present(in);
      drive = true;
      st_.record(st_.issue(now)).start = now;
    }
  }
  pins_.valid.write(drive);
  return drive;
}

void EngineSequencer::edge(uint64_t now) {
  if (pins_.rd_start.read() && !st_.idle()) {
    const isa::Insn& in = st_.insn(st_.oldest());
    if (in.upd_when == isa::SemWhen::read) st_.semaphores().fire(in);
  }
  if (pins_.done.read()) {
    if (st_.idle()) throw SimError(fmt::format("{} reported done with no instruction in flight", what_));
    st_.complete_oldest(now + 1, true);
  }
}

}  // namespace ncore::sim
