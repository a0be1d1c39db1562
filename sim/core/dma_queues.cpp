// The DMA queues' sequencers; see dma_queues.hpp.
#include "core/dma_queues.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::sim {

DmaQueues::DmaQueues(std::vector<InsnStream*> streams, DmaPins& pins, const RtlModel& rtl, const Preset& preset)
    : pins_(pins),
      rtl_(rtl),
      preset_(preset),
      engines_(static_cast<unsigned>(preset.dma_engines)),
      fixed_cycles_(preset.dma_fixed_cost_ns * preset.clock_mhz / 1000),
      issue_cycles_(preset.dma_queue_issue_ns * preset.clock_mhz / 1000),
      queue_limit_(static_cast<unsigned>(preset.dma_queue_inflight)),
      engine_limit_(static_cast<unsigned>(preset.dma_engine_inflight)),
      done_((streams.size() * engines_ + 31) / 32) {
  for (InsnStream* st : streams) queues_.push_back(Queue{st});
}

void DmaQueues::reset() {
  for (Queue& q : queues_) q = Queue{q.st};
  transfers_ = 0;
  rr_ = 0;
  pins_.valid.write(false);
}

bool DmaQueues::start(Queue& q, uint64_t now) {
  bool acted = false;
  while (may_issue(q, now)) {
    acted |= q.st->retire_sem_waits(now);
    if (!q.st->head_can_start()) break;
    q.st->issue(now);
    q.cost_end.push_back(now + fixed_cycles_);
    q.next_issue = now + issue_cycles_;
    ++q.transfers;
    ++transfers_;
    acted = true;
  }
  return acted;
}

void DmaQueues::hand_over(Queue& q, uint64_t now) {
  const isa::Insn& in = q.st->insn(q.st->oldest());
  pins_.present(in);
  q.handed = true;
  q.engines_done = 0;
  q.cost_end.pop_front();
  q.st->record(q.st->oldest()).start = now;
  if (in.upd_when == isa::SemWhen::read) q.st->semaphores().fire_all(in, preset_);
}

bool DmaQueues::issue(uint64_t now) {
  const uint32_t q_free = pins_.q_free.read();
  const unsigned n = static_cast<unsigned>(queues_.size());
  bool acted = false, drive = false;
  // The scan starts at rr_ and rr_ moves past a queue as it is handed the port, within the
  // scan: the queues after it are then visited from there (this order sets the cycle counts).
  for (unsigned k = 0; k < n; ++k) {
    const unsigned qi = (rr_ + k) % n;
    Queue& q = queues_[qi];
    acted |= start(q, now);
    if (!drive && can_hand(q, now) && ((q_free >> qi) & 1u)) {
      hand_over(q, now);
      drive = true;
      rr_ = (qi + 1) % n;
      acted = true;
    }
  }
  pins_.valid.write(drive);
  return acted;
}

uint64_t DmaQueues::engine_bits(unsigned qi) const {
  const unsigned lsb = qi * engines_, w = lsb / 32, sh = lsb % 32;
  uint64_t v = done_[w] >> sh;
  if (sh + engines_ > 32) v |= static_cast<uint64_t>(done_[w + 1]) << (32 - sh);
  return v & ((1ull << engines_) - 1);
}

void DmaQueues::edge(uint64_t now) {
  rtl_.dma_done(done_.data());
  for (unsigned qi = 0; qi < queues_.size(); ++qi) {
    const uint64_t bits = engine_bits(qi);
    if (!bits) continue;
    Queue& q = queues_[qi];
    if (!q.handed) throw SimError(fmt::format("DMA queue {} reported done with no transfer", qi));
    const unsigned n = static_cast<unsigned>(__builtin_popcountll(bits));
    const isa::Insn& in = q.st->insn(q.st->oldest());
    if (in.upd_when == isa::SemWhen::complete) q.st->semaphores().fire(in, n);  // one update per DMA engine
    q.engines_done += n;
    if (q.engines_done == engines_) {
      q.st->complete_oldest(now + 1, false);
      q.handed = false;
      --q.transfers;
      --transfers_;
    }
  }
}

bool DmaQueues::can_act(uint64_t now) const {
  for (const Queue& q : queues_) {
    if (may_issue(q, now) && q.st->head_can_start()) return true;
    if (can_hand(q, now)) return true;  // a transfer to hand over
  }
  return false;
}

bool DmaQueues::in_flight() const { return transfers_ > 0; }

bool DmaQueues::paying_fixed_cost() const {
  return std::any_of(queues_.begin(), queues_.end(), [](const Queue& q) { return q.waiting_cost(); });
}

uint64_t DmaQueues::next_event() const {
  uint64_t next = kNever;
  for (const Queue& q : queues_) {
    if (q.waiting_cost()) next = std::min(next, q.cost_end.front());
    // a head that could issue but for the queue's issue interval (an earlier cycle: it issues now)
    if (q.transfers < queue_limit_ && transfers_ < engine_limit_ && q.st->head_can_start())
      next = std::min(next, q.next_issue);
  }
  return next;
}

}  // namespace ncore::sim
