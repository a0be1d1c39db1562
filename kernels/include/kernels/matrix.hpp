// The tensor-engine kernels of the seed handouts (003): the matrix transpose of part 1 step 3
// and the tiled matrix multiplication nki_matmul_tiled_ of part 2, in the NKI-like C++ API.
#pragma once

#include <string>

#include "nki/tensor.hpp"

namespace kernels {

// a_tensor [M, N] in HBM -> its transpose [N, M] in HBM, M and N multiples of 128. The only
// compute instruction is nisa::nc_transpose (plus tensor_copy out of PSUM and DMA). See
// matrix.cpp for the structure (row panels, PSUM rotation, wide stores).
nki::Tensor matrix_transpose(const nki::Tensor& a_tensor);

struct Kernel;
// The declaration of a transpose kernel (kernel.hpp): input a_tensor (n, m), output out (m, n),
// the exact reference; `fn` is its body.
Kernel transpose_kernel(std::string name, std::string function, std::string doc,
                        nki::Tensor (*fn)(const nki::Tensor&));

// result [M, N] = lhsT[K, M].T @ rhs[K, N], tiles of TILE_M = 128, TILE_K = 128, TILE_N = 512
// accumulated in PSUM, as the handout's nki_matmul_tiled_; K and M multiples of 128, N a
// multiple of 512. The result has lhsT's dtype (cast once when copied out of PSUM).
nki::Tensor matmul_tiled(const nki::Tensor& lhsT, const nki::Tensor& rhs);

// The same product written to keep the tensor engine busy (in the spirit of NKI's
// nki_matmul_fully_optimized_): blocks of rhs [K, BN] and lhsT [K, BM] are loaded into the SBUF
// with one wide DMA per 128 rows and reused by every output tile of the block, the loads of the
// next block overlapping the multiplies of this one, and each row of output tiles is stored with
// one DMA. Same constraints and result as matmul_tiled (bit for bit: the same fp32 sums in the
// same order); the SBUF must hold one rhs block of K x 512 elements at least.
nki::Tensor matmul_blocked(const nki::Tensor& lhsT, const nki::Tensor& rhs);

}  // namespace kernels
