// The scheduler: turns the data dependencies of a traced instruction sequence into semaphore
// waits, so that the per-engine streams of a Program run in parallel but never reorder two
// accesses to the same memory when one of them writes.
//
// Conventions (program.hpp): stream i owns semaphore i; each instruction on stream i raises
// S[i] when it completes, by 1 on engine streams and by one per DMA engine on DMA queues
// (its "weight" w). Streams complete in order, so "instruction k (0-based, counting only
// instructions that raise the semaphore) of stream i has completed" is S[i] >= (k+1)*w.
//
// For every new instruction the scheduler finds the earlier accesses it conflicts with
// (read-after-write, write-after-read, write-after-write on overlapping regions), keeps per
// stream only the latest such producer, and drops those already implied: a vector clock per
// stream records which instructions of every stream are known complete when its next
// instruction starts (everything it waited on, and everything those waited on). An
// instruction carries one wait; more producers get one sem_wait each, inserted before it on
// the same stream. Waits go only to earlier instructions, so the Program cannot deadlock.
//
// The scheduler knows accesses, not opcodes: the tracer lists each instruction's reads and
// writes. For the tensor engine these are: load_stationary reads its SBUF operand;
// multiply_moving reads the moving operand in SBUF and writes its PSUM destination, which it
// also reads when it accumulates (acc). The array's stationary state needs no record: the
// tensor engine's stream is in order, and the simulator retires its instructions in program
// order even when a load_stationary finishes before the multiply ahead of it, so the
// S[pe] >= k+1 convention holds for both instructions. The tensor engine also applies its own
// stream's PSUM writes in program order (every multiply's column j goes down the same pipeline,
// and a multiply that could overtake the one before it on a PSUM lane is held back), so a
// multiply that accumulates into, or overwrites, the PSUM region of an earlier multiply needs no
// wait for it: the stream is "ordered", and an accumulation group streams back to back.
//
// Access records are pruned as they become redundant (a record covered by a later write, a
// read covered by a later read of the same stream) and indexed by 512-byte buckets, so the
// cost of one instruction depends on the accesses near it, not on the Program's length.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ncore/ap.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace ncore {

// The memory one operand may touch.
struct Region {
  isa::Buffer mem = isa::Buffer::sbuf;
  Box box;  // SBUF/PSUM: partitions x bytes within them; HBM: partition 0..1 and absolute bytes
  // HBM row structure, when known (rows > 0): `rows` runs of `seg` bytes, `row_step` bytes
  // apart, the first starting at box.lo. It lets two strided HBM accesses that interleave
  // without touching (the columns of one matrix) be told apart.
  uint32_t rows = 0;
  int64_t row_step = 0, seg = 0;
  bool dense = false;  // every byte of the box is touched
};

Region region_of(const isa::Ap& ap);
// A per-partition scalar operand read by `num_part` lanes.
Region region_of(const isa::Sref& s, uint32_t num_part);
// True when some byte may be touched by both (exact for HBM rows with a common step,
// otherwise by bounding boxes).
bool regions_overlap(const Region& a, const Region& b);
// True when `outer` surely touches every byte `inner` may touch.
bool region_covers(const Region& outer, const Region& inner);

struct Access {
  Region region;
  bool write = false;
};

class Scheduler {
 public:
  // weights[i]: how much one instruction of stream i raises semaphore i. ordered[i] (default
  // false): stream i's engine applies its accesses in program order, so conflicts between two of
  // its own instructions need no wait.
  explicit Scheduler(std::vector<uint32_t> weights, std::vector<bool> ordered = {});
  // The stream layout of a Program for `preset` (make_streams): engines weigh 1, queues
  // dma_engines; the tensor engine's stream is ordered.
  static Scheduler for_preset(const Preset& preset);

  // Appends `insn` to `stream` behind waits for every earlier conflicting access, and sets its
  // semaphore fields (the wait, and the update: S[stream] inc at completion). Returns the
  // instruction's position in its stream.
  uint32_t add(unsigned stream, const isa::Insn& insn, uint32_t loc, const Access* acc, size_t n);
  uint32_t add(unsigned stream, const isa::Insn& insn, uint32_t loc, const std::vector<Access>& acc) {
    return add(stream, insn, loc, acc.data(), acc.size());
  }

  unsigned num_streams() const { return static_cast<unsigned>(w_.size()); }
  const std::vector<Instruction>& stream(unsigned i) const { return out_[i]; }
  // Moves the streams out; the scheduler is empty afterwards.
  std::vector<std::vector<Instruction>> take();

  struct Stats {
    uint64_t instructions = 0;  // added by add()
    uint64_t sem_waits = 0;     // inserted
    uint64_t waits = 0;         // semaphore waits emitted (on instructions and sem_waits)
    uint64_t conflicts = 0;     // conflicting record pairs found
    uint64_t implied = 0;       // producers dropped because a vector clock implied them
    uint64_t dropped = 0;       // access records pruned
    uint64_t live_records = 0;
    uint64_t peak_records = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Record {
    Region r;
    uint32_t idx = 0;  // completion index within its stream
    uint32_t gen = 0;
    uint64_t seen = 0;
    uint16_t stream = 0;
    bool write = false;
    bool alive = false;
  };
  struct Ref {
    uint32_t id, gen;
  };
  struct Space {
    std::unordered_map<int64_t, std::vector<Ref>> buckets;
    std::vector<Ref> large;  // records spanning more than kMaxSpan buckets
  };
  static constexpr int kBucketShift = 9;
  static constexpr int64_t kMaxSpan = 64;

  template <class F>
  void visit(const Region& q, F&& f);
  void kill(uint32_t id);
  void insert(const Region& r, bool write, unsigned stream, uint32_t idx);
  const uint32_t* vc_of(unsigned stream, uint32_t idx) const { return &vcs_[stream][size_t{idx} * w_.size()]; }

  std::vector<uint32_t> w_;
  std::vector<bool> ordered_;
  std::vector<std::vector<Instruction>> out_;
  std::vector<uint32_t> done_;                // semaphore-raising instructions per stream
  std::vector<std::vector<uint32_t>> vcs_;    // per stream: the vector clock at each instruction's start
  std::vector<std::vector<uint32_t>> cur_;    // per stream: what its next instruction knows
  std::vector<Record> recs_;
  std::vector<uint32_t> free_;
  Space spaces_[3];
  uint64_t stamp_ = 0;
  Stats stats_;
  std::vector<int64_t> cand_;  // scratch: latest conflicting completion index per stream, -1 if none
};

}  // namespace ncore
