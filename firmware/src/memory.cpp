// Zeroed host memory for HBM; see memory.hpp.
#include "ncore/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "ncore/error.hpp"

namespace ncore {
namespace {

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}

std::string human(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1u << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1u << 20));
  return fmt::format("{} bytes", bytes);
}

}  // namespace

ZeroedBytes::ZeroedBytes(uint64_t size, const std::string& what) : size_(size) {
  if (size == 0) return;
  const uint64_t p = page_size();
  mapped_ = (size + p - 1) / p * p;
  // MAP_NORESERVE: the pages are committed as they are touched, not all at once.
  void* m = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    mapped_ = 0;
    size_ = 0;
    throw InputError(fmt::format("{} of {} bytes ({}) cannot be reserved on this host: {}", what, size, human(size),
                                 std::strerror(errno)));
  }
  data_ = static_cast<uint8_t*>(m);
}

ZeroedBytes::~ZeroedBytes() {
  if (mapped_) munmap(data_, mapped_);
}

ZeroedBytes::ZeroedBytes(ZeroedBytes&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), mapped_(std::exchange(o.mapped_, 0)) {}

ZeroedBytes& ZeroedBytes::operator=(ZeroedBytes&& o) noexcept {
  if (this != &o) {
    if (mapped_) munmap(data_, mapped_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

void copy_into_zeroed(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t step = page_size();
  for (uint64_t at = 0; at < n; at += step) {
    const uint64_t len = std::min(step, n - at);
    const uint8_t* s = src + at;
    bool zero = true;
    for (uint64_t i = 0; i < len && zero; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, s + i, std::min<uint64_t>(8, len - i));
      zero = w == 0;
    }
    if (!zero) std::memcpy(dst + at, s, len);
  }
}

}  // namespace ncore
