// The vector-add kernels of the seed handouts (003 part 1, 002 step 3), in the NKI-like C++
// API. Each takes its inputs as HBM tensors of shape (n,) and returns the HBM result.
#pragma once

#include <cstdint>

#include "nki/tensor.hpp"

namespace kernels {

// n <= 128: one (n, 1) tile per input, tensor_scalar add with b as the per-partition operand.
nki::Tensor vector_add_naive(const nki::Tensor& a_vec, const nki::Tensor& b_vec);
// Chunks of ROW_CHUNK rows (ROW_CHUNK <= 128), tensor_scalar add per chunk.
nki::Tensor vector_add_tiled(const nki::Tensor& a_vec, const nki::Tensor& b_vec, int64_t ROW_CHUNK);
// The vector as a (128, n/128) matrix, FREE_DIM columns per tile, tensor_tensor add.
nki::Tensor vector_add_stream(const nki::Tensor& a_vec, const nki::Tensor& b_vec, int64_t FREE_DIM);
// Tiles of (128, 1000) placed by mod_alloc: 4 physical tiles each for a, b and the result at
// byte offsets 0, 16000 and 32000. The result has shape (n, 1).
nki::Tensor vector_add_direct_allocation(const nki::Tensor& a_vec, const nki::Tensor& b_vec);
// The same with all three tensors at offset 0: they overwrite each other.
nki::Tensor vector_add_direct_allocation_bad(const nki::Tensor& a_vec, const nki::Tensor& b_vec);

}  // namespace kernels
