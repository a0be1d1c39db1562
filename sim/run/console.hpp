// What a long job shows on a terminal, and how it stops: the progress lines of a trace and of a
// run (on stderr, when it is a terminal, rewritten in place), and Ctrl-C as a request to stop.
// The command line and the Python front end use the same ones.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/core_sim.hpp"
#include "nki/tracer.hpp"

namespace ncore::run {

// While alive, Ctrl-C (SIGINT) requests a stop (ncore::interrupt) instead of ending the process:
// the tracer, the golden model and the simulator honour it within a fraction of a second, so
// files are closed and nothing half-written is left. A second Ctrl-C, while the first is still
// pending, ends the process at once. The previous handler comes back when the guard goes.
class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction old_ {};
};

// Progress lines on stderr, for a job that outlasts `after` seconds: one line rewritten in place
// (a carriage return) while stderr is a terminal, nothing when it is not or when `enabled` is false.
// `who` starts the line ("[ncore-sim]", "[ncore]").
class Progress {
 public:
  explicit Progress(std::string who, bool enabled = true);
  ~Progress();  // ends the line, if one was shown
  bool enabled() const { return enabled_; }
  // A trace: the instructions traced so far.
  void trace(uint64_t instructions, double seconds);
  // A run: the cycle reached, the instructions done of all, and the time left estimated from them.
  void run(uint64_t cycle, double mhz, uint64_t done, uint64_t total, double seconds);
  void done();  // ends the line, if one was shown

  // Hooks for a trace (TraceOptions::progress) and a run (RunOptions::progress), bound to this.
  void attach(nki::TraceOptions& o);
  void attach(sim::RunOptions& o, double mhz);

 private:
  void show(const std::string& line);
  std::string who_;
  bool enabled_;
  bool shown_ = false;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point run_start_{};
};

// Whether stderr is a terminal (progress lines are for people, not for logs).
bool stderr_is_terminal();

}  // namespace ncore::run
