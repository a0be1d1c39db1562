// A request to stop, made by Ctrl-C (see run::SigintGuard) and honoured by every long loop of the
// tool chain: the tracer between instructions, the golden model between instructions, the
// simulator between cycles. Each throws Interrupted at its next check, so a run stops within a
// fraction of a second and unwinds normally: waveform files are closed, nothing half-written is
// left, and a Python caller gets KeyboardInterrupt.
#pragma once

#include <atomic>
#include <stdexcept>

namespace ncore {

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted (Ctrl-C)") {}
};

namespace interrupt {

// The one flag of the process. It lives in a shared library of its own (libncore_interrupt.so):
// the static libraries that poll it are linked into several shared objects (the simulation
// library, the Python module, the programs), and a flag per copy would miss the request.
std::atomic<bool>& flag();
// Async-signal-safe: a signal handler may call it.
inline void request() { flag().store(true, std::memory_order_relaxed); }
inline bool requested() { return flag().load(std::memory_order_relaxed); }
inline void clear() { flag().store(false, std::memory_order_relaxed); }
// Throws Interrupted (clearing the request) when a stop was requested.
inline void check() {
  if (requested()) {
    clear();
    throw Interrupted();
  }
}

}  // namespace interrupt
}  // namespace ncore
