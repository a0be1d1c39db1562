// Internals of the tracer shared by the API's source files: tensor storage, the trace state
// (HBM placement, on-chip allocation, loops, source locations) and the operand lowering
// helpers that turn tensor views into ISA access patterns.
#pragma once

#include <chrono>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ncore/allocator.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "ncore/scheduler.hpp"
#include "nki/language.hpp"
#include "nki/loc.hpp"
#include "nki/tensor.hpp"
#include "nki/tracer.hpp"

namespace nki::detail {

// What a tensor view refers to: an HBM tensor, or a group of physical tiles on chip.
struct Storage {
  BufferKind kind = BufferKind::hbm;  // hbm (shared_hbm is stored as hbm), sbuf or psum
  std::string name;
  Dtype dtype = Dtype::float32;
  Loc loc;
  uint64_t trace = 0;  // the trace that created it (a tensor kept from another trace is an error)
  // HBM
  uint64_t hbm_addr = 0;
  int hbm_index = -1;
  int64_t hbm_elems = 0;
  // On chip: logical tile (i_0 .. i_{nblock-1}) is at partition
  //   part_base + lin(par_tiles, i mod par_tiles) * tile_parts
  // and byte byte_base + lin(free_tiles, i mod free_tiles) * tile_bytes (see ncc mod_alloc).
  uint32_t part_base = 0;
  uint64_t byte_base = 0;
  int nblock = 0;
  std::vector<int64_t> par_tiles, free_tiles;
  int64_t tile_parts = 0;
  int64_t tile_bytes = 0;
  int64_t free_bytes = 0;
  int64_t ordinal = -1;  // on chip: the how-manieth tile the trace made (TraceStats::last_uses)  // the bytes of one partition's elements (a PSUM tile's tile_bytes is its whole bank)
  bool direct = false;  // placed by mod_alloc
  // Lifetime: a tile allocated in a loop dies when its ring buffer is reused or the loop ends.
  bool alive = true;
  int64_t reused_by = -1;  // the iteration that took over its ring buffer, if that killed it
  Loc reused_in;           // ... of the loop at
  std::string dead_reason;  // otherwise, why it died
  // A tile allocated outside the kernel's loops gives its bytes back when its last view is gone
  // (the allocator's range at byte_base, if the trace that made it is still being recorded).
  TracerImpl* owner = nullptr;
  // A loop's buffers outliving the loop for the tiles still referred to (keep_referenced_tiles):
  // given back when the last of them goes.
  std::shared_ptr<void> hold;
  ~Storage();
};

// Physical buffers for one allocation site in one loop: K slots of slot_bytes, used in turn
// by successive iterations.
struct Ring {
  BufferKind kind = BufferKind::sbuf;
  uint64_t base = 0;
  uint64_t slot_bytes = 0;
  int k = 0;
  std::vector<std::shared_ptr<Storage>> live;  // per slot, the tile of the latest iteration
};

struct SiteState {
  int64_t iter = -1;  // the iteration the occurrence count belongs to
  int occ = 0;        // allocations at this site so far in that iteration
  std::vector<std::unique_ptr<Ring>> rings;  // one per occurrence within an iteration
};

struct SiteKey {
  const char* file;
  int line;
  bool operator==(const SiteKey& o) const { return file == o.file && line == o.line; }
};
struct SiteKeyHash {
  size_t operator()(const SiteKey& k) const {
    return std::hash<const void*>()(k.file) * 31u + static_cast<size_t>(k.line);
  }
};

struct LoopFrame {
  uint64_t id = 0;
  int64_t trip = 0;
  int64_t iter = 0;
  bool sequential = false;
  Loc loc;
  std::unordered_map<SiteKey, SiteState, SiteKeyHash> sites;
};

// A lowered operand: the access pattern and the region the scheduler tracks.
struct Lowered {
  ncore::isa::Ap ap{};
  ncore::Region region;
};

// What an API call is, for its error messages.
struct Ctx {
  const char* op;
  Loc loc;
};

class TracerImpl {
 public:
  // A tile made outside the loops whose last view is gone: its bytes are free again (the
  // scheduler orders the next user of the bytes after this one's accesses).
  void release_tile(BufferKind kind, uint64_t offset) noexcept;

  TracerImpl(std::string kernel, const ncore::Preset& preset, const TraceOptions& opts);

  const ncore::Preset& preset() const { return preset_; }

  // --- errors and locations
  std::string where(const Loc& loc) const;  // "kernels/src/vector_add.cpp:42"
  const char* repo_path(const char* file) const;  // the path from the repository root
  [[noreturn]] void fail(const Loc& loc, const std::string& msg) const;
  uint32_t loc_index(const Loc& loc);

  // --- tensors
  Tensor new_hbm(const std::string& name, const Shape& shape, Dtype dtype, ncore::TensorRole role, const Loc& loc);
  // An automatically placed tile; `part_base` is its first partition. `persistent`: bytes of its
  // own for the rest of the kernel even inside a loop (hidden tiles such as the identity).
  Tensor new_tile(const Shape& shape, Dtype dtype, BufferKind kind, const std::string& name, const Loc& loc,
                  uint32_t part_base = 0, bool persistent = false);
  Tensor new_direct(const Shape& shape, Dtype dtype, const Alloc& alloc, const std::string& name, const Loc& loc);
  // The checks of every new tensor: a dtype the model has, a dimension, positive sizes, an
  // element count within ncore::kMaxCount (refused in the kernel's words, never wrapped).
  // Returns the element count.
  int64_t check_new(const Shape& shape, Dtype dtype, const std::string& name, const Loc& loc, const char* kind);
  // The start of new_tile and new_direct: counts the event, checks the on-chip tensor (check_new
  // and its partitions), sets `par` to its partition dimension and returns its name (name_in, or
  // one from the location).
  // The storage of a new tensor of this trace, its placement left to the caller.
  std::shared_ptr<Storage> new_storage(BufferKind kind, const std::string& name, Dtype dtype, const Loc& loc);
  std::string start_on_chip(const Shape& shape, Dtype dtype, const std::string& name_in, const Loc& loc, int& par);
  // A result tile shaped like `like` (block dimensions dropped) on the same partitions.
  Tensor new_result(const Tensor& like, Dtype dtype, const char* op, const Loc& loc);
  void mark_output(const Tensor& t, const Loc& loc);

  // --- loops
  uint64_t loop_enter(int64_t trip, bool sequential, const Loc& loc);
  void loop_iter(uint64_t frame, int64_t i);
  void loop_exit(uint64_t frame) noexcept;

  // --- lowering and emission
  Lowered lower_onchip(const Tensor& t, const Ctx& c, const char* param);
  // An HBM view as `rows` x (per-row elements); the view must already have that many rows.
  Lowered lower_hbm(const Tensor& t, const Ctx& c, const char* param);
  void check_alive(const Tensor& t, const Ctx& c, const char* param) const;
  // An operand an engine reads or writes: in the SBUF or the PSUM (NKI's error otherwise).
  void require_on_chip(const Tensor& t, const Ctx& c, const char* param) const;
  void emit(unsigned stream, ncore::isa::Insn insn, const Loc& loc, const ncore::Access* acc, size_t n);
  // While alive, PSUM memsets (nl.zeros) wait for their tile's first use (TraceOptions::
  // elide_psum_zeros); see settle_zeros.
  struct DeferZeros {
    explicit DeferZeros(TracerImpl& tr) : tr_(tr), was_(tr.deferring_zeros_) { tr.deferring_zeros_ = tr.opts_.elide_psum_zeros; }
    ~DeferZeros() { tr_.deferring_zeros_ = was_; }
    DeferZeros(const DeferZeros&) = delete;
    DeferZeros& operator=(const DeferZeros&) = delete;

   private:
    TracerImpl& tr_;
    bool was_;
  };
  unsigned next_dma_queue();
  uint64_t hbm_end() const { return hbm_end_; }

  // --- tensor engine
  // Whether a multiply into PSUM region `dst` adds (acc) or overwrites, for nc_matmul's
  // accumulate (nullopt: infer), and the accumulation groups updated for it. See tracer.cpp.
  bool psum_accumulate(const ncore::Box& dst, std::optional<bool> accumulate, const Ctx& c, const Tensor& t);
  // True (and counted) when `ap` is what the array holds: loaded by the latest load_stationary
  // and not written since, so that its load can be skipped (TraceOptions::reuse_stationary).
  // note_stationary records a new load.
  bool reuse_stationary(const ncore::isa::Ap& ap);
  void note_stationary(const ncore::isa::Ap& ap, const ncore::Region& r);
  // The [P, P] identity (P = the preset's partitions) in SBUF for a transpose of `dt` data:
  // float32 for fp32, bfloat16 for the 16-bit types. Made on first use: a constant HBM tensor
  // and one dma_copy into a persistent SBUF tile at `loc`.
  Tensor identity(ncore::isa::Dtype dt, const Loc& loc);
  // A constant HBM tensor holding `values` (row-major, each rounded to `dtype` as the engines
  // round: through fp32, to nearest even): stored in the Program (TensorRole::constant), which
  // the run pipeline copies into HBM before the kernel starts. A constant with the same shape,
  // dtype and bytes as an earlier one is that one (a loop asking for it again reuses it).
  Tensor constant(const std::string& name, const Shape& shape, Dtype dtype, const std::vector<float>& values,
                  const Loc& loc);
  // The kernel's random numbers (nl.random_seed, nl.rand, dropout): n values uniform on the grid
  // k 2^-bits, k in [0, 2^bits), from a splitmix64 stream started by the seed (0 until set); the
  // same seed gives the same sequence.
  void random_seed(uint64_t seed) { rng_ = seed; }
  std::vector<float> random_uniform(size_t n, int bits);

  // An error found where it cannot be thrown (a destructor): thrown by the next API call, or
  // by the end of the trace.
  void defer_error(const Loc& loc, const std::string& msg) noexcept;
  void throw_deferred();

  ncore::Program finish();
  uint64_t id() const { return id_; }
  // See nki::lifetime_events.
  uint64_t lifetime_events() const { return lifetime_events_; }
  uint64_t trace_events() const { return events_; }

  Loc last_loc;  // the latest API call (for errors of calls without a Loc, such as t[m])

 private:
  struct Block {
    uint64_t lo, hi;
    std::string name;
  };
  ncore::SbufAllocator& allocator(BufferKind k) { return k == BufferKind::psum ? psum_ : sbuf_; }
  // A ring of up to kRingDepth slots (fewer when space is short); none at all is an error, or
  // with must = false nullptr.
  std::unique_ptr<Ring> make_ring(BufferKind kind, uint64_t slot_bytes, int64_t trip, const std::string& name,
                                  const Loc& loc, bool must = true);
  void release_ring(Ring& r, const std::string& why) noexcept;
  // keep_referenced_tiles at a loop's end: the ring's bytes held by its tiles still referred to
  // (false: none is, release it).
  bool hold_ring(Ring& r) noexcept;
  // keep_referenced_tiles: whether the tile (held by `ref`, one of its references) is used again:
  // by its last use measured earlier (last_uses), else while anything but `ref` refers to it.
  bool needed_later(const std::shared_ptr<Storage>& ref) const noexcept;
  void note_use(const Storage& st);
  void drop_psum_groups(uint64_t lo, uint64_t hi);
  // An allocation of `bytes`; when there is no room, the rings of the loops being traced give
  // back their last slot (the deepest first, a slot whose tile nothing else refers to) until
  // there is: fewer buffers in flight rather than a failed allocation, as a compiler would
  // share them.
  std::optional<uint64_t> allocate_or_shrink(BufferKind kind, uint64_t bytes);
  [[noreturn]] void capacity_error(BufferKind kind, const std::string& name, const Loc& loc, uint64_t bytes,
                                   int k) const;

  std::string kernel_;
  uint64_t id_;
  const ncore::Preset& preset_;
  TraceOptions opts_;
  uint64_t uses_ = 0;                    // operand uses of on-chip tiles so far
  int64_t onchip_made_ = 0;              // on-chip tiles made so far (their ordinals)
  std::vector<uint64_t> last_use_;       // per ordinal, the last use (TraceStats::last_uses)
  std::string root_;  // repository root, stripped from source paths
  ncore::SbufAllocator sbuf_, psum_;
  std::map<uint64_t, std::string> auto_names_;  // sbuf offset -> tile name, for clash messages
  ncore::Scheduler sched_;
  std::vector<ncore::HbmTensor> hbm_;
  std::vector<Loc> hbm_locs_;  // where each HBM tensor was allocated (for messages)
  // Long traces (TraceOptions::poll, progress): instructions emitted, when the trace started and
  // when progress is next due (seconds after the start).
  void poll();
  uint64_t emitted_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  double next_progress_ = 0;
  uint64_t hbm_end_ = 0;
  std::vector<ncore::SourceLoc> locs_;
  std::unordered_map<SiteKey, uint32_t, SiteKeyHash> loc_by_ptr_;
  // PSUM regions (partitions x bytes) of the open matmul accumulation groups: written by a
  // multiply since their tile was allocated and not read since.
  std::vector<ncore::Box> psum_groups_;
  // PSUM memsets of nl.zeros waiting for their tile's first use.
  struct PendingZero {
    unsigned stream;
    ncore::isa::Insn insn;
    Loc loc;
    ncore::Access access;
  };
  std::vector<PendingZero> pending_zeros_;
  bool deferring_zeros_ = false;
  // Before an instruction with these accesses: each waiting memset it touches is dropped (a
  // multiply overwriting its whole region) or emitted now.
  void settle_zeros(const ncore::isa::Insn& insn, const ncore::Access* acc, size_t n);
  // Waiting memsets within PSUM bytes [lo, hi) of every partition, whose tile is gone: dropped.
  void drop_zeros(uint64_t lo, uint64_t hi) noexcept;
  void drop_zeros_overlapping(const ncore::Box& box) noexcept;
  uint64_t zeros_elided_ = 0;
  // The stationary operand the array holds (valid while stationary_ok_).
  bool stationary_ok_ = false;
  ncore::isa::Ap stationary_{};
  ncore::Region stationary_region_;
  uint64_t stationary_reuses_ = 0;
  Tensor identity_[2];  // bfloat16 (16-bit data), float32
  std::vector<std::pair<size_t, Tensor>> constants_;  // index into hbm_, the tensor
  uint64_t rng_ = 0;
  std::string deferred_;
  std::map<std::pair<std::string, int>, uint32_t> loc_by_name_;
  std::vector<LoopFrame> loops_;
  uint64_t next_frame_ = 1;
  unsigned dma_count_ = 0;
  uint64_t lifetime_events_ = 0;
  uint64_t events_ = 0;
  std::vector<std::pair<unsigned, uint32_t>> order_;
};

// The trace being recorded on this thread, or nullptr.
TracerImpl* current();
// The trace being recorded; throws KernelError naming the API call when there is none.
TracerImpl& require(const char* api, const Loc& loc);

// Text helpers shared by the API sources: "[128, 512]", and an operand named in a message.
std::string shape_str(const int64_t* d, size_t n);
// "operand 'data1' of 'tensor_tensor'"
std::string operand_str(const Ctx& c, const char* param);
// The logical shape of an on-chip view as (partitions, free dims...), block dims dropped, and
// "x[128, 512]": its name and that shape, as NKI prints an operand.
Shape tile_shape(const Tensor& t);
std::string tile_str(const Tensor& t);

}  // namespace nki::detail
