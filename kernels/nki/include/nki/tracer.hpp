// Tracing a kernel into a Program.
//
//   ncore::Program p = nki::trace("vector_add_stream", *ncore::find_preset("trn2"), [&](nki::Tracer& t) {
//     auto a = t.input("a_vec", {n}, nl::float32);
//     auto b = t.input("b_vec", {n}, nl::float32);
//     t.output(vector_add_stream(a, b, 200));
//   });
//
// While the body runs, every nl/nisa call records into this trace; outside one they throw.
// Inputs are placed in HBM in the order declared, then the tensors the kernel creates, each
// at a 64-byte aligned offset.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "nki/loc.hpp"
#include "nki/tensor.hpp"

namespace nki {

namespace detail {
class TracerImpl;
}

struct TraceStats {
  uint64_t instructions = 0;   // traced, sem_waits not counted
  uint64_t sem_waits = 0;
  uint64_t waits = 0;          // semaphore waits, on instructions and sem_waits
  uint64_t conflicts = 0;      // conflicting access pairs the scheduler found
  uint64_t implied = 0;        // of which already implied by earlier waits
  uint64_t peak_records = 0;   // most access records alive at once
  uint64_t stationary_reuses = 0;  // load_stationary instructions skipped (TraceOptions::reuse_stationary)
  uint64_t psum_zeros_elided = 0;  // nl.zeros memsets of PSUM dropped (TraceOptions::elide_psum_zeros)
  // With TraceOptions::record_order: (stream, position) of every traced instruction, in
  // the order the kernel issued them.
  std::vector<std::pair<unsigned, uint32_t>> order;
  // Per on-chip tile, in the order they were made: the count of operand uses at its last use (0:
  // never used). TraceOptions::last_uses of a second trace of the same kernel.
  std::vector<uint64_t> last_uses;
};

struct TraceOptions {
  unsigned dma_queues_used = 4;  // dma_copy goes round-robin to queues 0 .. dma_queues_used-1
  // Skip a matmul's load_stationary when the array already holds the same, unchanged operand.
  bool reuse_stationary = true;
  // nl.zeros in PSUM as the compiler lowers it: the memset waits until the tile is first
  // touched, and is dropped when that is a matmul overwriting the whole tile (the accumulation
  // group's first multiply starts from zero, so the bits are the same); anything else touching
  // the tile first gets the memset just before it.
  bool elide_psum_zeros = true;
  // Today's NKI: a tile lives while the kernel refers to it. A tile allocated in a loop whose
  // buffer comes round again, or whose loop ends, while it is still referred to keeps its bytes
  // (the new tile gets others; the loop's buffers are given back when their last tile goes)
  // instead of ending its life there, as the older NKI's loop scoping does.
  bool keep_referenced_tiles = false;
  // With keep_referenced_tiles: the tiles' last uses, measured by a first trace of the same kernel
  // (TraceStats::last_uses). A tile then lives until its last use, as a compiler's liveness
  // analysis has it, whatever Python still refers to (a loop's variables outlive it): the loop's
  // buffers rotate past a tile not used again, and are held past the loop for one that is.
  std::vector<uint64_t> last_uses;
  // A trace that only measures the tiles' last uses (TraceStats::last_uses) for a second one: it
  // places them as the older NKI does and lets a tile be used after its buffer went to another
  // (the sequence of uses does not depend on where the tiles are; its Program is not run).
  bool measure_last_uses = false;
  bool record_order = false;
  TraceStats* stats = nullptr;   // filled when the trace succeeds
  // Long traces: every few thousand instructions the tracer calls poll (which may throw to stop
  // the trace: Python's Ctrl-C) and checks ncore::interrupt (the command line's), and, once
  // progress_seconds have passed, reports the instructions traced so far to progress (and again
  // every progress_seconds).
  std::function<void()> poll;
  std::function<void(uint64_t instructions, double seconds)> progress;
  double progress_seconds = 2.0;
};

class Tracer {
 public:
  explicit Tracer(detail::TracerImpl& impl) : impl_(impl) {}
  // A kernel argument in HBM.
  Tensor input(const std::string& name, const Shape& shape, Dtype dtype, Loc loc = Loc::here());
  // Marks the kernel's result (a whole HBM tensor, possibly reshaped) as an output.
  void output(const Tensor& t, Loc loc = Loc::here());
  const ncore::Preset& preset() const;

 private:
  detail::TracerImpl& impl_;
};

// How many times the trace being recorded has made a decision that depends on when tiles die:
// a tile's bytes given back to the allocator when its last view was gone, a site allocating
// again within one loop iteration into the ring of an earlier occurrence whose tile nothing
// refers to any more, or a loop's tile placed outside the rings.
// The Python front end replays a loop body traced once only when its traced iteration made no
// such decision (replay keeps the tensors of an iteration alive differently from Python).
uint64_t lifetime_events();
// How many instructions, tensors and loops the trace being recorded has made so far (the front
// end checks that its recording of a loop body saw every one of them).
uint64_t trace_events();

ncore::Program trace(const std::string& kernel_name, const ncore::Preset& preset,
                     const std::function<void(Tracer&)>& body, const TraceOptions& options = {});

}  // namespace nki
