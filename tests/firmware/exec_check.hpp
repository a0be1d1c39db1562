// A test-side model of how a Program runs, independent of the scheduler: every stream starts
// its instructions in order once their semaphore wait holds, may have several in flight,
// completes them in order and applies each update with the ISA's meaning. The order of starts
// and completions across streams is drawn at random, so repeated runs explore different
// interleavings.
//
// What a wait and an update mean (and that a dma_copy fires its update once per DMA engine) is
// the ISA's, shared with the hardware models through ncore/semaphores.hpp: the check is of the
// waits the scheduler chose, under the semantics the hardware runs them with. The stream model
// is this file's own on purpose: it allows more than the sequencers do (any number in flight on
// every stream, any interleaving, no timing), so a Program that is hazard-free here is so under
// every schedule the simulator or a later sequencer may produce.
//
// check_hazards then takes the order in which the kernel issued its instructions and demands
// that every pair touching a common byte, one of them writing, ran in that order: the earlier
// one completed before the later one started. Two instructions of the tensor engine's stream
// are the exception: that engine applies its own PSUM writes in program order (scheduler.hpp),
// so they need only start in order, which its in-order stream gives (ordered_pair). Footprints are computed element by element from
// the access patterns, so they are exact.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "nki/tracer.hpp"

namespace fwtest {

struct Execution {
  bool completed = false;
  std::string error;                          // why it stopped (deadlock: the blocked stream heads)
  std::vector<std::vector<uint64_t>> start;   // [stream][position] step at which it started
  std::vector<std::vector<uint64_t>> finish;  // [stream][position] step at which it completed
};

Execution execute(const ncore::Program& p, const ncore::Preset& preset, uint64_t seed);

// Whether two conflicting instructions, a before b, ran in order: a completed before b started,
// or both are on the tensor engine's stream (ordered by the engine) and a started first.
bool ordered_pair(const Execution& e, unsigned sa, uint32_t pa, unsigned sb, uint32_t pb);

// Violations (empty if none): conflicting pairs not ordered by the execution.
std::vector<std::string> check_hazards(const ncore::Program& p, const Execution& e,
                                       const std::vector<std::pair<unsigned, uint32_t>>& order);

// The message of the KernelError that tracing `body` for trn2 throws, or "<no error>".
std::string trace_error(const std::function<void(nki::Tracer&)>& body);

// A tensor of an error case: a new tile nl::ndarray(shape, dtype, buffer, name), or for the buffer
// nl::hbm the kernel input `name` (Tracer::input).
struct Tile {
  nki::Shape shape;
  nki::Dtype dtype;
  nki::Buffer buffer;
  const char* name;
};
using Tiles = std::vector<nki::Tensor>;

// trace_error of `call` on the tensors of `tiles`, made in their order.
std::string call_error(const std::vector<Tile>& tiles, const std::function<void(const Tiles&)>& call);

// trace_error of making the tensors of `tiles` in order, at loc (what an allocation error names).
std::string alloc_error(const std::vector<Tile>& tiles, nki::Loc loc = nki::Loc::here());

// Counts of instructions by opcode over all streams.
uint64_t count_opcode(const ncore::Program& p, ncore::isa::Opcode op);

}  // namespace fwtest
