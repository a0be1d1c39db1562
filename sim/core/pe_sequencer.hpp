// The tensor engine's sequencer. It presents one instruction at a time, when the engine's ready
// for the head's kind (load_stationary or multiply_moving) says it takes it at once; several may
// be in the engine (a load in the shadow of a multiply, a multiply waiting behind the streaming
// one). The engine's accept, read-start and done pulses come per kind, each in program order
// within its kind; instructions retire in program order (a load may finish before the multiply
// ahead of it).
#pragma once

#include <deque>

#include "core/core_pins.hpp"
#include "core/insn_stream.hpp"
#include "core/sequencer.hpp"

namespace ncore::sim {

class PeSequencer final : public Sequencer {
 public:
  PeSequencer(InsnStream& stream, PePins& pins) : st_(stream), pins_(pins) {}

  void reset() override;
  bool issue(uint64_t now) override;
  void edge(uint64_t now) override;
  bool can_act(uint64_t) const override;
  bool in_flight() const override { return !fl_.empty(); }

  // Whether a multiply later than instruction i, already presented, writes PSUM where i does
  // (check mode compares i's result through that one).
  bool overwritten(uint32_t i) const;

 private:
  struct InFlight {
    uint32_t index = 0;
    bool mm = false;       // a multiply (else a load)
    bool started = false;  // its read-start pulse seen
    bool done = false;     // its done pulse seen
  };
  // The oldest of kind `mm` whose `flag` is not yet set, now set (an RTL pulse in program order).
  InFlight& mark(bool mm, bool InFlight::*flag, const char* what);
  bool ready_for(const isa::Insn& in) const {
    return in.opcode == isa::Opcode::load_stationary ? pins_.ls_ready.read() : pins_.mm_ready.read();
  }

  InsnStream& st_;
  PePins& pins_;
  std::deque<InFlight> fl_;  // presented, not retired, in program order
  bool pending_ = false;     // presented, not yet accepted
};

}  // namespace ncore::sim
