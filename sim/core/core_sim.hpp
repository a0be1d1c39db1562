// The cycle-level simulator: a Program run on the Verilated NeuronCore under SystemC.
//
// One Core per hardware preset holds the SystemC top level (the Verilated RTL, the clock,
// the per-engine sequencers with their 256 semaphores, the DMA queues and the HBM model).
// SystemC elaborates once per process, so every preset built into the binary is
// instantiated on first use and then reused, run after run, each run starting from reset.
#pragma once

#include <cstdint>
#include <limits>
#include <functional>
#include <string>
#include <vector>

#include "ncore/presets_gen.hpp"
#include "ncore/memory.hpp"
#include "ncore/program.hpp"

namespace ncore {
class GoldenModel;
}

namespace ncore::sim {

inline constexpr uint64_t kDefaultStallLimit = 4'000'000;

// Waveform scopes: a short name and the RTL hierarchy below ncore_top it selects ("" is the
// top level's own ports: the engines' instruction interfaces and the HBM ports).
struct WaveScope {
  const char* name;
  const char* hier;
  const char* doc;
};
inline constexpr WaveScope kWaveScopes[] = {
    {"seq", "", "the core's ports: instruction interfaces from the sequencers, HBM ports, busy"},
    {"dve", "u_dve", "vector engine"},
    {"act", "u_act", "scalar (activation) engine"},
    {"dma", "u_dma", "DMA queues and engines"},
    {"sbuf", "u_sbuf", "state buffer ports and arbitration"},
    {"pe", "u_pe", "tensor engine: loader, streamer, PE array, PSUM writer"},
    {"psum", "u_psum", "partial-sum buffer ports and arbitration"},
};

struct RunOptions {
  // Compare, after every instruction completes on the RTL, its destination with the golden
  // model's, and stop at the first difference.
  bool check = false;
  // Skip cycles in which every engine waits on a future event (the count stays exact).
  bool skip_idle = true;
  // Give up after this many cycles without a completed instruction (0: kDefaultStallLimit).
  // The longest single instruction of a valid program (a DMA of all of SBUF, a vector op
  // over 64K elements) completes in well under a million cycles.
  uint64_t stall_limit = 0;
  // Called about every `progress_seconds` of wall time during long runs (0: never).
  double progress_seconds = 0;
  std::function<void(uint64_t cycle, uint64_t done, uint64_t total)> progress;
  // Waveforms: an FST file of the RTL's signals, limited to the hierarchy scopes given (empty:
  // all; see kWaveScopes) and to cycles [waves_start, waves_end).
  std::string waves;
  std::vector<std::string> waves_scopes;
  uint64_t waves_start = 0, waves_end = std::numeric_limits<uint64_t>::max();
  // Check mode: called on the golden model once it holds the initial HBM image, so that a
  // test can make it disagree with the RTL and see the difference reported.
  std::function<void(GoldenModel&)> golden_setup;
};

// Waveforms for a run: an FST file of the RTL's signals, limited to the scopes given (names of
// kWaveScopes) and to a window of cycles "START:END" (either may be empty; "" for all). Throws
// InputError for an unknown scope, a malformed window, or scopes or a window without a file;
// `names` are how messages name the three (the command line's flags, the environment).
struct WaveNames {
  std::string file, scopes, window;
};
void set_waves(RunOptions& opt, const std::string& file, const std::vector<std::string>& scopes,
               const std::string& window, const WaveNames& names);

// What one instruction did on the RTL, for the profile and the timeline.
struct InsnRecord {
  uint32_t stream = 0;
  uint32_t index = 0;        // position in its stream
  uint64_t ready = 0;        // cycle the sequencer reached it
  uint64_t issue = 0;        // cycle its wait was satisfied and it went to the engine/queue
  uint64_t start = 0;        // cycle the engine started it (DMA: after the fixed cost)
  uint64_t end = 0;          // cycle it completed
};

struct StreamStats {
  std::string name;
  uint64_t instructions = 0;
  uint64_t active_cycles = 0;     // cycles with an instruction in the engine
  uint64_t sem_wait_cycles = 0;   // cycles with the head instruction waiting on a semaphore
};

// Where a run's cycles went, each cycle counted once, by the first of these that holds in it
// (the fields add up to RunResult::cycles):
struct TimeBreakdown {
  uint64_t start_up = 0;        // the kernel's start-up, before any instruction (preset.kernel_start_ns)
  uint64_t compute = 0;         // an engine (vector, scalar, tensor) has an instruction in flight
  uint64_t dma_descriptors = 0; // else a DMA engine generates a descriptor (preset.dma_desc_cycles per row)
  uint64_t dma_data = 0;        // else a DMA transfer moves data (DMA and HBM bandwidth, HBM latency)
  uint64_t dma_fixed_cost = 0;  // else a DMA queue pays a transfer's fixed cost (preset.dma_fixed_cost_ns)
  uint64_t other = 0;           // else: semaphore hand-over between the sequencers
};

struct RunResult {
  // Master-clock cycles from the kernel's start (the end of reset) to the last completion: the
  // start-up (start_cycles), then the instructions. NeuronCore time from kernel start to end, as
  // neuron-profile's total_time and nki.benchmark's latency count it.
  uint64_t cycles = 0;
  uint64_t start_cycles = 0;      // the kernel start-up: cycles before the first instruction may issue
  TimeBreakdown breakdown;
  double time_us = 0;             // cycles at the preset's clock
  uint64_t evaluated_cycles = 0;  // cycles the RTL was clocked
  uint64_t skipped_cycles = 0;    // idle cycles skipped
  uint64_t instructions = 0;
  uint64_t dma_transfers = 0;
  uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  // SBUF and PSUM bytes of granted accesses, from the RTL's counters (ncore_sbuf.sv and
  // ncore_psum.sv say how each port counts: engine reads 4 bytes per lane, DMA reads whole lines).
  uint64_t sbuf_read_bytes = 0, sbuf_write_bytes = 0;
  uint64_t psum_read_bytes = 0, psum_write_bytes = 0;
  // The tensor engine's counters (ncore_pe.sv): multiply-accumulates given to the PE array (rows
  // x stationary columns of every moving column) and cycles with a column in the array.
  uint64_t pe_macs = 0, pe_array_busy_cycles = 0;
  // The DMA's counter (ncore_dma.sv): cycles in which some DMA engine generated a descriptor.
  uint64_t dma_desc_cycles = 0;
  uint64_t checked_instructions = 0;  // instructions compared with the golden model
  double wall_seconds = 0;
  std::string pe_model;  // the PE array of the model that ran: "rtl" or "fast" (Core::pe_model)
  std::vector<StreamStats> streams;
  std::vector<InsnRecord> records;
};

class Core {
 public:
  virtual ~Core() = default;
  // The Core of a preset whose Verilated model runs on `threads` threads (throws SimError if
  // the preset has no such model). Each Verilated model is a shared module, loaded here and
  // built on its first use if it is not built yet (core_sim.cpp). SystemC elaborates once per
  // process: the first call (or prepare) builds the core of the preset asked for and of every
  // preset whose model is built, with the `threads` model where the preset has one and the
  // single-thread model otherwise; a later call for another thread count of a preset so built,
  // or for a preset whose model was not built then, throws SimError.
  static Core& get(const Preset& preset, unsigned threads = 1);
  // Elaborates this process's cores now, with the models of `presets` among them (built if
  // need be): for a process that runs several presets.
  static void prepare(const std::vector<std::string>& presets, unsigned threads = 1);
  static std::vector<std::string> available_presets();
  // The PE array of this process's models: "rtl" (rtl/ncore_pe_array.sv, the default) or "fast"
  // (the simulation-only rtl/sim/ncore_pe_array.sv: the same cycles and bits, its sums
  // computed in C++; the `_fastpe` models). The choice starts as $NCORE_PE_MODEL (else "rtl");
  // set_pe_model changes it before the first core is made (InputError for another name,
  // SimError once cores exist with the other one: SystemC elaborates once per process).
  static void set_pe_model(const std::string& pe);
  static const std::string& pe_model();
  // Thread counts the preset's models run on (1, and 2 for trn2).
  static std::vector<unsigned> thread_counts(const std::string& preset);
  // The thread count a run of `prog` is fastest on here: 2 when the Program uses the tensor
  // engine (its PE array is what the second thread evaluates), the preset has a two-thread
  // model and the machine has two cores or more; 1 otherwise.
  static unsigned auto_threads(const Preset& preset, const Program& prog);

  virtual const Preset& preset() const = 0;
  virtual unsigned threads() const = 0;  // threads the Verilated model runs on
  // Runs `prog` from reset. `hbm` holds the HBM contents (prog.hbm_bytes bytes, inputs
  // loaded); the run writes the Program's constants into it and leaves the results there. Throws SimError on invalid programs, deadlocks,
  // stalls and, in check mode, the first RTL/golden difference.
  virtual RunResult run(const Program& prog, ByteSpan hbm, const RunOptions& opt) = 0;
  RunResult run(const Program& prog, std::vector<uint8_t>& hbm, const RunOptions& opt) {
    return run(prog, ByteSpan{hbm.data(), hbm.size()}, opt);
  }
  // SBUF word `word` of partition `p` as the RTL holds it now (test benches).
  virtual uint32_t sbuf_word(unsigned p, uint64_t word) const = 0;
  // PSUM word `word` (32-bit) of partition `p` as the RTL holds it now.
  virtual uint32_t psum_word(unsigned p, uint64_t word) const = 0;
};

}  // namespace ncore::sim
