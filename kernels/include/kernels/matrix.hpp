// The tensor-engine kernels of the seed handouts (003): the matrix transpose of part 1 step 3
// and the tiled matrix multiplication nki_matmul_tiled_ of part 2, in the NKI-like C++ API.
#pragma once

#include "nki/tensor.hpp"

namespace kernels {

// a_tensor [M, N] in HBM -> its transpose [N, M] in HBM, M and N multiples of 128. The only
// compute instruction is nisa::nc_transpose (plus tensor_copy out of PSUM and DMA). See
// matrix.cpp for the structure (row panels, PSUM rotation, wide stores).
nki::Tensor matrix_transpose(const nki::Tensor& a_tensor);

// result [M, N] = lhsT[K, M].T @ rhs[K, N], tiles of TILE_M = 128, TILE_K = 128, TILE_N = 512
// accumulated in PSUM, as the handout's nki_matmul_tiled_; K and M multiples of 128, N a
// multiple of 512. The result has lhsT's dtype (cast once when copied out of PSUM).
nki::Tensor matmul_tiled(const nki::Tensor& lhsT, const nki::Tensor& rhs);

}  // namespace kernels
