// Byte ranges within an on-chip buffer partition (SBUF or PSUM), for the kernel tracer's
// automatic tile allocation. A tile occupies the same byte range in every partition it uses;
// the allocator hands out ranges that hold on all partitions, so a range is free only if it
// is free everywhere.
//
// Two kinds of occupant: automatic allocations (allocate/release: first fit, aligned, never
// overlapping each other) and explicit regions placed by the kernel itself with
// ncc::sbuf::mod_alloc (reserve: exactly where asked, kept to the end, allowed to overlap
// each other but never handed out again).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace ncore {

class SbufAllocator {
 public:
  using Range = std::pair<uint64_t, uint64_t>;  // [first, second)

  explicit SbufAllocator(uint64_t capacity, uint64_t align = 64);

  // First fit at an `align`-byte boundary; nullopt when no free range is large enough.
  std::optional<uint64_t> allocate(uint64_t bytes);
  // Returns an automatic allocation made at `offset`; throws std::logic_error if there is none.
  void release(uint64_t offset);
  // Gives back the tail of the automatic allocation at `offset`, keeping its first `bytes`
  // (at most its size); throws std::logic_error if there is none.
  void shrink(uint64_t offset, uint64_t bytes);
  // Reserves [lo, hi) for an explicit region. Returns an automatic allocation it overlaps,
  // if any (the region is reserved regardless; the caller decides whether that is an error).
  std::optional<Range> reserve(uint64_t lo, uint64_t hi);

  uint64_t capacity() const { return capacity_; }
  std::vector<Range> free_ranges() const;  // ascending
  uint64_t largest_free() const;
  uint64_t total_free() const;
  const std::map<uint64_t, uint64_t>& allocations() const { return used_; }  // offset -> end

 private:
  uint64_t capacity_, align_;
  std::map<uint64_t, uint64_t> used_;      // automatic: offset -> end
  std::map<uint64_t, uint64_t> reserved_;  // explicit, merged: first -> end
};

}  // namespace ncore
