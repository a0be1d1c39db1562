// Shrinking a failing random Program to a small one that fails the same way (delta debugging):
// first over the draft's steps (ddmin: remove chunks, halving the chunk size while nothing can go),
// then over each remaining data instruction's operands (one partition, partition 0, one element,
// one dimension, row-major strides, fp32, no per-partition operands, no dst2, overwrite instead of
// accumulate, op1 bypass, simple immediates). Every candidate is a draft assembled again, so it
// keeps the scheduler's waits and the episodes' rules: no data race and no deadlock of its own.
#pragma once

#include <cstdint>
#include <functional>

#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "program_gen.hpp"

namespace ncore::regress {

struct ShrinkOptions {
  unsigned max_tries = 3000;  // candidates run at most
  double max_seconds = 600;   // wall time at most
};

struct ShrinkResult {
  Draft draft;
  Program program;
  unsigned tries = 0;            // candidates run
  unsigned accepted = 0;         // candidates that still failed (kept)
  uint64_t instructions_before = 0, instructions_after = 0;
  bool complete = true;          // false: stopped by a limit
};

// `fails(p)`: whether Program p fails the way the original did. `draft` must fail so.
ShrinkResult shrink(const Preset& preset, const Draft& draft, const std::function<bool(const Program&)>& fails,
                    const ShrinkOptions& opt = {});

// The window of cycles "START:END" around the cycle a failure's message names (a check-mode
// difference "... completed at cycle N", a hang "(at cycle N)"): the `before` cycles up to it and
// `after` past it. "" when the message names no cycle (a deadlock): the whole run.
std::string failure_window(const std::string& message, uint64_t before = 2000, uint64_t after = 200);

}  // namespace ncore::regress
