// The DMA queues' sequencers: each queue takes its stream's transfers in order (wait -> fixed
// cost -> handed to the RTL -> every DMA engine done); the queues share the DMA block's one
// instruction port, handed over round-robin.
//
// The fixed cost (preset.dma_fixed_cost_ns: descriptor, sync and semaphore-to-start latency) is
// latency: a transfer pays it between its issue and its hand-over to the RTL, and a queue may
// issue its next transfer while earlier ones are in flight, so that their fixed costs overlap
// the data of the transfers before them (and each other's, on other queues). Three limits:
// - preset.dma_queue_issue_ns: a queue issues a transfer at least that long after its previous
//   one (the part of the fixed cost that holds the queue; the rest only delays the transfer);
// - preset.dma_queue_inflight: transfers issued and not complete per queue;
// - preset.dma_engine_inflight: the same over all the queues (every transfer has a share on
//   every DMA engine, so this is the limit per engine).
// The data still moves one transfer at a time per queue, in program order: the RTL's queue slot
// holds one transfer, and a queue hands its oldest transfer over once its fixed cost has elapsed
// and the slot is free (the transfer before it complete). With a queue limit of 1 a queue serves
// one transfer at a time, fixed cost and data.
//
// A queue retires the sem_waits at its head and issues its next transfer when its wait holds
// and the limits allow. A transfer's update fires once per DMA engine (ncore/semaphores.hpp):
// all of them at the hand-over for a read-time update, one per engine done bit for a
// completion update.
#pragma once

#include <cstdint>
#include <deque>
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
  uint64_t next_event() const override;  // the earliest end of a fixed cost or of a queue's issue interval
  bool paying_fixed_cost() const;        // some queue's transfer waits for its fixed cost

 private:
  struct Queue {
    InsnStream* st = nullptr;
    std::deque<uint64_t> cost_end;  // its transfers not handed over yet, oldest first: when each one's fixed cost has elapsed
    unsigned transfers = 0;         // its transfers issued and not complete (in the RTL or not)
    uint64_t next_issue = 0;        // the earliest cycle it may issue again (dma_queue_issue_ns)
    bool handed = false;            // its oldest transfer is in the RTL
    unsigned engines_done = 0;      // of that transfer
    bool waiting_cost() const { return !cost_end.empty(); }
  };
  // Whether the limits let queue q issue a transfer at cycle `now`.
  bool may_issue(const Queue& q, uint64_t now) const {
    return q.transfers < queue_limit_ && transfers_ < engine_limit_ && now >= q.next_issue;
  }
  // Retires the queue's sem_waits and issues its next transfers while their waits hold and the
  // limits allow.
  bool start(Queue& q, uint64_t now);
  // Whether the queue's oldest transfer may go to the RTL now (its slot aside).
  static bool can_hand(const Queue& q, uint64_t now) { return !q.handed && q.waiting_cost() && q.cost_end.front() <= now; }
  void hand_over(Queue& q, uint64_t now);
  uint64_t engine_bits(unsigned qi) const;  // queue qi's engine done bits in done_

  std::vector<Queue> queues_;
  DmaPins& pins_;
  const RtlModel& rtl_;
  const Preset& preset_;
  unsigned engines_;
  uint64_t fixed_cycles_, issue_cycles_;  // dma_fixed_cost_ns and dma_queue_issue_ns in cycles
  unsigned queue_limit_, engine_limit_;   // dma_queue_inflight, dma_engine_inflight
  unsigned transfers_ = 0;                // transfers issued and not complete, over all the queues
  unsigned rr_ = 0;                       // the queue with first claim on the port
  std::vector<uint32_t> done_;            // dma_done_o's words, read after each edge
};

}  // namespace ncore::sim
