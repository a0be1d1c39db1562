// The matrix transpose one 128 x 128 tile at a time, as a first version of the handout's transpose
// is written: per tile a load, an nc_transpose into PSUM, a copy out of PSUM and a store, so the
// kernel issues one DMA per tile each way (512 B per partition for fp32, far below the 2-4 KiB
// the DMA guide asks for: every transfer is dominated by its fixed cost). `transpose`
// (matrix.cpp) is the same transpose with wide transfers.
//
//   for m, n over the 128 x 128 tiles of a [M, N]:
//     tile = dma_copy(a[m, n]);  t = nc_transpose(tile);  out[n, m] = dma_copy(tensor_copy(t))
#include <fmt/format.h>

#include "kernels/kernel.hpp"
#include "kernels/matrix.hpp"
#include "nki/nki.hpp"

namespace kernels {
namespace {

namespace nl = nki::nl;
namespace nisa = nki::nisa;

nki::Tensor matrix_transpose_tiled(const nki::Tensor& a_tensor) {
  nki::kernel_check(a_tensor.ndim() == 2,
                    fmt::format("matrix_transpose_tiled takes a 2-D matrix, got {} of {} dimensions", a_tensor.str(),
                                a_tensor.ndim()));
  const int64_t M = a_tensor.shape()[0], N = a_tensor.shape()[1];
  const int64_t T = nl::tile_size::pmax;  // 128
  nki::kernel_check(M % T == 0 && N % T == 0,
                    fmt::format("Matrix dimensions not divisible by tile dimension! ({} x {}, tile dimension {})", M,
                                N, T));
  nki::Tensor out = nl::ndarray({N, M}, a_tensor.dtype(), nl::shared_hbm, "out");
  for (int64_t m : nl::affine_range(M / T)) {
    for (int64_t n : nl::affine_range(N / T)) {
      nki::Tensor tile = nl::ndarray({T, T}, a_tensor.dtype(), nl::sbuf, "tile");
      nisa::dma_copy(tile, a_tensor(nl::ds(m * T, T), nl::ds(n * T, T)));
      nki::Tensor t_psum = nl::ndarray({T, T}, nl::float32, nl::psum, "t_psum");
      nisa::nc_transpose(t_psum, tile);
      nki::Tensor t_sbuf = nl::ndarray({T, T}, a_tensor.dtype(), nl::sbuf, "t_sbuf");
      nisa::tensor_copy(t_sbuf, t_psum);
      nisa::dma_copy(out(nl::ds(n * T, T), nl::ds(m * T, T)), t_sbuf);
    }
  }
  return out;
}

const Register reg{transpose_kernel(
    "transpose_tiled", "matrix_transpose_tiled",
    "matrix_transpose_tiled: the transpose of `transpose` with one load, one nc_transpose, one copy out of PSUM "
    "and one store per 128 x 128 tile (one DMA per tile each way); n and m multiples of 128 (m = n when not "
    "given); exact for finite inputs (-0 becomes +0)",
    matrix_transpose_tiled)};

}  // namespace
}  // namespace kernels
