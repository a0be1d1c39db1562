// The trace state: source locations, HBM placement, on-chip allocation (automatic rings and
// direct mod_alloc regions), loops, operand lowering and instruction emission.
//
// Automatic allocation. A tile requested outside any loop gets its own bytes for the rest of
// the kernel. A tile requested inside an affine_range/sequential_range body is identified by
// its allocation site (file and line, and which occurrence of that site within the current
// iteration) in the innermost loop; the site gets a ring of K = min(4, trip count) physical
// buffers, fewer if K do not fit, and iteration i uses buffer i mod K. The load of iteration
// i+1 thus lands in another buffer than the one iteration i computes on, and the scheduler
// lets them overlap, as the NKI compiler's allocator does. The ring is freed when its loop
// ends. A tile whose buffer has been reused (or freed) is dead: using it is an error rather
// than a silent read of another iteration's data.
//
//   SBUF partition bytes:  0        64       128      192      256
//                          | ring a_tile: 4 slots    | ring b_tile ...
//                          |it 0,4.. |it 1,5.. |it 2 |it 3 |
//
// Direct allocation (mod_alloc) regions are placed where the kernel asks and reserved in the
// allocator, so that automatic tiles never land on them; they may overlap each other.
//
// PSUM (spec 1.2: 8 banks of 2 KiB per partition; one matmul writes one bank; a tile may not
// cross a bank) is allocated by whole banks, as NKI's PSUM allocation is: a PSUM tile of at
// most one bank per partition (psum_fmax: 512 fp32) takes a bank of its own, a tile with block
// dimensions one bank per logical tile, and a ring in a loop k adjacent banks, so that
// successive iterations rotate over banks and the next matmul group fills one bank while the
// vector engine copies the previous result out of another. Eight banks are eight open
// accumulation groups.
//
//   PSUM partition bytes: 0      2K     4K     6K     8K    ...   16K
//                         | ring res_psum: it 0,4 | it 1,5 | it 2 | it 3 | free ...
//
// Matmul accumulation groups (nc_matmul's accumulate=None, "infer"): the tracer keeps the PSUM
// regions written by a multiply since their tile was allocated and not read since. A multiply
// into exactly such a region accumulates; into a region that touches none of them it
// overwrites and opens a group; one that overlaps a group in part cannot be inferred and is an
// error. Allocation and any read by another instruction close the groups they touch; writes
// by other instructions (the memset of nl::zeros) neither open nor close one, so zeros and
// then += gives the first multiply an overwrite, the same bits as adding to zero.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstring>

#include "ncore/error.hpp"
#include "ncore/interrupt.hpp"
#include "ncore/isa_kinds.hpp"
#include "ncore/size.hpp"
#include "ncore/validate.hpp"
#include "ncore/numerics.hpp"
#include "nki/isa.hpp"
#include "nki/tracer.hpp"
#include "tracer_impl.hpp"

#ifndef NKI_REPO_ROOT
#define NKI_REPO_ROOT ""
#endif

namespace nki {
namespace detail {
namespace {

constexpr uint64_t kAlign = 64;
constexpr int kRingDepth = 4;
// Elements per partition of one engine instruction (handout: "up to 64K elements").
constexpr int64_t kMaxFreeElems = 65536;

thread_local TracerImpl* g_current = nullptr;
std::atomic<uint64_t> g_next_trace{1};

uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

const char* buffer_title(BufferKind k) { return k == BufferKind::psum ? "PSUM" : "SBUF"; }

// Row-major linear index of i mod shape (ncc mod_alloc's modulo_allocate_func).
int64_t mod_linear(const std::vector<int64_t>& shape, const int64_t* idx, int nidx) {
  if (shape.empty()) return 0;
  int64_t lin = 0;
  const int n = std::min<int>(nidx, static_cast<int>(shape.size()));
  for (int d = 0; d < n; ++d) {
    int64_t tail = 1;
    for (size_t e = d + 1; e < shape.size(); ++e) tail *= shape[e];
    lin += (idx[d] % shape[d]) * tail;
  }
  return lin;
}

}  // namespace

TracerImpl* current() { return g_current; }

TracerImpl& require(const char* api, const Loc& loc) {
  if (!g_current)
    throw ncore::KernelError(fmt::format("{}:{}: '{}' called outside of a kernel being traced "
                                         "(err_nki_api_outside_of_nki_kernel)",
                                         loc.file, loc.line, api));
  g_current->last_loc = loc;
  g_current->throw_deferred();
  return *g_current;
}

TracerImpl::TracerImpl(std::string kernel, const ncore::Preset& preset, const TraceOptions& opts)
    : kernel_(std::move(kernel)),
      id_(g_next_trace++),
      preset_(preset),
      opts_(opts),
      root_(NKI_REPO_ROOT),
      sbuf_(preset.sbuf_usable_bytes, kAlign),
      psum_(preset.psum_bytes, preset.psum_bank_bytes),
      sched_(ncore::Scheduler::for_preset(preset)) {
  if (opts_.dma_queues_used == 0 || opts_.dma_queues_used > preset.dma_queues)
    throw ncore::KernelError(fmt::format("dma_queues_used {} is outside 1..{} (the DMA queues of preset '{}')",
                                         opts_.dma_queues_used, preset.dma_queues, preset.name));
  if (!root_.empty() && root_.back() != '/') root_ += '/';
}

// --- errors and locations -----------------------------------------------------------------

// A source path from the repository's root: the compiler's __FILE__ is absolute (under root_) or,
// when the build made it relative (ccache's base_dir, -fmacro-prefix-map), relative to the build
// directory inside the repository.
const char* TracerImpl::repo_path(const char* f) const {
  if (!f) return "";
  if (!root_.empty() && std::strncmp(f, root_.c_str(), root_.size()) == 0) return f + root_.size();
  while (std::strncmp(f, "../", 3) == 0 || std::strncmp(f, "./", 2) == 0) f += f[1] == '/' ? 2 : 3;
  return f;
}

std::string TracerImpl::where(const Loc& loc) const { return fmt::format("{}:{}", repo_path(loc.file), loc.line); }

void TracerImpl::fail(const Loc& loc, const std::string& msg) const {
  throw ncore::KernelError(fmt::format("{}: {}", where(loc), msg));
}

uint32_t TracerImpl::loc_index(const Loc& loc) {
  const SiteKey key{loc.file, loc.line};
  auto it = loc_by_ptr_.find(key);
  if (it != loc_by_ptr_.end()) return it->second;
  const char* f = repo_path(loc.file);
  auto named = loc_by_name_.emplace(std::make_pair(std::string(f), loc.line), static_cast<uint32_t>(locs_.size()));
  if (named.second) locs_.push_back(ncore::SourceLoc{f, static_cast<uint32_t>(loc.line)});
  loc_by_ptr_[key] = named.first->second;
  return named.first->second;
}

// --- HBM tensors ----------------------------------------------------------------------------

// The view of a new tensor: dims before `par` are blocks (tiles), `par` is the
// partition dim, the rest are free dims laid out row-major (all of them for par -1: an HBM tensor).
static View new_view(const Shape& shape, Dtype dtype, int par) {
  View v;
  v.dtype = dtype;
  v.nd = static_cast<uint8_t>(shape.size());
  int64_t stride = 1;
  for (int d = v.nd - 1; d >= 0; --d) {
    v.size[d] = shape[d];
    if (d > par) {
      v.kind[d] = DimKind::free;
      v.stride[d] = stride;
      stride *= shape[d];
    } else if (d == par) {
      v.kind[d] = DimKind::part;
    } else {
      v.kind[d] = DimKind::block;
      v.stride[d] = d;
    }
  }
  return v;
}

Tensor TracerImpl::new_hbm(const std::string& name_in, const Shape& shape, Dtype dtype, ncore::TensorRole role,
                           const Loc& loc) {
  ++events_;
  std::string name = name_in.empty() ? fmt::format("hbm_tensor{}", hbm_.size()) : name_in;
  auto taken = [&](const std::string& n) {
    return std::any_of(hbm_.begin(), hbm_.end(), [&](const ncore::HbmTensor& t) { return t.name == n; });
  };
  if (taken(name)) {
    if (role == ncore::TensorRole::input) fail(loc, fmt::format("there is already an HBM tensor named `{}`", name));
    int k = 1;
    while (taken(fmt::format("{}_{}", name, k))) ++k;
    name = fmt::format("{}_{}", name, k);
  }
  const int64_t elems = check_new(shape, dtype, name, loc, "HBM tensor");
  const uint64_t bytes = static_cast<uint64_t>(elems) * static_cast<uint64_t>(dtype_bytes(dtype));
  const uint64_t at = align_up(hbm_end_);
  if (at + bytes > preset_.hbm_capacity_bytes)
    fail(loc, fmt::format("HBM tensor `{}` of shape {} {} ({} bytes) does not fit the {} GiB of HBM of preset {} (the "
                          "kernel's HBM tensors before it take {} bytes)",
                          name, shape.str(), to_string(dtype), bytes, preset_.hbm_capacity_bytes >> 30, preset_.name,
                          at));
  hbm_end_ = at + bytes;

  auto st = new_storage(BufferKind::hbm, name, dtype, loc);
  st->hbm_addr = at;
  st->hbm_index = static_cast<int>(hbm_.size());
  st->hbm_elems = elems;
  ncore::HbmTensor h;
  h.name = name;
  h.dtype = to_isa(dtype);
  h.shape = shape.vec();
  h.offset = at;
  h.bytes = bytes;
  h.role = role;
  hbm_.push_back(h);
  hbm_locs_.push_back(loc);

  return Tensor(std::move(st), new_view(shape, dtype, -1));  // every dimension free, row-major
}

void TracerImpl::mark_output(const Tensor& t, const Loc& loc) {
  if (!t.valid()) fail(loc, "the kernel returned an empty tensor");
  const Storage& st = *t.storage();
  if (st.trace != id_) fail(loc, fmt::format("tensor `{}` belongs to another trace", st.name));
  if (st.kind != BufferKind::hbm)
    fail(loc, fmt::format("the kernel's result must be an HBM tensor, but `{}` is in {}", st.name, to_string(st.kind)));
  const View& v = t.view();
  int64_t elems = 1, expect = 1;
  bool contiguous = v.offset == 0;
  for (int d = v.nd - 1; d >= 0; --d) {
    if (v.size[d] != 1 && v.stride[d] != expect) contiguous = false;
    expect *= v.size[d];
    elems *= v.size[d];
  }
  if (!contiguous || elems != st.hbm_elems)
    fail(loc, fmt::format("the kernel's result {} must be a whole HBM tensor (possibly reshaped), not a slice of `{}`",
                          t.str(), st.name));
  ncore::HbmTensor& h = hbm_[st.hbm_index];
  h.role = ncore::TensorRole::output;
  h.shape = t.shape().vec();
}

// --- on-chip tiles --------------------------------------------------------------------------

void TracerImpl::capacity_error(BufferKind kind, const std::string& name, const Loc& loc, uint64_t bytes,
                                int k) const {
  if (kind == BufferKind::psum) {
    const uint64_t bank = preset_.psum_bank_bytes;
    fail(loc, fmt::format("PSUM allocation failed for tensor `{}`: it needs {} bank{} of {} bytes per partition, but "
                          "only {} of the {} PSUM banks are free",
                          name, bytes / bank, bytes / bank == 1 ? "" : "s", bank, psum_.total_free() / bank,
                          psum_.capacity() / bank));
  }
  const ncore::SbufAllocator& a = sbuf_;
  fail(loc, fmt::format("{} allocation failed for tensor `{}`: it needs {} bytes per partition{}, but the largest "
                        "free range is {} bytes ({} of the {} usable bytes per partition are free)",
                        buffer_title(kind), name, bytes * k,
                        k > 1 ? fmt::format(" ({} buffers of {})", k, bytes) : std::string(), a.largest_free(),
                        a.total_free(), a.capacity()));
}

std::unique_ptr<Ring> TracerImpl::make_ring(BufferKind kind, uint64_t slot_bytes, int64_t trip,
                                            const std::string& name, const Loc& loc, bool must) {
  auto r = std::make_unique<Ring>();
  r->kind = kind;
  r->slot_bytes = slot_bytes;
  for (int k = static_cast<int>(std::min<int64_t>(kRingDepth, std::max<int64_t>(trip, 1))); k >= 1; --k) {
    if (auto off = k == 1 && must ? allocate_or_shrink(kind, slot_bytes) : allocator(kind).allocate(slot_bytes * k)) {
      r->base = *off;
      r->k = k;
      break;
    }
  }
  if (r->k == 0) {
    if (!must) return nullptr;
    capacity_error(kind, name, loc, slot_bytes, 1);
  }
  if (kind == BufferKind::sbuf) auto_names_[r->base] = name;
  r->live.resize(r->k);
  return r;
}

std::optional<uint64_t> TracerImpl::allocate_or_shrink(BufferKind kind, uint64_t bytes) {
  for (;;) {
    if (auto off = allocator(kind).allocate(bytes)) return off;
    Ring* best = nullptr;
    for (LoopFrame& f : loops_)
      for (auto& [key, site] : f.sites)
        for (auto& r : site.rings) {
          if (!r || r->kind != kind || r->k <= 1) continue;
          const auto& last = r->live[static_cast<size_t>(r->k - 1)];
          if (last && last.use_count() > 1) continue;  // its tile is in use
          if (opts_.keep_referenced_tiles && needed_later(last)) continue;
          if (!best || r->k > best->k || (r->k == best->k && r->base < best->base)) best = r.get();
        }
    if (!best) return std::nullopt;
    ++lifetime_events_;  // which ring can give a slot back depends on which tiles are still referred to
    if (auto& last = best->live[static_cast<size_t>(best->k - 1)]) last->alive = false;
    best->k -= 1;
    best->live.resize(static_cast<size_t>(best->k));
    allocator(kind).shrink(best->base, best->slot_bytes * static_cast<uint64_t>(best->k));
  }
}

Storage::~Storage() {
  if (owner && current() && current()->id() == trace) current()->release_tile(kind, byte_base);
}

void TracerImpl::release_tile(BufferKind kind, uint64_t offset) noexcept {
  ++lifetime_events_;
  if (kind == BufferKind::psum) {
    const auto& used = psum_.allocations();
    const auto it = used.find(offset);
    drop_zeros(offset, it != used.end() ? it->second : offset + 1);
  }
  try {
    allocator(kind).release(offset);
  } catch (...) {
  }
  if (kind == BufferKind::sbuf) auto_names_.erase(offset);
}

namespace {
// A loop's buffers held for the tiles that outlive the loop: given back with the last of them.
struct RingHold {
  BufferKind kind;
  uint64_t base;
  uint64_t trace;
  RingHold(BufferKind k, uint64_t b, uint64_t t) : kind(k), base(b), trace(t) {}
  RingHold(const RingHold&) = delete;
  RingHold& operator=(const RingHold&) = delete;
  ~RingHold() {
    if (current() && current()->id() == trace) current()->release_tile(kind, base);
  }
};
}  // namespace

bool TracerImpl::hold_ring(Ring& r) noexcept {
  std::shared_ptr<RingHold> hold;
  for (auto& s : r.live)
    if (needed_later(s)) {
      if (!hold) hold = std::make_shared<RingHold>(r.kind, r.base, s->trace);
      s->hold = hold;
    }
  if (!hold) return false;
  ++lifetime_events_;
  for (auto& s : r.live) s.reset();
  return true;
}

void TracerImpl::release_ring(Ring& r, const std::string& why) noexcept {
  if (r.kind == BufferKind::psum) drop_zeros(r.base, r.base + r.slot_bytes * static_cast<uint64_t>(r.live.size()));
  try {
    allocator(r.kind).release(r.base);
  } catch (...) {
  }
  if (r.kind == BufferKind::sbuf) auto_names_.erase(r.base);
  for (auto& s : r.live)
    if (s) {
      s->alive = false;
      s->dead_reason = why;
      s.reset();
    }
}

int64_t TracerImpl::check_new(const Shape& shape, Dtype dtype, const std::string& name, const Loc& loc,
                              const char* kind) {
  if (!is_supported(dtype))
    fail(loc, fmt::format("dtype {} of tensor `{}` is not supported by this model (supported: {})", to_string(dtype), name,
                          supported_dtypes()));
  if (shape.empty())
    fail(loc, fmt::format("{} `{}` needs {}", kind, name,
                          std::string(kind) == "HBM tensor" ? "at least one dimension" : "a partition dimension"));
  for (int64_t d : shape)
    if (d <= 0) fail(loc, fmt::format("tensor `{}` of shape {}: dimension sizes must be positive", name, shape.str()));
  const auto n = shape.checked_elements();
  if (!n)
    fail(loc, fmt::format("{} `{}` of shape {} has more than 2^60 elements: more than any memory of the model holds "
                          "(HBM: 2^40 bytes)", kind, name, shape.str()));
  return *n;
}

std::shared_ptr<Storage> TracerImpl::new_storage(BufferKind kind, const std::string& name, Dtype dtype,
                                                 const Loc& loc) {
  auto st = std::make_shared<Storage>();
  st->kind = kind;
  st->name = name;
  st->trace = id_;
  st->dtype = dtype;
  st->loc = loc;
  if (kind != BufferKind::hbm) st->ordinal = onchip_made_++;
  return st;
}

bool TracerImpl::needed_later(const std::shared_ptr<Storage>& ref) const noexcept {
  if (!ref || !ref->alive) return false;
  const auto& lu = opts_.last_uses;
  if (ref->ordinal >= 0 && static_cast<size_t>(ref->ordinal) < lu.size())
    return lu[static_cast<size_t>(ref->ordinal)] > uses_;
  return ref.use_count() > 1;
}

void TracerImpl::note_use(const Storage& st) {
  ++uses_;
  if (!opts_.measure_last_uses || st.ordinal < 0) return;  // only a measuring trace keeps the table
  const auto o = static_cast<size_t>(st.ordinal);
  if (last_use_.size() <= o) last_use_.resize(o + 1, 0);
  last_use_[o] = uses_;
}

std::string TracerImpl::start_on_chip(const Shape& shape, Dtype dtype, const std::string& name_in, const Loc& loc,
                                      int& par) {
  ++events_;
  const std::string name = name_in.empty() ? fmt::format("tensor@{}", where(loc)) : name_in;
  check_new(shape, dtype, name, loc, "on-chip tensor");
  par = shape.par_index() >= 0 ? shape.par_index() : 0;
  const int64_t parts = shape[par];
  if (parts > static_cast<int64_t>(preset_.num_partitions))
    fail(loc, fmt::format("number of partitions {} exceed architecture limitation of {}. (tensor `{}` of shape {})",
                          parts, preset_.num_partitions, name, shape.str()));
  return name;
}

Tensor TracerImpl::new_tile(const Shape& shape, Dtype dtype, BufferKind kind, const std::string& name_in,
                            const Loc& loc, uint32_t part_base, bool persistent) {
  int par = 0;
  const std::string name = start_on_chip(shape, dtype, name_in, loc, par);
  const int64_t parts = shape[par];
  int64_t tiles = 1, free = 1;
  for (int d = 0; d < par; ++d) tiles *= shape[d];
  for (size_t d = par + 1; d < shape.size(); ++d) free *= shape[d];
  uint64_t tile_bytes = static_cast<uint64_t>(free * dtype_bytes(dtype));
  uint64_t slot = align_up(static_cast<uint64_t>(tiles) * tile_bytes);
  if (kind == BufferKind::psum) {
    const uint64_t bank = preset_.psum_bank_bytes;
    if (tile_bytes > bank)
      fail(loc, fmt::format("PSUM tile `{}` of shape {} {} needs {} bytes per partition, but a PSUM tile must fit one "
                            "{}-byte bank (psum_fmax: {} float32 per partition); a tile may not cross a bank",
                            name, shape.str(), to_string(dtype), tile_bytes, bank, bank / 4));
    tile_bytes = bank;  // each logical tile in a bank of its own
    slot = static_cast<uint64_t>(tiles) * bank;
  }

  auto st = new_storage(kind, name, dtype, loc);
  st->part_base = part_base;
  st->nblock = par;
  for (int d = 0; d < par; ++d) st->free_tiles.push_back(shape[d]);
  st->tile_parts = parts;
  st->tile_bytes = static_cast<int64_t>(tile_bytes);
  st->free_bytes = free * dtype_bytes(dtype);

  if (loops_.empty() || persistent) {
    auto off = allocate_or_shrink(kind, slot);
    if (!off) capacity_error(kind, name, loc, slot, 1);
    st->byte_base = *off;
    if (kind == BufferKind::sbuf) auto_names_[*off] = name;
    if (!persistent) st->owner = this;
  } else {
    LoopFrame& f = loops_.back();
    SiteState& site = f.sites[SiteKey{loc.file, loc.line}];
    if (site.iter != f.iter) {
      site.iter = f.iter;
      site.occ = 0;
    }
    const size_t occ = static_cast<size_t>(site.occ++);
    // The same line allocating again within one iteration (a plain Python or C++ loop inside the
    // kernel's loop) and no ring of its own yet: the ring of an earlier occurrence whose tile of
    // this iteration is already dead (nothing refers to it), else a new ring while there is room,
    // else a tile given back when its last view is gone.
    // (A ring shared so, or a tile outside the rings, makes this site's placement depend on
    // lifetimes in every iteration: counted in lifetime_events. A new ring does not: from then on
    // the occurrence has a ring of its own.)
    size_t which = occ;
    if (occ >= site.rings.size() && occ > 0)
      for (size_t r = 0; r < site.rings.size(); ++r) {
        const Ring& g = *site.rings[r];
        const auto& cur = g.live[static_cast<size_t>(f.iter % g.k)];
        if (g.kind == kind && g.slot_bytes >= slot && (!cur || (cur.use_count() == 1 && cur->alive))) {
          which = r;
          ++lifetime_events_;
          break;
        }
      }
    std::unique_ptr<Ring> fresh;
    if (which >= site.rings.size()) fresh = make_ring(kind, slot, f.trip, name, loc, occ == 0);
    // A tile outside the rings: bytes of its own, given back when its last view is gone.
    auto own_bytes = [&] {
      ++lifetime_events_;
      auto off = allocate_or_shrink(kind, slot);
      if (!off) capacity_error(kind, name, loc, slot, 1);
      st->byte_base = *off;
      st->owner = this;
      if (kind == BufferKind::sbuf) auto_names_[*off] = name;
    };
    if (which >= site.rings.size() && !fresh) {
      own_bytes();
    } else {
      if (fresh) {
        site.rings.emplace_back(std::move(fresh));
        which = site.rings.size() - 1;
      }
      std::unique_ptr<Ring>& ring = site.rings[which];
      if (ring->slot_bytes < slot || ring->kind != kind) {
        if (!(opts_.keep_referenced_tiles && hold_ring(*ring)))
          release_ring(*ring, fmt::format("its buffers were reallocated for a larger tile at {}", where(loc)));
        ring = make_ring(kind, slot, f.trip, name, loc);
      }
      const int b = static_cast<int>(f.iter % ring->k);
      if (auto& old = ring->live[b]; opts_.keep_referenced_tiles && needed_later(old)) {
        own_bytes();  // still referred to: it keeps its slot
      } else {
        if (old) {
          old->alive = false;
          old->reused_by = f.iter;
          old->reused_in = f.loc;
        }
        st->byte_base = ring->base + static_cast<uint64_t>(b) * ring->slot_bytes;
        ring->live[b] = st;
      }
    }
  }
  if (kind == BufferKind::psum) drop_psum_groups(st->byte_base, st->byte_base + slot);

  return Tensor(std::move(st), new_view(shape, dtype, par));
}

// A new PSUM tile at bytes [lo, hi): the accumulation groups of the tile that had them are closed.
void TracerImpl::drop_psum_groups(uint64_t lo, uint64_t hi) {
  ncore::Box b;
  b.p_lo = 0;
  b.p_hi = static_cast<uint32_t>(preset_.num_partitions);
  b.lo = static_cast<int64_t>(lo);
  b.hi = static_cast<int64_t>(hi);
  psum_groups_.erase(std::remove_if(psum_groups_.begin(), psum_groups_.end(),
                                    [&](const ncore::Box& g) { return g.overlaps(b); }),
                     psum_groups_.end());
}

Tensor TracerImpl::new_direct(const Shape& shape, Dtype dtype, const Alloc& al, const std::string& name_in,
                              const Loc& loc) {
  int par = 0;
  const std::string name = start_on_chip(shape, dtype, name_in, loc, par);
  const int64_t parts = shape[par];
  const int64_t esz = dtype_bytes(dtype);
  int64_t free = 1;
  for (size_t d = par + 1; d < shape.size(); ++d) free *= shape[d];
  const int64_t tile_bytes = free * esz;
  const BufferKind kind = al.buffer;
  const bool psum = kind == BufferKind::psum;
  const char* api = al.by_address ? "address=" : "mod_alloc";
  const uint64_t capacity = psum ? preset_.psum_bytes : preset_.sbuf_usable_bytes;
  if (psum && (al.base_addr % static_cast<int64_t>(preset_.psum_bank_bytes) != 0 ||
               tile_bytes > static_cast<int64_t>(preset_.psum_bank_bytes)))
    fail(loc, fmt::format("{} places PSUM tensor `{}` at byte {} with {} bytes per partition: a PSUM tensor starts at "
                          "a {}-byte bank boundary and fits one bank",
                          api, name, al.base_addr, tile_bytes, preset_.psum_bank_bytes));
  // Counts and extents beyond the SBUF are refused below; ncore::kMaxCount keeps the arithmetic
  // itself from wrapping on the way there.
  auto count = [&](const std::vector<int64_t>& v, const char* what) {
    for (int64_t x : v)
      if (x <= 0) fail(loc, fmt::format("{} {} of tensor `{}` must be positive", api, what, name));
    const auto n = ncore::count_product(v.begin(), v.end());
    if (!n) fail(loc, fmt::format("{} {} of tensor `{}` multiply to more than 2^60 tiles", api, what, name));
    return static_cast<int64_t>(*n);
  };
  const int64_t nfree = count(al.num_free_tiles, "num_free_tiles");
  const int64_t npar = count(al.num_par_tiles, "num_par_tiles");
  if (al.base_addr < 0 || al.base_partition < 0)
    fail(loc, fmt::format("{} of tensor `{}`: the address and partition must not be negative", api, name));
  if (al.base_addr > static_cast<int64_t>(ncore::kMaxCount) || al.base_partition > static_cast<int64_t>(ncore::kMaxCount))
    fail(loc, fmt::format("{} of tensor `{}`: address {} or partition {} is beyond the {}", api, name, al.base_addr,
                          al.base_partition, psum ? "PSUM" : "SBUF"));
  if (al.base_addr % esz != 0)
    fail(loc, fmt::format("{} address {} of tensor `{}` is not a multiple of its {}-byte {} element", api, al.base_addr,
                          name, esz, to_string(dtype)));
  const auto span = ncore::count_mul(static_cast<uint64_t>(nfree), static_cast<uint64_t>(tile_bytes));
  const int64_t lo = al.base_addr, hi = span ? al.base_addr + static_cast<int64_t>(*span) : INT64_MAX;
  if (hi > static_cast<int64_t>(capacity))
    fail(loc, fmt::format("{} places tensor `{}` at bytes [{}, {}) of each partition, beyond the {} usable "
                          "bytes per partition",
                          api, name, lo, span ? fmt::format("{}", hi) : "over 2^60", capacity));
  const auto pspan = ncore::count_mul(static_cast<uint64_t>(npar), static_cast<uint64_t>(parts));
  const int64_t phi = pspan ? al.base_partition + static_cast<int64_t>(*pspan) : INT64_MAX;
  if (phi > static_cast<int64_t>(preset_.num_partitions))
    fail(loc, fmt::format("{} places tensor `{}` on partitions [{}, {}), beyond the {} partitions", api, name,
                          al.base_partition, phi, preset_.num_partitions));
  if (auto clash = allocator(kind).reserve(static_cast<uint64_t>(lo), static_cast<uint64_t>(hi))) {
    auto it = auto_names_.find(clash->first);
    fail(loc, fmt::format("{} region [{}, {}) of tensor `{}` overlaps the automatically allocated tile `{}` "
                          "at [{}, {}); declare tensors placed by address before automatically placed ones",
                          api, lo, hi, name, psum || it == auto_names_.end() ? "?" : it->second, clash->first,
                          clash->second));
  }
  if (psum) drop_psum_groups(static_cast<uint64_t>(lo), static_cast<uint64_t>(hi));

  auto st = new_storage(kind, name, dtype, loc);
  st->direct = true;
  st->part_base = static_cast<uint32_t>(al.base_partition);
  st->byte_base = static_cast<uint64_t>(al.base_addr);
  st->nblock = par;
  st->par_tiles = al.num_par_tiles;
  st->free_tiles = al.num_free_tiles;
  st->tile_parts = parts;
  st->tile_bytes = tile_bytes;
  st->free_bytes = tile_bytes;

  return Tensor(std::move(st), new_view(shape, dtype, par));
}

Tensor TracerImpl::new_result(const Tensor& like, Dtype dtype, const char* op, const Loc& loc) {
  const View& v = like.view();
  Shape s;
  bool has_part = false;
  for (int d = 0; d < v.nd; ++d)
    if (v.kind[d] == DimKind::part) has_part = true;
  if (!has_part) s.push_back(1);
  for (int d = 0; d < v.nd; ++d)
    if (v.kind[d] != DimKind::block) s.push_back(v.size[d]);
  Lowered l = lower_onchip(like, Ctx{op, loc}, "data");
  Tensor t = new_tile(s, dtype, BufferKind::sbuf, std::string(op) + "_result", loc, l.ap.start_part);
  return has_part ? t : t[0];
}

// --- loops ----------------------------------------------------------------------------------

uint64_t TracerImpl::loop_enter(int64_t trip, bool sequential, const Loc& loc) {
  ++events_;
  LoopFrame f;
  f.id = next_frame_++;
  f.trip = trip;
  f.sequential = sequential;
  f.loc = loc;
  loops_.push_back(std::move(f));
  return loops_.back().id;
}

void TracerImpl::loop_iter(uint64_t frame, int64_t i) {
  if (!loops_.empty() && loops_.back().id == frame) loops_.back().iter = i;
}

void TracerImpl::loop_exit(uint64_t frame) noexcept {
  auto it = std::find_if(loops_.begin(), loops_.end(), [&](const LoopFrame& f) { return f.id == frame; });
  if (it == loops_.end()) return;
  while (loops_.size() > static_cast<size_t>(it - loops_.begin())) {
    LoopFrame& f = loops_.back();
    std::string why;
    try {
      why = fmt::format("the loop at {} that allocated it has ended (err_local_variable_used_out_of_scope)",
                        where(f.loc));
    } catch (...) {
    }
    for (auto& site : f.sites)
      for (auto& r : site.second.rings)
        if (r && !(opts_.keep_referenced_tiles && hold_ring(*r))) release_ring(*r, why);
    loops_.pop_back();
  }
}

// --- lowering -------------------------------------------------------------------------------

namespace {

// The free dimensions of a view, added innermost first, each merged into the one before it when
// the two are contiguous: what an access pattern's sizes and strides (at most 4) hold.
struct FreeDims {
  int64_t size[kMaxDims], stride[kMaxDims];
  int n = 0;

  void add(int64_t sz, int64_t st) {
    if (sz == 1) return;
    if (n > 0 && stride[n - 1] * size[n - 1] == st) {
      size[n - 1] *= sz;
    } else {
      size[n] = sz;
      stride[n] = st;
      ++n;
    }
  }
  void check(const TracerImpl& tr, const Ctx& c, const char* param, const Tensor& t) const {
    if (n > 4)
      tr.fail(c.loc, fmt::format("{} ({}) needs {} free dimensions after merging the contiguous ones; an access "
                                 "pattern has at most 4",
                                 operand_str(c, param), t.str(), n));
  }
  // The operand lowered: an access pattern of these free dimensions over num_part partitions from
  // start_part (part_stride elements apart: HBM rows), its first element `offset` bytes in.
  Lowered lowered(ncore::isa::Buffer mem, Dtype dtype, int64_t start_part, int64_t num_part, int64_t part_stride,
                  uint64_t offset) const {
    Lowered l;
    ncore::isa::Ap& ap = l.ap;
    ap.mem = mem;
    ap.dtype = to_isa(dtype);
    ap.start_part = static_cast<uint32_t>(start_part);
    ap.num_part = static_cast<uint32_t>(num_part);
    ap.part_stride = static_cast<int32_t>(part_stride);
    ap.offset = offset;
    for (int i = 0; i < 4; ++i) {
      ap.size[i] = i < n ? static_cast<uint32_t>(size[i]) : 1;
      ap.stride[i] = i < n ? static_cast<int32_t>(stride[i]) : 0;
    }
    l.region = ncore::region_of(ap);
    return l;
  }
};

}  // namespace

void TracerImpl::check_alive(const Tensor& t, const Ctx& c, const char* param) const {
  if (!t.valid()) fail(c.loc, fmt::format("{} is an empty tensor", operand_str(c, param)));
  const Storage& st = *t.storage();
  if (st.trace != id_)
    fail(c.loc, fmt::format("{} is tensor `{}` of another trace", operand_str(c, param), st.name));
  if (!st.alive && !opts_.measure_last_uses)
    fail(c.loc, fmt::format("{} uses tile `{}` (allocated at {}) after its lifetime ended: {}", operand_str(c, param),
                            st.name, where(st.loc),
                            st.reused_by >= 0 ? fmt::format("its buffer was reused by iteration {} of the loop at {}",
                                                            st.reused_by, where(st.reused_in))
                                              : st.dead_reason));
}

Lowered TracerImpl::lower_onchip(const Tensor& t, const Ctx& c, const char* param) {
  check_alive(t, c, param);
  const Storage& st = *t.storage();
  note_use(st);
  const View& v = t.view();
  const int64_t esz = dtype_bytes(v.dtype);
  int64_t parts = 1;
  FreeDims f;
  for (int d = v.nd - 1; d >= 0; --d) {  // innermost first
    switch (v.kind[d]) {
      case DimKind::block:
        if (v.size[d] > 1)
          fail(c.loc, fmt::format("{} ({}) spans {} logical tiles on dimension {}; select one tile (t[m]) per "
                                  "instruction",
                                  operand_str(c, param), t.str(), v.size[d], d));
        break;
      case DimKind::part: parts = v.size[d]; break;
      case DimKind::free: f.add(v.size[d], v.stride[d]); break;
    }
  }
  f.check(*this, c, param, t);
  const int64_t ptile = mod_linear(st.par_tiles, v.block.data(), st.nblock);
  const int64_t ftile = mod_linear(st.free_tiles, v.block.data(), st.nblock);
  return f.lowered(st.kind == BufferKind::psum ? ncore::isa::Buffer::psum : ncore::isa::Buffer::sbuf, v.dtype,
                   st.part_base + ptile * st.tile_parts + v.part, parts, 0,
                   st.byte_base + static_cast<uint64_t>(ftile * st.tile_bytes + v.offset * esz));
}

Lowered TracerImpl::lower_hbm(const Tensor& t, const Ctx& c, const char* param) {
  check_alive(t, c, param);
  const Storage& st = *t.storage();
  const View& v = t.view();
  const int64_t esz = dtype_bytes(v.dtype);
  int64_t rows = 1, row_stride = 0;
  int first_free = 0;
  if (v.nd >= 1) {
    rows = v.size[0];
    row_stride = rows > 1 ? v.stride[0] : 0;
    first_free = 1;
  }
  FreeDims f;
  for (int d = v.nd - 1; d >= first_free; --d) f.add(v.size[d], v.stride[d]);
  f.check(*this, c, param, t);
  for (int i = 0; i < f.n; ++i)
    if (f.size[i] > INT32_MAX || f.stride[i] > INT32_MAX || f.stride[i] < INT32_MIN)
      fail(c.loc, fmt::format("{} ({}): a free dimension of {} elements with stride {} does not fit the access "
                              "pattern's 32-bit fields",
                              operand_str(c, param), t.str(), f.size[i], f.stride[i]));
  if (row_stride > INT32_MAX || row_stride < INT32_MIN)
    fail(c.loc, fmt::format("{} ({}): a row stride of {} elements does not fit the access pattern's 32-bit field",
                            operand_str(c, param), t.str(), row_stride));
  return f.lowered(ncore::isa::Buffer::hbm, v.dtype, 0, rows, row_stride,
                   st.hbm_addr + static_cast<uint64_t>(v.offset * esz));
}

// --- emission -------------------------------------------------------------------------------

unsigned TracerImpl::next_dma_queue() { return dma_count_++ % opts_.dma_queues_used; }

void TracerImpl::emit(unsigned stream, ncore::isa::Insn insn, const Loc& loc, const ncore::Access* acc, size_t n) {
  ++events_;
  try {
    ncore::validate_insn(insn, preset_, align_up(hbm_end_));
  } catch (const ncore::SimError& e) {
    fail(loc, e.what());
  }
  if (deferring_zeros_ && insn.opcode == ncore::isa::Opcode::memset && n == 1 &&
      acc[0].region.mem == ncore::isa::Buffer::psum) {
    drop_zeros_overlapping(acc[0].region.box);  // a new tile over those bytes: the old one is gone
    pending_zeros_.push_back({stream, insn, loc, acc[0]});
    return;
  }
  if (!pending_zeros_.empty()) settle_zeros(insn, acc, n);
  const bool multiply = insn.opcode == ncore::isa::Opcode::multiply_moving;
  for (size_t a = 0; a < n; ++a) {
    const ncore::Region& r = acc[a].region;
    // Reads of PSUM by anything but the multiply that accumulates close the groups they touch.
    if (r.mem == ncore::isa::Buffer::psum && !acc[a].write && !multiply)
      psum_groups_.erase(std::remove_if(psum_groups_.begin(), psum_groups_.end(),
                                        [&](const ncore::Box& g) { return g.overlaps(r.box); }),
                         psum_groups_.end());
    // A write to the stationary operand's bytes: the array no longer holds what SBUF does.
    if (acc[a].write && stationary_ok_ && ncore::regions_overlap(r, stationary_region_)) stationary_ok_ = false;
  }
  const uint32_t pos = sched_.add(stream, insn, loc_index(loc), acc, n);
  if (opts_.record_order) order_.emplace_back(stream, pos);
  if ((++emitted_ & 4095) == 0) poll();
}

void TracerImpl::settle_zeros(const ncore::isa::Insn& insn, const ncore::Access* acc, size_t n) {
  const bool overwrite = insn.opcode == ncore::isa::Opcode::multiply_moving && !insn.acc;
  std::vector<PendingZero> now;
  for (size_t a = 0; a < n; ++a) {
    const ncore::Region& r = acc[a].region;
    if (r.mem != ncore::isa::Buffer::psum) continue;
    for (size_t k = 0; k < pending_zeros_.size();) {
      const ncore::Box& z = pending_zeros_[k].access.region.box;
      if (!z.overlaps(r.box)) {
        ++k;
        continue;
      }
      const bool covers = overwrite && acc[a].write && r.dense && r.box.p_lo <= z.p_lo && z.p_hi <= r.box.p_hi &&
                          r.box.lo <= z.lo && z.hi <= r.box.hi;
      if (covers)
        ++zeros_elided_;
      else
        now.push_back(pending_zeros_[k]);
      pending_zeros_.erase(pending_zeros_.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (PendingZero& z : now) emit(z.stream, z.insn, z.loc, &z.access, 1);
}

void TracerImpl::drop_zeros_overlapping(const ncore::Box& box) noexcept {
  const size_t before = pending_zeros_.size();
  pending_zeros_.erase(std::remove_if(pending_zeros_.begin(), pending_zeros_.end(),
                                      [&](const PendingZero& z) { return z.access.region.box.overlaps(box); }),
                       pending_zeros_.end());
  zeros_elided_ += before - pending_zeros_.size();
}

void TracerImpl::drop_zeros(uint64_t lo, uint64_t hi) noexcept {
  const size_t before = pending_zeros_.size();
  pending_zeros_.erase(std::remove_if(pending_zeros_.begin(), pending_zeros_.end(),
                                      [&](const PendingZero& z) {
                                        const ncore::Box& b = z.access.region.box;
                                        return static_cast<uint64_t>(b.lo) < hi && lo < static_cast<uint64_t>(b.hi);
                                      }),
                       pending_zeros_.end());
  zeros_elided_ += before - pending_zeros_.size();  // their tiles are gone, never used
}

void TracerImpl::poll() {
  ncore::interrupt::check();
  if (opts_.poll) opts_.poll();
  if (!opts_.progress) return;
  if (next_progress_ == 0) next_progress_ = opts_.progress_seconds;
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - started_).count();
  if (s >= next_progress_) {
    opts_.progress(emitted_, s);
    next_progress_ = s + opts_.progress_seconds;
  }
}

// --- tensor engine --------------------------------------------------------------------------

bool TracerImpl::psum_accumulate(const ncore::Box& dst, std::optional<bool> accumulate, const Ctx& c,
                                 const Tensor& t) {
  auto same = [&](const ncore::Box& g) {
    return g.p_lo == dst.p_lo && g.p_hi == dst.p_hi && g.lo == dst.lo && g.hi == dst.hi;
  };
  auto exact = std::find_if(psum_groups_.begin(), psum_groups_.end(), same);
  if (!accumulate) {
    if (exact != psum_groups_.end()) return true;
    for (const auto& g : psum_groups_)
      if (g.overlaps(dst))
        fail(c.loc, fmt::format("cannot infer accumulate for '{}' into {}: its PSUM region (partitions [{}, {}), "
                                "bytes [{}, {})) overlaps, without being the same region, the accumulation group of "
                                "an earlier matmul (partitions [{}, {}), bytes [{}, {})) that has not been read; pass "
                                "accumulate=true or false explicitly",
                                c.op, t.str(), dst.p_lo, dst.p_hi, dst.lo, dst.hi, g.p_lo, g.p_hi, g.lo, g.hi));
    psum_groups_.push_back(dst);
    return false;
  }
  if (exact == psum_groups_.end()) {
    psum_groups_.erase(std::remove_if(psum_groups_.begin(), psum_groups_.end(),
                                      [&](const ncore::Box& g) { return g.overlaps(dst); }),
                       psum_groups_.end());
    psum_groups_.push_back(dst);
  }
  return *accumulate;
}

namespace {
bool same_ap(const ncore::isa::Ap& a, const ncore::isa::Ap& b) {
  return a.mem == b.mem && a.dtype == b.dtype && a.start_part == b.start_part && a.num_part == b.num_part &&
         a.part_stride == b.part_stride && a.offset == b.offset && a.size == b.size && a.stride == b.stride;
}
}  // namespace

bool TracerImpl::reuse_stationary(const ncore::isa::Ap& ap) {
  if (!opts_.reuse_stationary || !stationary_ok_ || !same_ap(ap, stationary_)) return false;
  ++stationary_reuses_;
  return true;
}

void TracerImpl::note_stationary(const ncore::isa::Ap& ap, const ncore::Region& r) {
  stationary_ok_ = true;
  stationary_ = ap;
  stationary_region_ = r;
}

Tensor TracerImpl::identity(ncore::isa::Dtype dt, const Loc& loc) {
  const bool f32 = ncore::isa::is_fp32_class(dt);  // a tfloat32 transpose pairs with float32 too
  Tensor& id = identity_[f32 ? 1 : 0];
  if (id.valid()) return id;
  const int64_t p = static_cast<int64_t>(preset_.num_partitions);
  const Dtype d = f32 ? Dtype::float32 : Dtype::bfloat16;
  const std::string name = f32 ? "identity_fp32" : "identity_bf16";
  std::vector<float> ones(static_cast<size_t>(p * p), 0.0f);
  for (int64_t i = 0; i < p; ++i) ones[static_cast<size_t>(i * p + i)] = 1.0f;
  const Tensor h = constant(name, Shape{p, p}, d, ones, loc);
  id = new_tile(Shape{p, p}, d, BufferKind::sbuf, name, loc, 0, /*persistent=*/true);
  nisa::dma_copy(id, h, loc);
  return id;
}

Tensor TracerImpl::constant(const std::string& name, const Shape& shape, Dtype dtype, const std::vector<float>& values,
                            const Loc& loc) {
  if (!is_supported(dtype))
    fail(loc, fmt::format("dtype {} of constant `{}` is not supported by this model (supported: {})", to_string(dtype), name,
                          supported_dtypes()));
  if (static_cast<int64_t>(values.size()) != shape.elements())
    fail(loc, fmt::format("constant `{}` of shape {} needs {} values, got {}", name, shape.str(), shape.elements(),
                          values.size()));
  const ncore::isa::Dtype dt = to_isa(dtype);
  const size_t esz = static_cast<size_t>(dtype_bytes(dtype));
  std::vector<uint8_t> bytes(values.size() * esz);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t b = ncore::num::from_float(values[i], dt);
    std::memcpy(&bytes[i * esz], &b, esz);  // little-endian: the element's low bytes
  }
  for (const auto& [k, t] : constants_)
    if (hbm_[k].dtype == dt && hbm_[k].shape == shape.vec() && hbm_[k].init == bytes) return t;
  const Tensor h = new_hbm(name, shape, dtype, ncore::TensorRole::constant, loc);
  hbm_.back().init = std::move(bytes);
  constants_.emplace_back(hbm_.size() - 1, h);
  return h;
}

void TracerImpl::defer_error(const Loc& loc, const std::string& msg) noexcept {
  try {
    if (deferred_.empty()) deferred_ = fmt::format("{}: {}", where(loc), msg);
  } catch (...) {
  }
}

void TracerImpl::throw_deferred() {
  if (deferred_.empty()) return;
  std::string m;
  m.swap(deferred_);
  throw ncore::KernelError(m);
}

ncore::Program TracerImpl::finish() {
  throw_deferred();
  ncore::Program p;
  p.kernel = kernel_;
  p.preset = preset_.name;
  p.streams = ncore::make_streams(static_cast<unsigned>(preset_.dma_queues));
  auto s = sched_.take();
  for (size_t i = 0; i < p.streams.size() && i < s.size(); ++i) p.streams[i].insns = std::move(s[i]);
  p.hbm_tensors = hbm_;
  p.hbm_bytes = align_up(hbm_end_);
  p.locations = locs_;
  // Every output is written by some instruction (NKI: err_tensor_output_not_written_to).
  for (size_t i = 0; i < hbm_.size(); ++i) {
    const ncore::HbmTensor& t = hbm_[i];
    if (t.role != ncore::TensorRole::output || p.writes_hbm(t.offset, t.bytes)) continue;
    fail(hbm_locs_[i], fmt::format("the kernel's output `{}` {}, allocated here, is never written to "
                                   "(err_tensor_output_not_written_to)",
                                   t.name, shape_str(t.shape.data(), t.shape.size())));
  }
  try {
    ncore::validate_program(p, preset_);
  } catch (const ncore::SimError& e) {
    throw ncore::KernelError(fmt::format("internal error: the traced Program of kernel '{}' is invalid: {}", kernel_,
                                         e.what()));
  }
  if (opts_.stats) {
    const auto& ss = sched_.stats();
    TraceStats& t = *opts_.stats;
    t.instructions = ss.instructions;
    t.sem_waits = ss.sem_waits;
    t.waits = ss.waits;
    t.conflicts = ss.conflicts;
    t.implied = ss.implied;
    t.peak_records = ss.peak_records;
    t.stationary_reuses = stationary_reuses_;
    t.psum_zeros_elided = zeros_elided_ + pending_zeros_.size();  // the rest: never touched
    t.order = std::move(order_);
    t.last_uses = last_use_;
    t.last_uses.resize(static_cast<size_t>(onchip_made_), 0);
  }
  return p;
}

std::vector<float> TracerImpl::random_uniform(size_t n, int bits) {
  std::vector<float> v(n);
  for (float& x : v) {
    uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = std::ldexp(static_cast<float>(z >> (64 - bits)), -bits);
  }
  return v;
}

void TracerImpl::require_on_chip(const Tensor& t, const Ctx& c, const char* param) const {
  if (!t.on_chip())
    fail(c.loc, fmt::format("Expected operand '{}' of '{}' to be in address space 'sbuf' or 'psum', but got a tile in "
                            "'{}' instead.",
                            param, c.op, to_string(t.buffer())));
}

Shape tile_shape(const Tensor& t) {
  const View& v = t.view();
  Shape s;
  bool part = false;
  for (int d = 0; d < v.nd; ++d) part |= v.kind[d] == DimKind::part;
  if (!part) s.push_back(1);
  for (int d = 0; d < v.nd; ++d)
    if (v.kind[d] != DimKind::block) s.push_back(v.size[d]);
  return s;
}

std::string tile_str(const Tensor& t) { return t.name() + tile_shape(t).str(); }

}  // namespace detail

// --- public entry points ----------------------------------------------------------------------

Tensor Tracer::input(const std::string& name, const Shape& shape, Dtype dtype, Loc loc) {
  return impl_.new_hbm(name, shape, dtype, ncore::TensorRole::input, loc);
}

void Tracer::output(const Tensor& t, Loc loc) { impl_.mark_output(t, loc); }

const ncore::Preset& Tracer::preset() const { return impl_.preset(); }

ncore::Program trace(const std::string& kernel_name, const ncore::Preset& preset,
                     const std::function<void(Tracer&)>& body, const TraceOptions& options) {
  if (detail::g_current) throw ncore::KernelError("trace() called while another kernel is being traced");
  detail::TracerImpl impl(kernel_name, preset, options);
  struct Guard {
    explicit Guard(detail::TracerImpl* t) { detail::g_current = t; }
    ~Guard() { detail::g_current = nullptr; }
  } guard(&impl);
  Tracer t(impl);
  body(t);
  return impl.finish();
}

uint64_t lifetime_events() {
  const detail::TracerImpl* t = detail::current();
  return t ? t->lifetime_events() : 0;
}

uint64_t trace_events() {
  const detail::TracerImpl* t = detail::current();
  return t ? t->trace_events() : 0;
}

}  // namespace nki
