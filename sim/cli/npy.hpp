// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0; C order).
//
// Element types: '<f4' (float32), '<f2' (float16), the integers '|i1', '|u1', '<i2', '<u2',
// '<i4', '<u4' and '|b1' (bool); '<u2' also carries raw bfloat16 patterns (NumPy has no
// bfloat16) for a bf16 tensor. Anything else, or a malformed file, is an InputError that says
// what was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/pipeline.hpp"

namespace ncore::sim {

struct NpyArray {
  std::string descr;             // '<f4', '<f2', '|i1', '|u1', '|b1', '<i2', '<u2', '<i4' or '<u4'
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;     // little-endian elements, C order
  uint64_t elements() const;
};

// Reads a .npy file; `what` names it in messages (the option that gave it: "--a a.npy"; default the path).
NpyArray npy_load(const std::string& path, const std::string& what = "");
void npy_save(const std::string& path, const NpyArray& a);
// Header+data of a .npy file in memory (for tests).
NpyArray npy_parse(const std::vector<uint8_t>& bytes, const std::string& what);
std::vector<uint8_t> npy_serialize(const NpyArray& a);

// A .npy array as an input of dtype `dt`: float32 rounded to the dtype, float16 for fp16 kernels
// (widened exactly for fp32), '<u2' bit patterns for bf16 kernels, an integer or bool array as its
// own bytes for a tensor of its type, else each value converted (the engines' rounding). `what`
// names it in messages.
run::Array npy_to_array(const NpyArray& a, isa::Dtype dt, const std::string& what);
// An output as a .npy array: fp32, fp16 and the integers as they are, bf16 widened exactly to
// float32 (NumPy has no bfloat16).
NpyArray array_to_npy(const run::Array& a);

}  // namespace ncore::sim
