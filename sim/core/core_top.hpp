// The SystemC top level of one preset, the same code for every Verilated model: the clock, the
// sequencers with their semaphores, the HBM glue, statistics, progress, check mode and waveforms.
// The model itself is reached through RtlModel and the signals in CorePins, which
// verilated_rtl.hpp binds to one model's ports.
//
// A run starts with the kernel start-up (preset.kernel_start_ns, a whole number of the clock
// enables' period): the NeuronCore's time from the kernel's start to its first instruction, in
// which no sequencer issues; it is skipped like idle cycles (clocked idle with skip_idle off),
// and every later cycle count, the instructions' records included, counts from the kernel's
// start.
//
// One SC_THREAD runs the clock. Every cycle it
//   1. drives the inputs for the cycle from what the RTL showed after the last edge: each
//      sequencer issues (the next instruction whose semaphore wait holds, DMA transfers whose
//      fixed cost has elapsed), then the HBM glue (acceptances, credits, read data, acks);
//   2. raises the clock (Verilator evaluates the edge with those inputs);
//   3. reads the outputs: read-start and done pulses fire semaphore updates and complete
//      instructions.
// When the RTL reports no engine busy and no sequencer or HBM transfer can act before a known
// future cycle, the thread waits until then without clocking (a whole number of the clock
// enables' common period, so their phase is unchanged) and counts the skipped cycles.
#pragma once

#include <systemc.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/core_pins.hpp"
#include "core/core_sim.hpp"
#include "core/dma_queues.hpp"
#include "core/engine_sequencer.hpp"
#include "core/golden_check.hpp"
#include "core/hbm_port.hpp"
#include "core/insn_stream.hpp"
#include "core/rtl_model.hpp"
#include "core/sem_wait_sequencer.hpp"
#include "core/pe_sequencer.hpp"
#include "ncore/semaphores.hpp"

class VerilatedFstC;

namespace ncore::sim {

class CoreTop : public sc_module, public Core, private InsnSink {
 public:
  // Binds a Verilated model to the core's signals (called once, while the module is built).
  using RtlBinder = std::function<std::unique_ptr<RtlModel>(CorePins&, const Preset&)>;

  CoreTop(sc_module_name name, const Preset& preset, unsigned threads, const RtlBinder& bind);
  SC_HAS_PROCESS(CoreTop);
  ~CoreTop() override;

  const Preset& preset() const override { return preset_; }
  unsigned threads() const override { return threads_; }
  uint32_t sbuf_word(unsigned p, uint64_t word) const override { return rtl_->sbuf_word(p, word); }
  uint32_t psum_word(unsigned p, uint64_t word) const override { return rtl_->psum_word(p, word); }
  using Core::run;
  RunResult run(const Program& prog, ByteSpan hbm, const RunOptions& opt) override;

 private:
  // InsnSink: every instruction that leaves a stream.
  void retired(const InsnStream& st, uint32_t index) override;
  void completed(const InsnStream& st, uint32_t index, uint64_t end) override;

  void check_program(const Program& prog, ByteSpan hbm) const;
  void thread();

  // One run, and its steps.
  void run_job();
  void start_run();
  void reset_rtl();
  uint64_t start_up();
  bool drive_inputs(uint64_t now);
  void clock(uint64_t now);
  void tick(uint64_t now);
  void check_rtl(uint64_t now);
  void classify(uint64_t cycles, bool evaluated);
  void read_outputs(uint64_t now);
  void count_sem_waits();
  bool finished() const { return done_count_ == total_; }
  void watch(uint64_t now);
  bool quiet(uint64_t now) const;
  uint64_t skip_idle(uint64_t now);
  void finish_run(uint64_t now);

  void clock_edge();
  uint64_t wave_ps(uint64_t h) const { return h * 500000ull / preset_.clock_mhz; }  // half-cycle h in ps
  void open_waves();
  void close_waves();
  std::string deadlock_report() const;

  Preset preset_;
  unsigned threads_;
  uint64_t period_ = 1;  // the clock enables' common period
  const sc_time half_{1, SC_NS};

  CorePins pins_;
  std::unique_ptr<RtlModel> rtl_;
  HbmPort hbm_;
  SemaphoreFile sems_;
  std::vector<InsnStream> streams_;  // the engines' streams, then the DMA queues'
  SemWaitSequencer sem_waits_;
  EngineSequencer dve_, act_;
  PeSequencer pe_;
  DmaQueues dma_;
  std::vector<Sequencer*> sequencers_;  // in the order they issue each cycle

  std::unique_ptr<GoldenCheck> check_;
  std::unique_ptr<VerilatedFstC> fst_;
  uint64_t wave_cycle_ = 0;
  bool wave_now_ = false;

  // The run in progress.
  sc_event job_ev_;
  bool job_pending_ = false;
  const Program* prog_ = nullptr;
  ByteSpan hbm_data_;
  bool interrupted_ = false;  // the last run stopped on Ctrl-C (ncore::interrupt)
  const RunOptions* opt_ = nullptr;
  RunResult result_;
  std::string error_;
  size_t done_count_ = 0, total_ = 0;
  uint64_t desc_seen_ = 0;  // the DMA's descriptor counter after the last edge
  uint64_t last_progress_cycle_ = 0, stall_limit_ = 0;
  decltype(std::chrono::steady_clock::now() + std::chrono::duration<double>()) next_report_;
};

}  // namespace ncore::sim
