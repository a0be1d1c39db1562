// The DMA queues' sequencers: each queue serves its stream one transfer at a time (wait ->
// fixed cost -> handed to the RTL -> every DMA engine done); the queues share the DMA block's
// one instruction port, handed over round-robin.
//
// A queue whose transfer is complete retires the sem_waits at its head and starts the next
// transfer once its wait holds; the fixed cost (preset.dma_fixed_cost_ns) runs in the sequencer,
// and the RTL gets the transfer when it has elapsed and the queue is free there. A transfer's
// update fires once per DMA engine (ncore/semaphores.hpp): all of them at the hand-over for a
// read-time update, one per engine done bit for a completion update.
#pragma once

#include <cstdint>
#include <vector>

#include "core/core_pins.hpp"
#include "core/insn_stream.hpp"
#include "core/rtl_model.hpp"
#include "core/sequencer.hpp"
#include "ncore/presets_gen.hpp"

namespace ncore::sim {

class DmaQueues final : public Sequencer {
 public:
  // `streams`: the queues' streams, queue 0 first.
  DmaQueues(std::vector<InsnStream*> streams, DmaPins& pins, const RtlModel& rtl, const Preset& preset);

  void reset() override;
  bool issue(uint64_t now) override;
  void edge(uint64_t now) override;
  bool can_act(uint64_t now) const override;
  bool in_flight() const override;
  uint64_t next_event() const override;  // the earliest end of a fixed cost
  bool paying_fixed_cost() const;        // some queue's transfer waits for its fixed cost

 private:
  struct Queue {
    InsnStream* st = nullptr;
    uint64_t start_at = 0;   // cycle its transfer's fixed cost has elapsed
    bool handed = false;     // its transfer is in the RTL
    unsigned engines_done = 0;
    bool busy() const { return !st->idle(); }  // a transfer between issue and completion
    bool waiting_cost() const { return busy() && !handed; }
  };
  // Retires the queue's sem_waits and starts its next transfer if the wait holds.
  bool start(Queue& q, uint64_t now);
  void hand_over(Queue& q, uint64_t now);
  uint64_t engine_bits(unsigned qi) const;  // queue qi's engine done bits in done_

  std::vector<Queue> queues_;
  DmaPins& pins_;
  const RtlModel& rtl_;
  const Preset& preset_;
  unsigned engines_;
  uint64_t fixed_cycles_;
  unsigned rr_ = 0;               // the queue with first claim on the port
  std::vector<uint32_t> done_;    // dma_done_o's words, read after each edge
};

}  // namespace ncore::sim
