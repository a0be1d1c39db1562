// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0; C order).
//
// Element types: '<f4' (float32), '<f2' (float16) and '<u2' (raw 16-bit patterns, used for
// bfloat16, which NumPy has no native type for). Anything else, or a malformed file, is an
// InputError that says what was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncore::sim {

struct NpyArray {
  std::string descr;             // '<f4', '<f2' or '<u2'
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;     // little-endian elements, C order
  uint64_t elements() const;
};

NpyArray npy_load(const std::string& path);
void npy_save(const std::string& path, const NpyArray& a);
// Header+data of a .npy file in memory (for tests).
NpyArray npy_parse(const std::vector<uint8_t>& bytes, const std::string& what);
std::vector<uint8_t> npy_serialize(const NpyArray& a);

}  // namespace ncore::sim
