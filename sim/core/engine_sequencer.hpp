// The sequencer of an engine that runs one instruction at a time (the vector and the scalar
// engine): it presents the stream's head when the engine is ready, nothing of its stream is in
// flight and the head's wait holds; the engine's read-start pulse fires a read-time update and
// its done pulse completes the instruction.
#pragma once

#include "core/core_pins.hpp"
#include "core/insn_stream.hpp"
#include "core/sequencer.hpp"

namespace ncore::sim {

class EngineSequencer final : public Sequencer {
 public:
  // `what` names the engine in errors ("vector engine").
  EngineSequencer(InsnStream& stream, EnginePins& pins, const char* what) : st_(stream), pins_(pins), what_(what) {}

  void reset() override { pins_.valid.write(false); }
  bool issue(uint64_t now) override;
  void edge(uint64_t now) override;
  bool can_act(uint64_t) const override {
    return st_.idle() && st_.head_can_start() && st_.head().opcode != isa::Opcode::sem_wait;
  }
  bool in_flight() const override { return !st_.idle(); }

 private:
  InsnStream& st_;
  EnginePins& pins_;
  const char* what_;
};

}  // namespace ncore::sim
