// Check mode: the golden model runs every instruction as it completes on the RTL, and the
// instruction's destination is compared with the RTL's there and then; the first difference is a
// SimError naming the instruction, its kernel source line, the cycle and the element.
#pragma once

#include <cstdint>
#include <vector>

#include "core/core_sim.hpp"
#include "core/insn_stream.hpp"
#include "core/rtl_model.hpp"
#include "core/pe_sequencer.hpp"
#include "golden_model.hpp"

namespace ncore::sim {

class GoldenCheck {
 public:
  // The golden model starts from `hbm` as it is now (then opt.golden_setup, if any, is called on it).
  GoldenCheck(const Preset& preset, const Program& prog, ByteSpan hbm, const RtlModel& rtl,
              const PeSequencer& pe, const RunOptions& opt);

  // A sem_wait retired (no data effect; the golden model validates it).
  void retired(const isa::Insn& in) { golden_.execute(in); }
  // Instruction i of `st` completed on the RTL at cycle `now`: runs it on the golden model and
  // compares its destination(s); whether it was compared (a load_stationary is seen through the
  // multiplies that use it, a multiply whose PSUM destination a later multiply in flight writes
  // through that one: the last of an accumulation group holds the sum of all).
  bool completed(const InsnStream& st, uint32_t i, uint64_t now);

 private:
  void compare(const InsnStream& st, uint32_t i, uint64_t now, const isa::Ap& d, const char* which) const;

  GoldenModel golden_;
  const Program& prog_;
  ByteSpan hbm_;
  const RtlModel& rtl_;
  const PeSequencer& pe_;
};

}  // namespace ncore::sim
