// vector_add_stream as the Trainium1 handout (002, step 2a) writes it, with NKI's language-level
// calls: nl.load brings a tile in, nl.add adds two tiles, nl.store writes the result out. The
// compiler lowers them to what the 003 handout's kernel spells out (dma_copy, tensor_tensor on
// the vector engine, dma_copy), so both give the same Program shape.
//
//   a_vec_re = a_vec.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))
//   out = nl.ndarray(shape=a_vec_re.shape, dtype=a_vec_re.dtype, buffer=nl.hbm)
//   for m in nl.affine_range((M // TILE_M)):
//       a_tile = nl.load(a_vec_re[m])
//       b_tile = nl.load(b_vec_re[m])
//       res = nl.add(a_tile, b_tile)
//       nl.store(out[m], value=res)
//   out = out.reshape((M,))
#include <fmt/format.h>

#include "kernels/kernel.hpp"
#include "nki/nki.hpp"
#include "reference/reference.hpp"

namespace kernels {
namespace {

namespace nl = nki::nl;
using nki::Tensor;

Tensor vector_add_load_store(const Tensor& a_vec, const Tensor& b_vec, int64_t FREE_DIM) {
  // Get the total number of vector rows
  const int64_t M = a_vec.shape()[0];

  // The maximum size of our Partition Dimension
  const int64_t PARTITION_DIM = 128;

  // The total size of each tile
  const int64_t TILE_M = PARTITION_DIM * FREE_DIM;
  nki::kernel_check(M % TILE_M == 0, fmt::format("vector length {} is not a multiple of PARTITION_DIM * FREE_DIM = "
                                                 "{} * {} = {}",
                                                 M, PARTITION_DIM, FREE_DIM, TILE_M));

  // Reshape the the input vectors
  Tensor a_vec_re = a_vec.reshape({M / TILE_M, PARTITION_DIM, FREE_DIM});
  Tensor b_vec_re = b_vec.reshape({M / TILE_M, PARTITION_DIM, FREE_DIM});

  // Allocate space for the reshaped output vector in HBM
  Tensor out = nl::ndarray(a_vec_re.shape(), a_vec_re.dtype(), nl::hbm, "out");

  // Loop over the total number of tiles
  for (int64_t m : nl::affine_range(M / TILE_M)) {
    // Load the input tiles
    Tensor a_tile = nl::load(a_vec_re[m]);
    Tensor b_tile = nl::load(b_vec_re[m]);

    // Add the tiles together
    Tensor res = nl::add(a_tile, b_tile);

    // Store the result tile into HBM
    nl::store(out[m], res);
  }

  // Reshape the output vector into its original shape
  return out.reshape({M});
}

const Register load_store{Kernel{
    .name = "load_store",
    .function = "vector_add_load_store",
    .doc = "vector_add_stream of the Trainium1 handout: nl.load, nl.add and nl.store on (128, --free-dim) tiles",
    .params = {vector_length(),
               {.name = "free_dim",
                .flag = "--free-dim",
                .help = "FREE_DIM, elements per partition per tile",
                .def = 200,
                .what = "FREE_DIM"}},
    .inputs = {{.name = "a_vec", .shape = [](const Values& v) { return Dims{v["n"]}; }, .help = "the first vector (n,)", .file_flag = "--a"},
               {.name = "b_vec", .shape = [](const Values& v) { return Dims{v["n"]}; }, .help = "the second vector (n,)", .file_flag = "--b"}},
    .outputs = {{.name = "out", .shape = [](const Values& v) { return Dims{v["n"]}; }, .help = "a_vec + b_vec (n,)"}},
    .body = [](const Inputs& in, const Values& v) { return Outputs{vector_add_load_store(in[0], in[1], v["free_dim"])}; },
    .reference = ref::vector_add,
    .example = "-n 25600 --free-dim 200 --check",
    .waves = "vector_add"}};

}  // namespace
}  // namespace kernels
