// Semaphores: the 256 counters the streams of a Program synchronise on, and the ISA's rules for
// them, written once for every model that runs a Program (the golden model's run(), the SystemC
// top's sequencers, the firmware tests' interleaving model).
//
//   wait    an instruction starts only when S[wait_sem] <wait_cond> wait_val holds (none: always);
//   update  it then applies upd_op to S[upd_sem] with upd_val, at upd_when: when it starts
//           reading its inputs or when it completes; a sem_wait (sequencer-only) applies it as
//           soon as its wait holds, whatever upd_when says;
//   fires   how many times the update is applied: a dma_copy is split over the DMA engines and
//           each engine applies it when its share reaches that point, so it fires
//           preset.dma_engines times (an inc adds dma_engines, a dec subtracts as many, a set
//           sets); every other instruction fires it once.
//
// Counters are uint32 and wrap, as the hardware's do; conditions compare unsigned.
#pragma once

#include <array>
#include <cstdint>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace ncore {

namespace detail {
[[noreturn]] void bad_sem_field(const char* what, unsigned value);  // throws SimError
}

// Whether S <cond> val holds (SemCond::none: always).
inline bool sem_cond_holds(isa::SemCond cond, uint32_t s, uint32_t val) {
  switch (cond) {
    case isa::SemCond::none: return true;
    case isa::SemCond::eq: return s == val;
    case isa::SemCond::ne: return s != val;
    case isa::SemCond::ge: return s >= val;
    case isa::SemCond::gt: return s > val;
    case isa::SemCond::le: return s <= val;
    case isa::SemCond::lt: return s < val;
  }
  detail::bad_sem_field("condition", static_cast<unsigned>(cond));
}

// S after one application of the update `op` with operand `val`.
inline uint32_t sem_apply(isa::SemOp op, uint32_t s, uint32_t val) {
  switch (op) {
    case isa::SemOp::none: return s;
    case isa::SemOp::inc: return s + 1;
    case isa::SemOp::dec: return s - 1;
    case isa::SemOp::add: return s + val;
    case isa::SemOp::sub: return s - val;
    case isa::SemOp::set: return val;
  }
  detail::bad_sem_field("update", static_cast<unsigned>(op));
}

// How many times `insn`'s update fires in all: preset.dma_engines for a dma_copy, 1 otherwise.
inline unsigned sem_update_fires(const isa::Insn& insn, const Preset& preset) {
  return insn.opcode == isa::Opcode::dma_copy ? static_cast<unsigned>(preset.dma_engines) : 1u;
}

// The semaphore file: kNumSemaphores uint32 counters, zero at reset.
class SemaphoreFile {
 public:
  using Values = std::array<uint32_t, kNumSemaphores>;

  void reset() { s_.fill(0); }
  uint32_t operator[](unsigned i) const { return s_[i]; }
  const Values& values() const { return s_; }

  // Whether `insn`'s wait holds now.
  bool wait_holds(const isa::Insn& insn) const { return sem_cond_holds(insn.wait_cond, s_[insn.wait_sem], insn.wait_val); }
  // Applies `insn`'s update `times` times (the DMA engines that reached the point together).
  void fire(const isa::Insn& insn, unsigned times = 1) {
    if (insn.upd_op == isa::SemOp::none) return;
    uint32_t& s = s_[insn.upd_sem];
    for (unsigned k = 0; k < times; ++k) s = sem_apply(insn.upd_op, s, insn.upd_val);
  }
  // Applies it as often as the instruction fires it in all (sem_update_fires).
  void fire_all(const isa::Insn& insn, const Preset& preset) { fire(insn, sem_update_fires(insn, preset)); }

 private:
  Values s_{};
};

}  // namespace ncore
