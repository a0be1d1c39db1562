// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0; C order).
//
// Element types: '<f4' (float32), '<f2' (float16) and '<u2' (raw 16-bit patterns, used for
// bfloat16, which NumPy has no native type for). Anything else, or a malformed file, is an
// InputError that says what was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/pipeline.hpp"

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

// A .npy array as an input of dtype `dt`: float32 rounded to the dtype, float16 for fp16 kernels
// (widened exactly for fp32), '<u2' bit patterns for bf16 kernels. `what` names it in messages.
run::Array npy_to_array(const NpyArray& a, isa::Dtype dt, const std::string& what);
// An output as a .npy array: fp32 and fp16 as they are, bf16 widened exactly to float32 (NumPy
// has no bfloat16).
NpyArray array_to_npy(const run::Array& a);

}  // namespace ncore::sim
