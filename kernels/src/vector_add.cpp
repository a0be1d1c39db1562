// The vector-add kernels of the seed handouts, written as close to their NKI Python as C++
// allows (Python slices a[m*C:(m+1)*C] become a(nl::ds(m*C, C))). See vector_add.hpp.
#include "kernels/vector_add.hpp"

#include <fmt/format.h>

#include "kernels/kernel.hpp"
#include "nki/nki.hpp"
#include "reference/reference.hpp"

namespace kernels {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
namespace ncc = nki::ncc;
using nki::Tensor;

Tensor vector_add_naive(const Tensor& a_vec, const Tensor& b_vec) {
  // Allocate space for the output vector in HBM
  Tensor out = nl::ndarray(a_vec.shape(), a_vec.dtype(), nl::hbm, "out");

  // Allocate space for the input vectors in SBUF and copy them from HBM
  Tensor a_sbuf = nl::ndarray({a_vec.shape()[0], 1}, a_vec.dtype(), nl::sbuf, "a_sbuf");
  Tensor b_sbuf = nl::ndarray({b_vec.shape()[0], 1}, b_vec.dtype(), nl::sbuf, "b_sbuf");

  nisa::dma_copy(a_sbuf, a_vec);
  nisa::dma_copy(b_sbuf, b_vec);

  // Add the input vectors
  Tensor res = nisa::tensor_scalar(a_sbuf, nl::add, b_sbuf);

  // Store the result into HBM
  nisa::dma_copy(out, res);

  return out;
}

Tensor vector_add_tiled(const Tensor& a_vec, const Tensor& b_vec, int64_t ROW_CHUNK) {
  // Allocate space for the output vector in HBM
  Tensor out = nl::ndarray(a_vec.shape(), a_vec.dtype(), nl::hbm, "out");

  // Get the total number of vector rows
  const int64_t M = a_vec.shape()[0];
  nki::kernel_check(ROW_CHUNK > 0, fmt::format("ROW_CHUNK must be positive, got {}", ROW_CHUNK));
  nki::kernel_check(M % ROW_CHUNK == 0,
                    fmt::format("vector length {} is not a multiple of ROW_CHUNK * 1 = {}", M, ROW_CHUNK));

  // Loop over the total number of chunks, we can use affine_range
  // because there are no loop-carried dependencies
  for (int64_t m : nl::affine_range(M / ROW_CHUNK)) {
    // Allocate row-chunk sized tiles for the input vectors
    Tensor a_tile = nl::ndarray({ROW_CHUNK, 1}, a_vec.dtype(), nl::sbuf, "a_tile");
    Tensor b_tile = nl::ndarray({ROW_CHUNK, 1}, b_vec.dtype(), nl::sbuf, "b_tile");

    // Load a chunk of rows
    nisa::dma_copy(a_tile, a_vec(nl::ds(m * ROW_CHUNK, ROW_CHUNK)));
    nisa::dma_copy(b_tile, b_vec(nl::ds(m * ROW_CHUNK, ROW_CHUNK)));

    // Add the row chunks together
    Tensor res = nisa::tensor_scalar(a_tile, nl::add, b_tile);

    // Store the result chunk into HBM
    nisa::dma_copy(out(nl::ds(m * ROW_CHUNK, ROW_CHUNK)), res);
  }

  return out;
}

Tensor vector_add_stream(const Tensor& a_vec, const Tensor& b_vec, int64_t FREE_DIM) {
  // Get the total number of vector rows
  const int64_t M = a_vec.shape()[0];

  // The maximum size of our Partition Dimension
  const int64_t PARTITION_DIM = nl::tile_size::pmax;
  nki::kernel_check(FREE_DIM > 0, fmt::format("FREE_DIM must be positive, got {}", FREE_DIM));
  nki::kernel_check(M % (PARTITION_DIM * FREE_DIM) == 0,
                    fmt::format("vector length {} is not a multiple of PARTITION_DIM * FREE_DIM = {} * {} = {}", M,
                                PARTITION_DIM, FREE_DIM, PARTITION_DIM * FREE_DIM));

  Tensor a_vec_re = a_vec.reshape({PARTITION_DIM, M / PARTITION_DIM});
  Tensor b_vec_re = b_vec.reshape({PARTITION_DIM, M / PARTITION_DIM});
  Tensor out = nl::ndarray(a_vec_re.shape(), a_vec_re.dtype(), nl::hbm, "out");

  // Loop over the total number of tiles
  for (int64_t m : nl::affine_range(M / (PARTITION_DIM * FREE_DIM))) {
    // Allocate space for a reshaped tile
    Tensor a_tile = nl::ndarray({PARTITION_DIM, FREE_DIM}, a_vec.dtype(), nl::sbuf, "a_tile");
    Tensor b_tile = nl::ndarray({PARTITION_DIM, FREE_DIM}, b_vec.dtype(), nl::sbuf, "b_tile");

    // Load the input tiles
    nisa::dma_copy(a_tile, a_vec_re(nl::all, nl::ds(m * FREE_DIM, FREE_DIM)));
    nisa::dma_copy(b_tile, b_vec_re(nl::all, nl::ds(m * FREE_DIM, FREE_DIM)));

    // Add the tiles together. Note that we must switch to tensor_tensor instead of tensor_scalar
    Tensor res = nisa::tensor_tensor(a_tile, b_tile, nl::add);

    // Store the result tile into HBM
    nisa::dma_copy(out(nl::all, nl::ds(m * FREE_DIM, FREE_DIM)), res);
  }

  // Reshape the output vector into its original shape
  out = out.reshape(a_vec.shape());

  return out;
}

namespace {

// The body shared by the two direct-allocation kernels. `separate`: the a, b and result
// regions are FREE_DIM_TILES * FREE_DIM * 4 bytes apart (the handout's offsets 0, 16000 and
// 32000); otherwise all three start at 0 (the _bad variant).
Tensor direct_allocation(const Tensor& a_vec_in, const Tensor& b_vec_in, bool separate) {
  // Create output tensor in HBM
  Tensor out = nl::ndarray(a_vec_in.shape(), a_vec_in.dtype(), nl::shared_hbm, "out");

  // Define constants for free dimension, physical tile count, and partition dimension
  const int64_t FREE_DIM = 1000;
  const int64_t FREE_DIM_TILES = 4;
  const int64_t PARTITION_DIM = 128;

  // Get the total number of vector rows
  const int64_t M = a_vec_in.shape()[0];

  // Define the size of each tile
  const int64_t TILE_M = PARTITION_DIM * FREE_DIM;
  nki::kernel_check(M % TILE_M == 0,
                    fmt::format("vector length {} is not a multiple of PARTITION_DIM * FREE_DIM = {} * {} = {}", M,
                                PARTITION_DIM, FREE_DIM, TILE_M));

  // Reshape the the input vectors
  Tensor a_vec = a_vec_in.reshape({M / TILE_M, PARTITION_DIM, FREE_DIM});
  Tensor b_vec = b_vec_in.reshape({M / TILE_M, PARTITION_DIM, FREE_DIM});
  out = out.reshape({M / TILE_M, PARTITION_DIM, FREE_DIM});

  // Get the total number of tiles
  const int64_t N_TILES = M / TILE_M;

  // Initialize the starting byte offset for a_tensor
  int64_t current_offset = 0;

  // Allocate space for the entire reshaped a_tensor with 4 physical tiles
  Tensor a_tile = nl::ndarray({N_TILES, nl::par_dim(PARTITION_DIM), FREE_DIM}, a_vec.dtype(),
                              ncc::sbuf::mod_alloc(current_offset, 0, {}, {FREE_DIM_TILES}), "a_tile");

  // Increment the starting byte offset for b_tensor based on tile and feature size
  if (separate) current_offset += FREE_DIM_TILES * FREE_DIM * 4;

  // Allocate space for the entire reshaped b_tensor with 4 physical tiles
  Tensor b_tile = nl::ndarray({N_TILES, nl::par_dim(PARTITION_DIM), FREE_DIM}, b_vec.dtype(),
                              ncc::sbuf::mod_alloc(current_offset, 0, {}, {FREE_DIM_TILES}), "b_tile");

  // Increment the starting byte offset, and allocate space for the entire reshaped out_tensor
  if (separate) current_offset += FREE_DIM_TILES * FREE_DIM * 4;
  Tensor res_tile = nl::ndarray({N_TILES, nl::par_dim(PARTITION_DIM), FREE_DIM}, out.dtype(),
                                ncc::sbuf::mod_alloc(current_offset, 0, {}, {FREE_DIM_TILES}), "res_tile");

  // Loop over the total number of tiles
  for (int64_t m : nl::affine_range(N_TILES)) {
    // Load the input tiles
    nisa::dma_copy(a_tile[m], a_vec[m]);
    nisa::dma_copy(b_tile[m], b_vec[m]);

    // Add the tiles together
    nisa::tensor_tensor(res_tile[m], a_tile[m], b_tile[m], nl::add);

    // Store the result tile into HBM
    nisa::dma_copy(out[m], res_tile[m]);
  }

  // Reshape the output vector into its original shape
  out = out.reshape({M, 1});

  return out;
}

}  // namespace

Tensor vector_add_direct_allocation(const Tensor& a_vec, const Tensor& b_vec) {
  return direct_allocation(a_vec, b_vec, true);
}

Tensor vector_add_direct_allocation_bad(const Tensor& a_vec, const Tensor& b_vec) {
  return direct_allocation(a_vec, b_vec, false);
}

// --- declarations ---------------------------------------------------------------------------

namespace {

// The vector adds' inputs a_vec and b_vec of shape (n,), from --a/--b files or random.
std::vector<TensorDecl> vector_inputs() {
  auto n = [](const Values& v) { return Dims{v["n"]}; };
  return {{.name = "a_vec", .shape = n, .help = "the first vector (n,)", .file_flag = "--a"},
          {.name = "b_vec", .shape = n, .help = "the second vector (n,)", .file_flag = "--b"}};
}

// The result `out`: (n,), or (n, 1) for the direct-allocation kernels.
std::vector<TensorDecl> vector_output(bool column) {
  if (column) return {{.name = "out", .shape = [](const Values& v) { return Dims{v["n"], 1}; }, .help = "a_vec + b_vec (n, 1)"}};
  return {{.name = "out", .shape = [](const Values& v) { return Dims{v["n"]}; }, .help = "a_vec + b_vec (n,)"}};
}

Kernel vector_add(std::string name, std::string function, std::string doc, std::vector<Param> extra,
                  std::function<Tensor(const Tensor&, const Tensor&, const Values&)> fn, std::string example,
                  bool column = false) {
  std::vector<Param> params{vector_length()};
  for (auto& p : extra) params.push_back(std::move(p));
  return Kernel{.name = std::move(name),
                .function = std::move(function),
                .doc = std::move(doc),
                .params = std::move(params),
                .inputs = vector_inputs(),
                .outputs = vector_output(column),
                .body = [fn](const Inputs& in, const Values& v) { return Outputs{fn(in[0], in[1], v)}; },
                .reference = ref::vector_add,
                .example = std::move(example),
                .waves = "vector_add"};
}

const Register naive{vector_add(
    "naive", "vector_add_naive", "vector_add_naive: n <= 128, one (n, 1) tile per input, tensor_scalar add", {},
    [](const Tensor& a, const Tensor& b, const Values&) { return vector_add_naive(a, b); }, "-n 128 --check")};

const Register tiled{vector_add(
    "tiled", "vector_add_tiled", "vector_add_tiled: --row-chunk rows per iteration (<= 128), tensor_scalar add",
    {{.name = "row_chunk", .flag = "--row-chunk", .help = "ROW_CHUNK, rows per tile", .def = 128, .what = "ROW_CHUNK"}},
    [](const Tensor& a, const Tensor& b, const Values& v) { return vector_add_tiled(a, b, v["row_chunk"]); },
    "-n 25600 --check")};

const Register stream{vector_add(
    "stream", "vector_add_stream",
    "vector_add_stream: (128, n/128) view, --free-dim columns per tile, tensor_tensor add",
    {{.name = "free_dim",
      .flag = "--free-dim",
      .help = "FREE_DIM, elements per partition per tile",
      .def = 200,
      .what = "FREE_DIM"}},
    [](const Tensor& a, const Tensor& b, const Values& v) { return vector_add_stream(a, b, v["free_dim"]); },
    "-n 25600 --free-dim 200 --check")};

const Register direct_alloc{vector_add(
    "direct_alloc", "vector_add_direct_allocation",
    "vector_add_direct_allocation: (128, 1000) tiles placed by mod_alloc, 4 per tensor; n a multiple of 128000", {},
    [](const Tensor& a, const Tensor& b, const Values&) { return vector_add_direct_allocation(a, b); },
    "-n 256000 --check", true)};

const Register direct_alloc_bad{vector_add(
    "direct_alloc_bad", "vector_add_direct_allocation_bad",
    "vector_add_direct_allocation_bad: as direct_alloc with a, b and the result all at SBUF offset 0; its output is "
    "wrong on purpose",
    {}, [](const Tensor& a, const Tensor& b, const Values&) { return vector_add_direct_allocation_bad(a, b); },
    "-n 256000", true)};

}  // namespace

}  // namespace kernels
