// On-chip byte-range allocator; see allocator.hpp.
#include "ncore/allocator.hpp"

#include <algorithm>
#include <stdexcept>

namespace ncore {

SbufAllocator::SbufAllocator(uint64_t capacity, uint64_t align) : capacity_(capacity), align_(align ? align : 1) {}

std::vector<SbufAllocator::Range> SbufAllocator::free_ranges() const {
  // Walk both occupant maps in address order; both are sorted and each is non-overlapping.
  std::vector<Range> busy;
  busy.reserve(used_.size() + reserved_.size());
  for (const auto& u : used_) busy.emplace_back(u.first, u.second);
  for (const auto& r : reserved_) busy.emplace_back(r.first, r.second);
  std::sort(busy.begin(), busy.end());
  std::vector<Range> out;
  uint64_t at = 0;
  for (const auto& b : busy) {
    if (b.first > at) out.emplace_back(at, std::min(b.first, capacity_));
    at = std::max(at, b.second);
    if (at >= capacity_) break;
  }
  if (at < capacity_) out.emplace_back(at, capacity_);
  out.erase(std::remove_if(out.begin(), out.end(), [](const Range& r) { return r.first >= r.second; }), out.end());
  return out;
}

std::optional<uint64_t> SbufAllocator::allocate(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  for (const auto& f : free_ranges()) {
    const uint64_t start = (f.first + align_ - 1) / align_ * align_;
    if (start < f.second && f.second - start >= bytes) {
      used_[start] = start + bytes;
      return start;
    }
  }
  return std::nullopt;
}

void SbufAllocator::release(uint64_t offset) {
  auto it = used_.find(offset);
  if (it == used_.end()) throw std::logic_error("SbufAllocator::release: no allocation at this offset");
  used_.erase(it);
}

void SbufAllocator::shrink(uint64_t offset, uint64_t bytes) {
  auto it = used_.find(offset);
  if (it == used_.end()) throw std::logic_error("SbufAllocator::shrink: no allocation at this offset");
  it->second = std::min(it->second, offset + std::max<uint64_t>(bytes, 1));
}

std::optional<SbufAllocator::Range> SbufAllocator::reserve(uint64_t lo, uint64_t hi) {
  std::optional<Range> clash;
  if (lo >= hi) return clash;
  for (const auto& u : used_)
    if (u.first < hi && lo < u.second) {
      clash = Range(u.first, u.second);
      break;
    }
  // Merge with every reserved range it touches.
  auto it = reserved_.upper_bound(lo);
  if (it != reserved_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= lo) it = prev;
  }
  while (it != reserved_.end() && it->first <= hi) {
    lo = std::min(lo, it->first);
    hi = std::max(hi, it->second);
    it = reserved_.erase(it);
  }
  reserved_[lo] = hi;
  return clash;
}

uint64_t SbufAllocator::largest_free() const {
  uint64_t m = 0;
  for (const auto& f : free_ranges()) m = std::max(m, f.second - f.first);
  return m;
}

uint64_t SbufAllocator::total_free() const {
  uint64_t t = 0;
  for (const auto& f : free_ranges()) t += f.second - f.first;
  return t;
}

}  // namespace ncore
