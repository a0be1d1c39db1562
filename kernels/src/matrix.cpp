// The tensor-engine kernels of handout 003, written like their NKI Python (a[m*T:(m+1)*T]
// becomes a(nl::ds(m*T, T))). See matrix.hpp.
//
// matrix_transpose. The tensor engine transposes one block of at most 128 x 128 per
// instruction (into PSUM), so the kernel is bound by moving the matrix in and out: 2 x M x N
// elements through the DMA engines, which want transfers of 2-4 KiB or more per partition.
// It therefore works on groups of ROWS row blocks x COLS column blocks of a:
//
//   a [M, N]                                   out [N, M]
//   +------+------+-- ...                      +--------------------+-- ...
//   | panel r=0: [128, COLS*128]  (one DMA)    | row block j: [128, ROWS*128] (one DMA)
//   | panel r=1                                |   = nc_transpose of block (r, j) of every
//   | ...  ROWS panels                         |     panel r, side by side in PSUM
//   +------+------+--                          +--------------------+--
//
// - Loads: each of the ROWS panels of a group is one dma_copy of 128 rows x COLS*128
//   contiguous elements (COLS up to 8 for fp32, 16 for 16-bit types: 4 KiB per partition).
// - Transposes: for each of the COLS block columns, ROWS nc_transpose into one PSUM tile of
//   ceil(ROWS/4) banks (4 blocks of 128 fp32 per 2 KiB bank), so that one output row block
//   of ROWS*128 columns builds up side by side; the PSUM tiles rotate over 4 ring slots.
// - Copy out: one tensor_copy per bank from PSUM to an SBUF row tile (casting back to the
//   dtype, exactly), then one dma_copy of 128 rows x ROWS*128 contiguous elements (up to
//   4 KiB per partition for fp32) into out.
// - Overlap: the loop over groups is skewed by one (software pipelining): iteration i issues
//   the loads of group i and then the transposes, copies and stores of group i-1, so the DMA
//   queues, which run in order, see the next group's loads before this group's stores and
//   the tensor engine always has a loaded group to work on. Panels rotate over 4 SBUF slots.
//
// matmul_tiled is the handout's nki_matmul_tiled_ as written, returning its result.
//
// matmul_blocked computes the same tiles in the same order of k, but moves each input element
// from HBM once per block instead of once per output tile (matmul_tiled is bound by its DMA
// traffic: a 128 x 128 x 512 multiply takes 512 tensor-engine cycles, its two input tiles
// about twice that at the HBM bandwidth of one core):
//
//   for each column block nb of BN columns (BN: as wide as the SBUF allows, up to N)
//     for each row block mb of BM rows
//       rhs_blk [KT][128, BN]    (first row block only) one dma_copy per 128 rows of rhs (x2)
//       lhs_blk [KT][128, BM]    one dma_copy per 128 rows of lhsT, interleaved   (x2)
//       for each 128-row tile mt of the block
//         for each 512-column tile nt:  psum = sum over k of nc_matmul(lhs_blk[k][:, mt],
//                                       rhs_blk[k][:, nt]);  copy out into out_row[:, nt]
//         one dma_copy of out_row [128, BN] into result
//
// Each block tile and the output row have two buffers, used in turn, so the loads of the next
// block run under the multiplies of this one (the scheduler's WAR waits keep a buffer until its
// last reader is done).
#include "kernels/matrix.hpp"
#include "kernels/kernel.hpp"
#include "reference/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "nki/nki.hpp"

namespace kernels {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;

namespace {

// The largest divisor of n that is at most cap.
int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// K, M, N of lhsT [K, M] and rhs [K, N], after the handout's checks: matrices that multiply, K and
// M multiples of 128, N of 512.
std::array<int64_t, 3> matmul_dims(const Tensor& lhsT, const Tensor& rhs) {
  nki::kernel_check(lhsT.ndim() == 2 && rhs.ndim() == 2,
                    fmt::format("lhsT and rhs must be 2-D matrices, got {} and {}", lhsT.str(), rhs.str()));
  nki::kernel_check(lhsT.shape()[0] == rhs.shape()[0],
                    fmt::format("lhsT and rhs must have the same contraction dimension (lhsT {}, rhs {})",
                                lhsT.shape().str(), rhs.shape().str()));
  const int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
  const int64_t TILE_M = nl::tile_size::gemm_stationary_fmax, TILE_K = nl::tile_size::pmax,
                TILE_N = nl::tile_size::gemm_moving_fmax;
  nki::kernel_check(K % TILE_K == 0, fmt::format("K = {} is not a multiple of TILE_K = {}", K, TILE_K));
  nki::kernel_check(M % TILE_M == 0, fmt::format("M = {} is not a multiple of TILE_M = {}", M, TILE_M));
  nki::kernel_check(N % TILE_N == 0, fmt::format("N = {} is not a multiple of TILE_N = {}", N, TILE_N));
  return {K, M, N};
}

}  // namespace

Tensor matrix_transpose(const Tensor& a_tensor) {
  nki::kernel_check(a_tensor.ndim() == 2,
                    fmt::format("matrix_transpose takes a 2-D matrix, got {} of {} dimensions", a_tensor.str(),
                                a_tensor.ndim()));
  const int64_t M = a_tensor.shape()[0], N = a_tensor.shape()[1];
  const nki::Dtype dtype = a_tensor.dtype();
  Tensor out = nl::ndarray({N, M}, dtype, nl::shared_hbm, "out");
  const int64_t tile_dim = nl::tile_size::pmax;  // 128

  nki::kernel_check(M % tile_dim == 0 && N % tile_dim == 0,
                    fmt::format("Matrix dimensions not divisible by tile dimension! ({} x {}, tile dimension {})", M,
                                N, tile_dim));

  // Group shape: ROWS row blocks (the width of an output row tile) x COLS column blocks (the
  // width of an input panel), about 4 KiB per partition each way.
  const int64_t esz = nki::dtype_bytes(dtype);
  const int64_t ROWS = largest_divisor(M / tile_dim, 8);
  const int64_t COLS = largest_divisor(N / tile_dim, 4096 / (tile_dim * esz));
  const int64_t BANK = nl::tile_size::psum_fmax;       // 512 fp32: one PSUM bank per partition
  const int64_t PER_BANK = BANK / tile_dim;            // transposed blocks side by side in a bank
  const int64_t NBANKS = (ROWS + PER_BANK - 1) / PER_BANK;
  const int64_t GROUP_COLS = N / (COLS * tile_dim);
  const int64_t GROUPS = (M / (ROWS * tile_dim)) * GROUP_COLS;

  Tensor panel_prev;
  // Iteration i loads group i and transposes group i - 1 (loaded by the iteration before).
  for (int64_t i : nl::sequential_range(GROUPS + 1)) {
    Tensor panel;
    if (i < GROUPS) {
      const int64_t g = i / GROUP_COLS, h = i % GROUP_COLS;
      // ROWS row panels of [128, COLS*128]
      panel = nl::ndarray({ROWS, nl::par_dim(tile_dim), COLS * tile_dim}, dtype, nl::sbuf, "panel");
      for (int64_t r = 0; r < ROWS; ++r)
        nisa::dma_copy(panel[r], a_tensor(nl::ds((g * ROWS + r) * tile_dim, tile_dim),
                                          nl::ds(h * COLS * tile_dim, COLS * tile_dim)));
    }
    if (i > 0) {
      const int64_t g = (i - 1) / GROUP_COLS, h = (i - 1) % GROUP_COLS;
      for (int64_t c : nl::affine_range(COLS)) {
        // Block column c of every panel, transposed side by side: row block h*COLS + c of out.
        Tensor t_psum = nl::ndarray({NBANKS, nl::par_dim(tile_dim), BANK}, nl::float32, nl::psum, "t_psum");
        for (int64_t r = 0; r < ROWS; ++r)
          nisa::nc_transpose(t_psum[r / PER_BANK](nl::all, nl::ds((r % PER_BANK) * tile_dim, tile_dim)),
                             panel_prev[r](nl::all, nl::ds(c * tile_dim, tile_dim)));

        // Copy out of PSUM (back to the input dtype) and store ROWS*128 columns at once.
        Tensor out_tile = nl::ndarray({tile_dim, ROWS * tile_dim}, dtype, nl::sbuf, "out_tile");
        for (int64_t b = 0; b < NBANKS; ++b) {
          const int64_t w = std::min(BANK, (ROWS - b * PER_BANK) * tile_dim);
          nisa::tensor_copy(out_tile(nl::all, nl::ds(b * BANK, w)), t_psum[b](nl::all, nl::ds(0, w)));
        }
        nisa::dma_copy(out(nl::ds((h * COLS + c) * tile_dim, tile_dim), nl::ds(g * ROWS * tile_dim, ROWS * tile_dim)),
                       out_tile);
      }
    }
    panel_prev = panel;
  }
  return out;
}

Tensor matmul_tiled(const Tensor& lhsT, const Tensor& rhs) {
  const auto [K, M, N] = matmul_dims(lhsT, rhs);
  Tensor result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");

  // Maximum free dimension of the stationary operand of general matrix multiplication on tensor engine
  const int64_t TILE_M = nl::tile_size::gemm_stationary_fmax;  // 128

  // Maximum partition dimension of a tile
  const int64_t TILE_K = nl::tile_size::pmax;  // 128

  // Maximum free dimension of the moving operand of general matrix multiplication on tensor engine
  const int64_t TILE_N = nl::tile_size::gemm_moving_fmax;  // 512

  // Use affine_range to loop over tiles
  for (int64_t m : nl::affine_range(M / TILE_M)) {
    for (int64_t n : nl::affine_range(N / TILE_N)) {
      // Allocate a tensor in PSUM
      Tensor res_psum = nl::zeros({TILE_M, TILE_N}, nl::float32, nl::psum, "res_psum");

      for (int64_t k : nl::affine_range(K / TILE_K)) {
        // Declare the tiles on SBUF
        Tensor lhsT_tile = nl::ndarray({TILE_K, TILE_M}, lhsT.dtype(), nl::sbuf, "lhsT_tile");
        Tensor rhs_tile = nl::ndarray({TILE_K, TILE_N}, rhs.dtype(), nl::sbuf, "rhs_tile");

        // Load tiles from lhsT and rhs
        nisa::dma_copy(lhsT_tile, lhsT(nl::ds(k * TILE_K, TILE_K), nl::ds(m * TILE_M, TILE_M)));
        nisa::dma_copy(rhs_tile, rhs(nl::ds(k * TILE_K, TILE_K), nl::ds(n * TILE_N, TILE_N)));

        // Accumulate partial-sums into PSUM
        res_psum += nisa::nc_matmul(lhsT_tile, rhs_tile);
      }

      // Copy the result from PSUM back to SBUF, and cast to expected output data-type
      Tensor res_sb = nl::copy(res_psum, result.dtype());
      nisa::dma_copy(result(nl::ds(m * TILE_M, TILE_M), nl::ds(n * TILE_N, TILE_N)), res_sb);
    }
  }
  return result;
}

Tensor matmul_blocked(const Tensor& lhsT, const Tensor& rhs) {
  const auto [K, M, N] = matmul_dims(lhsT, rhs);
  nki::kernel_check(lhsT.dtype() == rhs.dtype(),
                    fmt::format("lhsT and rhs must have the same dtype, got {} and {}", nki::to_string(lhsT.dtype()),
                                nki::to_string(rhs.dtype())));
  const int64_t TILE_M = nl::tile_size::gemm_stationary_fmax;  // 128
  const int64_t TILE_K = nl::tile_size::pmax;                  // 128
  const int64_t TILE_N = nl::tile_size::gemm_moving_fmax;      // 512
  Tensor result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");

  // Block sizes: two buffers of each block tile and of the output row within this share of a
  // partition's SBUF bytes (the rest is left to the allocator's other tiles).
  const int64_t esz = nki::dtype_bytes(lhsT.dtype());
  const int64_t KT = K / TILE_K;
  const int64_t budget = 160 * 1024;
  auto bytes = [&](int64_t bm, int64_t bn) { return 2 * (KT * (bm + bn) * esz + bn * esz); };
  int64_t BN = TILE_N * largest_divisor(N / TILE_N, N / TILE_N);
  while (BN > TILE_N && bytes(TILE_M, BN) > budget) BN = TILE_N * largest_divisor(N / TILE_N, BN / TILE_N - 1);
  int64_t BM = TILE_M * largest_divisor(M / TILE_M, M / TILE_M);
  while (BM > TILE_M && bytes(BM, BN) > budget) BM = TILE_M * largest_divisor(M / TILE_M, BM / TILE_M - 1);
  nki::kernel_check(bytes(BM, BN) <= budget,
                    fmt::format("K = {} is too large for matmul_blocked: a block of lhsT and rhs needs {} bytes per "
                                "partition of the {} it may use; use matmul_tiled",
                                K, bytes(BM, BN), budget));

  // Two buffers of each, placed here for the whole kernel: block i + 1 loads into the buffer
  // block i does not use.
  Tensor rhs_bufs = nl::ndarray({2, KT, nl::par_dim(TILE_K), BN}, rhs.dtype(), nl::sbuf, "rhs_blk");
  Tensor lhs_bufs = nl::ndarray({2, KT, nl::par_dim(TILE_K), BM}, lhsT.dtype(), nl::sbuf, "lhs_blk");
  Tensor out_bufs = nl::ndarray({2, nl::par_dim(TILE_M), BN}, result.dtype(), nl::sbuf, "out_row");
  // The buffers are picked from the loop indices (the blocks in the order they are loaded), so
  // that each loop body is the same in every iteration, as NKI traces it once.
  const int64_t MB = M / BM, MT = BM / TILE_M;

  for (int64_t nb : nl::affine_range(N / BN)) {
    Tensor rhs_blk = rhs_bufs[nb % 2];
    for (int64_t mb : nl::affine_range(MB)) {
      Tensor lhs_blk = lhs_bufs[(nb * MB + mb) % 2];
      // The first row block loads the column block's rhs rows too, interleaved with its own, so
      // that the multiplies over k = 0 can start after two loads rather than KT + 1.
      for (int64_t k = 0; k < KT; ++k) {
        if (mb == 0) nisa::dma_copy(rhs_blk[k], rhs(nl::ds(k * TILE_K, TILE_K), nl::ds(nb * BN, BN)));
        nisa::dma_copy(lhs_blk[k], lhsT(nl::ds(k * TILE_K, TILE_K), nl::ds(mb * BM, BM)));
      }
      for (int64_t mt : nl::affine_range(MT)) {
        Tensor out_row = out_bufs[((nb * MB + mb) * MT + mt) % 2];
        for (int64_t nt : nl::affine_range(BN / TILE_N)) {
          Tensor res_psum = nl::ndarray({TILE_M, TILE_N}, nl::float32, nl::psum, "res_psum");
          for (int64_t k = 0; k < KT; ++k)
            nisa::nc_matmul(res_psum, lhs_blk[k](nl::all, nl::ds(mt * TILE_M, TILE_M)),
                            rhs_blk[k](nl::all, nl::ds(nt * TILE_N, TILE_N)), k > 0);
          nisa::tensor_copy(out_row(nl::all, nl::ds(nt * TILE_N, TILE_N)), res_psum);
        }
        nisa::dma_copy(result(nl::ds(mb * BM + mt * TILE_M, TILE_M), nl::ds(nb * BN, BN)), out_row);
      }
    }
  }
  return result;
}

// --- declarations ---------------------------------------------------------------------------

Kernel transpose_kernel(std::string name, std::string function, std::string doc, Tensor (*fn)(const Tensor&)) {
  return Kernel{
      .name = std::move(name),
      .function = std::move(function),
      .doc = std::move(doc),
      .params = matrix_dims("a_tensor", "a multiple of 128; "),
      .inputs = {matrix_input("a_tensor", "the matrix (n, m)")},
      .outputs = {{.name = "out", .shape = [](const Values& v) { return Dims{v["m"], v["n"]}; }, .help = "a_tensor.T (m, n)"}},
      .body = [fn](const Inputs& in, const Values&) { return Outputs{fn(in[0])}; },
      .reference = ref::transpose,
      .example = "-n 256 -m 384 --check",
      .waves = "transpose"};
}

namespace {

const Register transpose{transpose_kernel(
    "transpose", "matrix_transpose",
    "matrix_transpose: a_tensor (n, m) to out (m, n) with nc_transpose on the tensor engine; n and m "
    "multiples of 128 (m = n when not given); exact for finite inputs (-0 becomes +0)",
    matrix_transpose)};

// The matmul kernels: inputs lhsT (k, m) and rhs (k, n), result (m, n).
Kernel matmul(std::string name, std::string function, std::string doc, Tensor (*fn)(const Tensor&, const Tensor&)) {
  return Kernel{
      .name = std::move(name),
      .function = std::move(function),
      .doc = std::move(doc),
      .params = {{.name = "k",
                  .flag = "-k",
                  .help = "contraction dimension: rows of lhsT and rhs (a multiple of 128)",
                  .required = true,
                  .what = "contraction dimension",
                  .from_inputs = {{"lhsT", 0}, {"rhs", 0}}},
                 {.name = "m",
                  .flag = "-m",
                  .help = "columns of lhsT, rows of the result (a multiple of 128)",
                  .required = true,
                  .what = "row count",
                  .from_inputs = {{"lhsT", 1}}},
                 {.name = "n",
                  .flag = "-n",
                  .help = "columns of rhs and of the result (a multiple of 512)",
                  .required = true,
                  .what = "column count",
                  .from_inputs = {{"rhs", 1}}}},
      .inputs = {{.name = "lhsT",
                  .shape = [](const Values& v) { return Dims{v["k"], v["m"]}; },
                  .help = "the left operand, transposed (k, m)",
                  .dims = {"k", "m"}},
                 {.name = "rhs",
                  .shape = [](const Values& v) { return Dims{v["k"], v["n"]}; },
                  .help = "the right operand (k, n)",
                  .dims = {"k", "n"}}},
      .outputs = {{.name = "result",
                   .shape = [](const Values& v) { return Dims{v["m"], v["n"]}; },
                   .help = "lhsT.T @ rhs (m, n)"}},
      .body = [fn](const Inputs& in, const Values&) { return Outputs{fn(in[0], in[1])}; },
      .reference = ref::matmul,
      .exact = false,
      .error_bound = ref::matmul_bound,
      .example = "-k 256 -m 256 -n 1024 --check",
      .waves = "matmul"};
}

const Register tiled{matmul(
    "matmul", "matmul_tiled",
    "matmul_tiled (nki_matmul_tiled_): result (m, n) = lhsT (k, m).T @ rhs (k, n), 128 x 512 tiles accumulated in "
    "PSUM, both input tiles loaded for every multiply; k and m multiples of 128, n a multiple of 512; sums in fp32 "
    "(compared with the reference within the forward error bound of the accumulation)",
    matmul_tiled)};

const Register blocked{matmul(
    "matmul_blocked", "matmul_blocked",
    "matmul_blocked: the same product with lhsT and rhs loaded once per block into the SBUF and reused by every tile "
    "of the block, loads overlapping the multiplies (the tensor engine kept busy); same sizes and bits as matmul",
    matmul_blocked)};

}  // namespace

}  // namespace kernels
