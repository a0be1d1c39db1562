// Constrained-random Programs for the lockstep regression: legal Programs, drawn from a seed, that
// use every engine and every instruction of the ISA (firmware/isa/ncore_isa.json) within the rules
// of ncore::validate_insn and validate_program.
//
//   dma_copy         HBM->SBUF, SBUF->HBM, SBUF->SBUF, HBM->HBM; 1-4-D access patterns on both
//                    sides, shaped independently (strides unit, reversed, random, negative;
//                    broadcast rows and zero strides on the source), partial partition ranges,
//                    partition shifts, HBM row strides, random offsets; every dtype pair (casts);
//                    a random queue (some programs use one or two queues, others all)
//   engines          tensor_tensor and tensor_scalar (every ALU op of the ISA; immediate or
//                    per-partition operands, rev0/rev1, op1 bypass), tensor_copy, memset,
//                    tensor_reduce (add, multiply, max, min over 1-4 axes), activation (every
//                    function of the ISA, immediate or per-partition scale and bias, the
//                    optional add-reduce dst2): every dtype on every operand, SBUF or PSUM
//                    operands, in place or apart
//   tensor engine    load_stationary [K, M] and multiply_moving [K, N] with random K, M <= the
//                    partitions, N <= one PSUM bank, random partition offsets; PSUM overwrite and
//                    accumulation groups (acc) of 1-6 multiplies
//   semaphores       the data dependencies become waits (ncore::Scheduler: a Program's streams
//                    never reorder two accesses when one of them writes), so the result of every
//                    instruction is defined whatever the timing. On top of them, random traffic on
//                    semaphores of their own: sem_waits on every stream (pool and sp included)
//                    applying inc, dec, add, sub and set, waits with every condition, updates
//                    fired at read or at completion by engine and DMA instructions, the
//                    completion counts written with equivalent ops (add 1, sub 0xFFFFFFFF, gt
//                    for ge). Every wait points back in generation order and holds on the
//                    value its semaphore ends with, so a Program cannot deadlock.
//
// The HBM contents are the Program's one constant tensor (random fp32, bf16 and fp16 patterns with
// NaN, infinities, subnormals and rounding ties), so a Program image is self-contained.
//
// The same preset, seed and options give the same Program, bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "ncore/scheduler.hpp"

namespace ncore::regress {

// Relative weights of the instruction kinds (0 leaves a kind out).
struct Weights {
  unsigned dma_copy = 20;
  unsigned tensor_tensor = 10;
  unsigned tensor_scalar = 10;
  unsigned tensor_copy = 7;
  unsigned memset = 4;
  unsigned tensor_reduce = 8;
  unsigned activation = 10;
  unsigned load_stationary = 5;
  unsigned multiply_moving = 12;
  unsigned sync = 6;  // a semaphore episode: updates on sem_waits, or waits on an earlier one
};

struct GenOptions {
  // Steps drawn (data instructions and the semaphore traffic's sem_waits; the scheduler's
  // sem_waits come on top), chosen uniformly in [min_insns, max_insns].
  unsigned min_insns = 20, max_insns = 120;
  // Elements per partition of an operand at most (the tensor engine's N: one PSUM bank).
  unsigned max_free = 1024;
  Weights weights;
};

// A drawn Program before its semaphores are assigned: the steps in generation order. assemble()
// turns it into a Program; the shrinker removes steps and simplifies operands and assembles again,
// so that every candidate keeps the scheduler's waits (no data race) and cannot deadlock.
//
// The semaphore traffic comes in episodes: each has a semaphore of its own, updated by `update`
// steps (one stream applying any ops in program order, or several streams applying add-like ops:
// its final value is fixed) and waited for by `wait` steps and by updates that chain on it. A wait
// is a condition relative to the final value (SemWait): it holds on the value the semaphore ends
// with, whichever updates are left.
struct SemWait {
  bool has = false;
  unsigned episode = 0;
  isa::SemCond cond = isa::SemCond::eq;
  uint32_t r = 0;  // distance from the final value (ne, ge, gt, le, lt)
};

struct Step {
  enum class Kind : uint8_t { data, update, wait };
  Kind kind = Kind::data;
  uint32_t origin = 0;   // its position among the drawn steps (the listing's "line")
  unsigned stream = 0;   // the stream it goes on
  isa::Insn insn{};      // data: the instruction (assemble sets its semaphore fields)
  unsigned episode = 0;  // update: the episode it updates
  isa::SemOp op = isa::SemOp::none;
  uint32_t val = 0;
  SemWait wait;          // update: an optional wait (chaining); wait: the wait
  bool on_next = false;  // wait: on the stream's next data instruction rather than on a sem_wait
};

struct Draft {
  std::string preset;
  uint64_t seed = 0;
  uint64_t hbm_bytes = 0;
  std::vector<uint8_t> hbm;  // HBM contents (the Program's constant tensor)
  std::vector<Step> steps;
  uint32_t drawn = 0;        // steps drawn (origins are below it)
  unsigned episodes = 0;     // episode ids are below it
};

Draft draw(const Preset& preset, uint64_t seed, const GenOptions& opt = {});
// The Program of a draft: the scheduler's waits for the data instructions, the episodes'
// semaphores, the rewrites of the completion counts' updates (seeded by draft.seed). Throws
// SimError when an instruction breaks a rule (a shrinker's candidate may).
Program assemble(const Preset& preset, const Draft& draft);

// assemble(draw(...)). Every instruction passes validate_program (checked: a failure is a bug in
// the generator and throws std::logic_error naming the seed).
Program generate(const Preset& preset, uint64_t seed, const GenOptions& opt = {});

// The reads and writes of an instruction, as the scheduler tracks them.
std::vector<Access> accesses(const isa::Insn& insn);

// What a Program exercises, as counts by bin name:
//   opcode.<op>                  instructions (sem_wait: the scheduler's and the random traffic's)
//   dtype.<op>.<dtype>           destination dtypes of the data instructions (load_stationary: src0)
//   dma.<src>-><dst>             DMA directions (hbm, sbuf)
//   dma.cast.<src>-><dst>        DMA dtype pairs
//   ap.dims.<n>                  operands whose access pattern uses n free dimensions (size > 1), 1-4
//   ap.negative_stride, ap.zero_stride, ap.partial_partitions, hbm.row_overlap
//   psum.<op>                    lane-engine instructions with a PSUM operand
//   reduce.axes.<n>, reduce.<alu op>, tensor_tensor.<alu op>, tensor_scalar.op0.<alu op>, tensor_scalar.op1.<alu op>
//   tensor_scalar.s0_vec, tensor_scalar.s1_vec, tensor_scalar.rev0, tensor_scalar.rev1,
//   activation.<func>, activation.s0_vec, activation.s1_vec, activation.dst2
//   pe.overwrite, pe.accumulate  multiplies
//   sem.op.<op>, sem.cond.<cond>, sem.when.read, sem_wait.<stream kind>  (pe, act, pool, dve, sp, dma)
//   dma.queue.<q>
std::map<std::string, uint64_t> census(const Program& prog);
// Every bin census() can count for `preset` (the ones a long enough regression must hit).
std::vector<std::string> census_bins(const Preset& preset);

// The semaphores the random traffic uses: [kFirstSyncSemaphore, kNumSemaphores). The streams'
// completion counts use 0 .. streams-1.
inline constexpr unsigned kFirstSyncSemaphore = 32;

}  // namespace ncore::regress
