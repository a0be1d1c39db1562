// The tensor engine's sequencer; see pe_sequencer.hpp.
#include "core/pe_sequencer.hpp"

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"

namespace ncore::sim {

void PeSequencer::reset() {
  fl_.clear();
  pending_ = false;
  pins_.valid.write(false);
}

bool PeSequencer::issue(uint64_t now) {
  bool drive = false;
  if (!pending_ && st_.has_head()) {
    const isa::Insn& in = st_.head();
    if (in.opcode != isa::Opcode::sem_wait && st_.semaphores().wait_holds(in) && ready_for(in)) {
      pins_.present(in);
      drive = true;
      pending_ = true;
      fl_.push_back(InFlight{st_.issue(now), in.opcode != isa::Opcode::load_stationary});
    }
  }
  pins_.valid.write(drive);
  return drive;
}

PeSequencer::InFlight& PeSequencer::mark(bool mm, bool InFlight::*flag, const char* what) {
  for (auto& f : fl_)
    if (f.mm == mm && !(f.*flag)) {
      f.*flag = true;
      return f;
    }
  throw SimError(fmt::format("tensor engine reported {} {} with none in flight", mm ? "multiply" : "load", what));
}

void PeSequencer::edge(uint64_t now) {
  if (pins_.accept.read()) {
    if (!pending_) throw SimError("tensor engine accepted an instruction that was not presented");
    pending_ = false;
  }
  for (bool mm : {false, true}) {
    if (!(mm ? pins_.mm_start.read() : pins_.ls_start.read())) continue;
    InFlight& f = mark(mm, &InFlight::started, "a read start");
    st_.record(f.index).start = now;
    const isa::Insn& in = st_.insn(f.index);
    if (in.upd_when == isa::SemWhen::read) st_.semaphores().fire(in);
  }
  if (pins_.ls_done.read()) mark(false, &InFlight::done, "done");
  if (pins_.mm_done.read()) mark(true, &InFlight::done, "done");
  while (!fl_.empty() && fl_.front().done) {
    if (st_.idle() || st_.oldest() != fl_.front().index) throw SimError("tensor engine sequencer lost track of its instructions");
    st_.complete_oldest(now + 1, true);
    fl_.pop_front();
  }
}

bool PeSequencer::can_act(uint64_t) const {
  if (pending_ || !st_.head_can_start()) return false;
  const isa::Insn& in = st_.head();
  return in.opcode != isa::Opcode::sem_wait && ready_for(in);
}

bool PeSequencer::overwritten(uint32_t i) const {
  const Box b = ap_box(st_.insn(i).dst);
  for (const auto& f : fl_)
    if (f.index > i && f.mm && ap_box(st_.insn(f.index).dst).overlaps(b)) return true;
  return false;
}

}  // namespace ncore::sim
