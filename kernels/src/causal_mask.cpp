// The causal mask of attention scores, as attention kernels written for the chip apply it with
// nisa.affine_select: row i keeps its scores in columns j <= i and gets -inf above the diagonal
// (masked_fill before a softmax). Per tile of 128 rows starting at row r0:
//
//   i_p = nl.arange(128)[:, None]; i_f = nl.arange(M)[None, :]
//   masked = nisa.affine_select(pred=(r0 + i_p - i_f >= 0), on_true_tile=scores_tile,
//                               on_false_value=-inf)
//
// affine_select is a composite call (kernels/nki/src/compose.cpp): a constant tile of bounds loaded
// by one dma_copy, a tensor_tensor max and a tensor_tensor min. Each tile's predicate differs by
// its row offset, so each tile has its own constant; the Program carries them (its image too).
#include <fmt/format.h>

#include <limits>

#include "kernels/kernel.hpp"
#include "nki/nki.hpp"
#include "reference/reference.hpp"

namespace kernels {
namespace {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;

Tensor causal_mask(const Tensor& scores) {
  const int64_t N = scores.shape()[0], M = scores.shape()[1];
  const int64_t P = nl::tile_size::pmax;
  nki::kernel_check(N % P == 0, fmt::format("causal_mask: the row count {} is not a multiple of {}", N, P));
  Tensor out = nl::ndarray({N, M}, scores.dtype(), nl::shared_hbm, "out");
  for (int64_t t : nl::affine_range(N / P)) {
    Tensor s = nl::load(scores(nl::ds(t * P, P), nl::all));
    // r0 + i_p - i_f >= 0 over the [P, M] grid
    const nisa::AffinePredicate below{{{nisa::Affine{t * P, {1, -1}, {P, M}}, nki::AluOp::greater_equal}}};
    Tensor masked = nl::ndarray({P, M}, scores.dtype(), nl::sbuf, "masked");
    nisa::affine_select(masked, below, s, -std::numeric_limits<float>::infinity());
    nl::store(out(nl::ds(t * P, P), nl::all), masked);
  }
  return out;
}

const Register reg{Kernel{
    .name = "causal_mask",
    .function = "causal_mask",
    .doc = "causal_mask: out (n, m) = scores with -inf above the diagonal (column > row), by nisa.affine_select on "
           "128-row tiles; n a multiple of 128; exact",
    .params = matrix_dims("scores", ""),
    .inputs = {matrix_input("scores", "the attention scores (n, m)")},
    .outputs = {{.name = "out", .shape = [](const Values& v) { return Dims{v["n"], v["m"]}; },
                 .help = "scores where column <= row, -inf elsewhere (n, m)"}},
    .body = [](const Inputs& in, const Values&) { return Outputs{causal_mask(in[0])}; },
    .reference = ref::causal_mask,
    .example = "-n 256 -m 320 --check"}};

}  // namespace
}  // namespace kernels
