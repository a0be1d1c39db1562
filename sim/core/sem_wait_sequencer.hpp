// The sequencer-only part of the engine streams: a sem_wait at the head of an engine's stream
// retires (and fires its update) as soon as its wait holds, before the engines' sequencers
// issue in the same cycle. The pool and sync streams hold nothing else in this model. (DMA
// queues retire their sem_waits themselves, in their round-robin turn: dma_queues.hpp.)
#pragma once

#include <utility>
#include <vector>

#include "core/insn_stream.hpp"
#include "core/sequencer.hpp"

namespace ncore::sim {

class SemWaitSequencer final : public Sequencer {
 public:
  explicit SemWaitSequencer(std::vector<InsnStream*> streams) : streams_(std::move(streams)) {}

  void reset() override {}
  bool issue(uint64_t now) override {
    bool acted = false;
    for (InsnStream* st : streams_) acted |= st->retire_sem_waits(now);
    return acted;
  }
  void edge(uint64_t) override {}
  bool can_act(uint64_t) const override {
    for (const InsnStream* st : streams_)
      if (st->sem_wait_can_retire()) return true;
    return false;
  }
  bool in_flight() const override { return false; }

 private:
  std::vector<InsnStream*> streams_;
};

}  // namespace ncore::sim
