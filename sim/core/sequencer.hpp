// What the core asks of each sequencer. Every clocked cycle `now` the core calls, sequencer by
// sequencer in a fixed order, issue(now) (drive the inputs for the cycle: the next instruction
// whose wait holds), clocks the RTL, then edge(now) (read the pulses the edge produced: read
// starts and dones, which fire semaphore updates and complete instructions). Before skipping
// idle cycles it asks whether any sequencer can_act, whether work is in flight (else the
// Program is deadlocked) and the earliest event a sequencer waits for.
#pragma once

#include <cstdint>
#include <limits>

namespace ncore::sim {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

class Sequencer {
 public:
  virtual ~Sequencer() = default;
  // A new run (the streams were reset): nothing in flight, the inputs it drives deasserted.
  virtual void reset() = 0;
  // Drives its inputs for cycle `now`; whether it issued, handed over or retired anything.
  virtual bool issue(uint64_t now) = 0;
  // Reads its outputs after the clock edge of cycle `now` (what completes, completes at now + 1).
  virtual void edge(uint64_t now) = 0;
  // Whether it would act at cycle `now` given what the RTL shows now.
  virtual bool can_act(uint64_t now) const = 0;
  // Whether it has work under way that finishes without another sequencer acting.
  virtual bool in_flight() const = 0;
  // The earliest cycle at which something it waits for happens by itself (a timer), or kNever.
  virtual uint64_t next_event() const { return kNever; }
};

}  // namespace ncore::sim
