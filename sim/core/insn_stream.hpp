// One of a Program's in-order instruction streams as its sequencer walks it: the head (the next
// instruction to issue), the instructions issued and not yet complete, in program order, and
// their records. It also runs the one sequencer-only instruction, sem_wait, which retires at
// the head as soon as its wait holds (its update fires then, once).
//
// The engines' sequencers (engine_sequencer.hpp, pe_sequencer.hpp, dma_queues.hpp) take
// instructions from the head into flight and complete them; what follows a retirement or a
// completion (counts, check mode) is the InsnSink's business.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "core/core_sim.hpp"
#include "ncore/program.hpp"
#include "ncore/semaphores.hpp"

namespace ncore::sim {

class InsnStream;

// Told of every instruction that leaves a stream.
class InsnSink {
 public:
  // A sem_wait retired at the head (at the cycle of its record's end).
  virtual void retired(const InsnStream& st, uint32_t index) = 0;
  // An instruction in flight completed at cycle `end`.
  virtual void completed(const InsnStream& st, uint32_t index, uint64_t end) = 0;

 protected:
  ~InsnSink() = default;
};

class InsnStream {
 public:
  InsnStream(SemaphoreFile& sems, InsnSink& sink) : sems_(&sems), sink_(&sink) {}

  // A new run of stream `index`, `st`, whose records (one per instruction) are at `records`.
  void reset(unsigned index, const Stream& st, InsnRecord* records);

  unsigned index() const { return index_; }
  const std::string& name() const { return st_->name; }
  const isa::Insn& insn(uint32_t i) const { return st_->insns[i].insn; }
  InsnRecord& record(uint32_t i) { return recs_[i]; }
  SemaphoreFile& semaphores() const { return *sems_; }

  bool has_head() const { return pc_ < st_->insns.size(); }
  uint32_t pc() const { return static_cast<uint32_t>(pc_); }
  const isa::Insn& head() const { return insn(pc()); }
  // Whether there is a head and its wait holds now.
  bool head_can_start() const { return has_head() && sems_->wait_holds(head()); }
  // Whether the head is a sem_wait whose wait holds now.
  bool sem_wait_can_retire() const { return head_can_start() && head().opcode == isa::Opcode::sem_wait; }

  // Records the cycle the sequencer reached the head (once per instruction).
  void note_ready(uint64_t now) {
    if (!head_ready_set_) {
      recs_[pc_].ready = now;
      head_ready_set_ = true;
    }
  }
  // Retires the sem_waits at the head whose waits hold, noting the head reached. Returns whether
  // one retired.
  bool retire_sem_waits(uint64_t now);
  // Takes the head into flight at cycle `now` (its record's issue); returns its index.
  uint32_t issue(uint64_t now);

  bool idle() const { return in_flight_.empty(); }  // nothing issued and not complete
  uint32_t oldest() const { return in_flight_.front(); }
  // The oldest instruction in flight completed at cycle `end`: its completion update fires when
  // `fire` (a DMA transfer's fire per engine, as its engines finish) and the sink is told.
  void complete_oldest(uint64_t end, bool fire);

 private:
  SemaphoreFile* sems_;
  InsnSink* sink_;
  unsigned index_ = 0;
  const Stream* st_ = nullptr;
  InsnRecord* recs_ = nullptr;
  size_t pc_ = 0;
  bool head_ready_set_ = false;
  std::deque<uint32_t> in_flight_;
};

}  // namespace ncore::sim
