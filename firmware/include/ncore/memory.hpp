// HBM contents on the host: a zeroed byte buffer whose pages the operating system provides on
// first touch (an anonymous private mapping). A Program's HBM costs the host only the pages a run
// touches, so an image whose header claims a huge HBM (a flipped bit) does not allocate and zero
// gigabytes before the run, and a large kernel's untouched space costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ncore {

class ZeroedBytes {
 public:
  ZeroedBytes() = default;
  // `size` zero bytes; throws InputError naming `what` and the size when the host refuses them.
  explicit ZeroedBytes(uint64_t size, const std::string& what = "HBM");
  ~ZeroedBytes();
  ZeroedBytes(ZeroedBytes&& o) noexcept;
  ZeroedBytes& operator=(ZeroedBytes&& o) noexcept;
  ZeroedBytes(const ZeroedBytes&) = delete;
  ZeroedBytes& operator=(const ZeroedBytes&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  uint8_t* begin() { return data_; }
  uint8_t* end() { return data_ + size_; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }

 private:
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mapped_ = 0;  // bytes mapped (size_ rounded up; 0: nothing mapped)
};

// A view of bytes another object owns (HBM passed to a run).
struct ByteSpan {
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

// Copies `n` bytes from `src` to `dst`, a zeroed buffer, page by page, skipping the pages of `src`
// that are all zero: reading an untouched page of a ZeroedBytes maps no memory, so copying a
// mostly empty HBM costs the host only the pages that hold data.
void copy_into_zeroed(uint8_t* dst, const uint8_t* src, uint64_t n);

}  // namespace ncore
