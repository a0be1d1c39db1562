// fused_conv2d_maxpool: handout 003 part 2, as a kernel that keeps the tensor engine busy.
//
// The convolution is the handout's sum of shifted matmuls: for every filter position (i, j),
// out[co, y, x] += sum over ci of W[co, ci, i, j] * X[ci, y + i, x + j]. On the tensor engine
// the stationary operand is a [128 ci, 128 co] slice of the weights, transposed once at the start
// so that the input channels lie on the partitions; the moving operand is R whole output rows of
// the input shifted by (i, j), read in place from a band of input rows in the SBUF as a 2-D
// access pattern [R rows (stride W), Wout columns] - no copy, no wasted columns. One PSUM bank
// holds the R x Wout fp32 sums of one row group, accumulated over Cin / 128 x K x K matmuls.
//
//   HBM X[b, ci, :, :] --(one DMA per 128 channels and band of BR + K - 1 rows)--> x_band (x2)
//   HBM W --(one DMA per 128 output channels)--> w_nat [co, ci*K*K] --nc_transpose--> w_T
//                                                 [ci, (co tile, i, j, co)] (once)
//   for each image b, band of BR output rows, output-channel tile cot:
//     for each row group of R rows:                       (R x Wout <= 512: one PSUM bank)
//       psum[co, R x Wout] = sum over ct, i, j of nc_matmul(w_T[ct][cot, i, j], x_band[ct] rows
//                            g*R + i.., columns j..)      (Cin/128 x K x K multiplies)
//       pool 1:  activation(out_band rows, identity, psum, bias)  - scalar engine, PSUM -> SBUF
//       pool p:  activation(y, identity, psum, bias); tensor_reduce(max) over column windows;
//                tensor_tensor(max) over the p rows of each window - vector engine
//     one DMA of out_band [co, BR/p, Wout/p] to HBM           (x2 buffers)
//
// A pool size that does not divide the output drops the last rows and columns (floor, as
// PyTorch's max_pool2d); the kernel computes only the conv outputs the whole windows cover.
//
// The bias is added before pooling: max(a) + b = max(a + b), and rounding to the dtype is
// monotonic, so the result is the same bits as pooling the rounded conv + bias.
//
// Overlap: x_band and out_band have two buffers used in turn, so the next band loads and the
// previous band stores while the tensor engine works; PSUM tiles rotate over banks, so the
// scalar and vector engines empty one while the tensor engine fills the next. The multiplies of
// one row group accumulate into one bank back to back (the tensor engine orders its own PSUM
// writes), each with its own stationary loaded in the shadow of the multiply before it.
#include "kernels/conv.hpp"
#include "kernels/kernel.hpp"
#include "reference/reference.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "nki/nki.hpp"

namespace kernels {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;

namespace {

// The conv's sizes, checked: the image, the filter, the pooled output, the SBUF budget's row
// group (R output rows in one PSUM bank) and band (BR output rows per input load).
struct ConvPlan {
  int64_t B, Cin, H, Wd, Cout, K, P, Ho, Wo, Hout, Wout, BANK, CT, CO_T, KK, esz, R, BR, NBANDS;
  nki::Dtype dtype;
};

ConvPlan plan_conv(const Tensor& X, const Tensor& W, const Tensor& bias, int64_t pool_size) {
  nki::kernel_check(X.ndim() == 4, fmt::format("X must be [batch, in channels, height, width], got {}", X.str()));
  nki::kernel_check(W.ndim() == 4,
                    fmt::format("W must be [out channels, in channels, filter height, filter width], got {}", W.str()));
  nki::kernel_check(bias.ndim() == 1, fmt::format("bias must be [out channels], got {}", bias.str()));
  const int64_t B = X.shape()[0], Cin = X.shape()[1], H = X.shape()[2], Wd = X.shape()[3];
  const int64_t Cout = W.shape()[0], K = W.shape()[2];
  const nki::Dtype dtype = X.dtype();
  nki::kernel_check(W.shape()[1] == Cin, fmt::format("W has {} input channels but X has {} (W {}, X {})",
                                                     W.shape()[1], Cin, W.shape().str(), X.shape().str()));
  nki::kernel_check(W.shape()[3] == K, fmt::format("the filter must be square (Filter Height == Filter Width), got "
                                                   "{} x {}",
                                                   K, W.shape()[3]));
  nki::kernel_check(bias.shape()[0] == Cout,
                    fmt::format("bias has {} elements but W has {} output channels", bias.shape()[0], Cout));
  nki::kernel_check(W.dtype() == dtype && bias.dtype() == dtype,
                    fmt::format("X, W and bias must have one dtype, got {}, {} and {}", nki::to_string(dtype),
                                nki::to_string(W.dtype()), nki::to_string(bias.dtype())));
  const int64_t P = nl::tile_size::pmax;  // 128
  nki::kernel_check(Cin % P == 0, fmt::format("Input Channels ({}) must be a multiple of {}", Cin, P));
  nki::kernel_check(Cout % P == 0, fmt::format("Output Channels ({}) must be a multiple of {}", Cout, P));
  nki::kernel_check(pool_size >= 1, fmt::format("pool_size must be at least 1, got {}", pool_size));
  nki::kernel_check(K >= 1 && K <= H && K <= Wd,
                    fmt::format("the {} x {} filter does not fit the {} x {} image", K, K, H, Wd));
  // Pooling keeps the whole windows and drops the rest (out_pool_height = out_height // pool_size,
  // as the handout and PyTorch's max_pool2d): only the conv rows and columns those windows cover
  // are computed, Hout x Wout of the full (H - K + 1) x (Wd - K + 1).
  const int64_t Ho = (H - K + 1) / pool_size, Wo = (Wd - K + 1) / pool_size;
  nki::kernel_check(Ho >= 1 && Wo >= 1,
                    fmt::format("the output size {} x {} ((Input Height - Filter Height + 1) x (Input Width - Filter "
                                "Width + 1)) is smaller than the {} x {} pool window",
                                H - K + 1, Wd - K + 1, pool_size, pool_size));
  const int64_t Hout = Ho * pool_size, Wout = Wo * pool_size;
  const int64_t BANK = nl::tile_size::psum_fmax;  // 512 fp32: one PSUM bank per partition
  nki::kernel_check(Wout <= BANK, fmt::format("output rows of {} elements do not fit one PSUM bank ({} float32); this "
                                              "kernel computes whole output rows",
                                              Wout, BANK));
  const int64_t CT = Cin / P, CO_T = Cout / P, KK = K * K;
  const int64_t esz = nki::dtype_bytes(dtype);

  // SBUF budget per partition, the same on every preset (of 192 KiB on trn1, 224 KiB on trn2): the
  // transposed weights for the whole kernel, their staging tiles while they are transposed, and two
  // buffers of an input band and of an output band.
  const int64_t sbuf_bytes = 160 * 1024;
  const int64_t w_bytes = CT * CO_T * KK * P * esz;
  const int64_t w_stage_bytes = 2 * Cin * KK * esz;  // w_nat, two buffers, during the transposes
  nki::kernel_check(w_bytes + w_stage_bytes <= sbuf_bytes / 2,
                    fmt::format("the weights W {} need {} bytes per partition in the SBUF (and {} more while they are "
                                "transposed), more than the {} this kernel gives them",
                                W.shape().str(), w_bytes, w_stage_bytes, sbuf_bytes / 2));
  // Row group: R output rows in one PSUM bank (a multiple of pool_size); band: BR output rows
  // (a multiple of R, about 16, fewer if the SBUF is short).
  const int64_t R = std::min(Hout, BANK / Wout / pool_size * pool_size);
  nki::kernel_check(R >= pool_size, fmt::format("a pool window of {} rows of {} elements does not fit one PSUM bank",
                                                pool_size, Wout));
  auto band_bytes = [&](int64_t br) { return 2 * (CT * (br + K - 1) * Wd * esz + br / pool_size * Wo * esz); };
  int64_t BR = std::min(R * std::max<int64_t>(1, 16 / R), (Hout + R - 1) / R * R);
  while (BR > R && w_bytes + w_stage_bytes + band_bytes(BR) > sbuf_bytes) BR -= R;
  nki::kernel_check(w_bytes + w_stage_bytes + band_bytes(BR) <= sbuf_bytes,
                    fmt::format("a band of {} rows of the {}-wide image and the weights need {} bytes per partition, "
                                "more than the SBUF's {}",
                                BR + K - 1, Wd, w_bytes + w_stage_bytes + band_bytes(BR), sbuf_bytes));
  const int64_t NBANDS = (Hout + BR - 1) / BR;

  return ConvPlan{B, Cin, H, Wd, Cout, K, P, Ho, Wo, Hout, Wout, BANK, CT, CO_T, KK, esz, R, BR, NBANDS, dtype};
}

// W[co, ci, i, j] -> w_T[ct][ci, ((cot * K + i) * K + j) * 128 + co], through PSUM (nc_transpose),
// and the bias into bias_sb[cot].
void transpose_weights(const ConvPlan& c, const Tensor& W, const Tensor& bias, const Tensor& w_T,
                       const Tensor& bias_sb) {
  const int64_t P = c.P, BANK = c.BANK, KK = c.KK, Cin = c.Cin, CT = c.CT, CO_T = c.CO_T;
  const nki::Dtype dtype = c.dtype;
  const Tensor bias_v = bias.reshape({CO_T, P, 1});
  const int64_t PER_BANK = BANK / P;                     // transposed blocks per PSUM bank
  const int64_t NB = (KK + PER_BANK - 1) / PER_BANK;     // banks for one (cot, ct)
  for (int64_t cot : nl::affine_range(CO_T)) {
    nisa::dma_copy(bias_sb[cot], bias_v[cot]);
    Tensor w_nat = nl::ndarray({P, Cin * KK}, dtype, nl::sbuf, "w_nat");
    nisa::dma_copy(w_nat, W(nl::ds(cot * P, P)));
    const Tensor w_view = w_nat.reshape({P, Cin, KK});  // [co, ci, i*K + j]
    for (int64_t ct : nl::affine_range(CT)) {
      Tensor w_ps = nl::ndarray({NB, nl::par_dim(P), BANK}, nl::float32, nl::psum, "w_psum");
      for (int64_t ij = 0; ij < KK; ++ij)
        nisa::nc_transpose(w_ps[ij / PER_BANK](nl::all, nl::ds((ij % PER_BANK) * P, P)),
                           w_view(nl::all, nl::ds(ct * P, P), ij));
      for (int64_t b = 0; b < NB; ++b) {
        const int64_t w = std::min(BANK, (KK - b * PER_BANK) * P);
        nisa::tensor_copy(w_T[ct](nl::all, nl::ds((cot * KK + b * PER_BANK) * P, w)), w_ps[b](nl::all, nl::ds(0, w)));
      }
    }
  }

}

// The conv + bias of one row group (acc, rg rows in PSUM) into dst: pooled over pool_size x
// pool_size windows (a column reduce, then a max over each window's rows) unless pool_size is 1.
void bias_and_pool(const ConvPlan& c, const Tensor& dst, const Tensor& acc, const Tensor& bias_tile, int64_t rg,
                   int64_t pool_size) {
  const int64_t P = c.P, R = c.R, Wout = c.Wout, Wo = c.Wo;
  if (pool_size == 1) {
    nisa::activation(dst, nl::identity, acc, bias_tile);
    return;
  }
  Tensor y = nl::ndarray({P, R * Wout}, c.dtype, nl::sbuf, "conv_rows");
  Tensor yv = y(nl::all, nl::ds(0, rg * Wout));
  nisa::activation(yv, nl::identity, acc, bias_tile);
  // max over each window's columns, then over its rows
  Tensor cols = nl::ndarray({P, R * Wo}, c.dtype, nl::sbuf, "pool_cols");
  Tensor cv = cols(nl::all, nl::ds(0, rg * Wo));
  nisa::tensor_reduce(cv, nl::maximum, yv.reshape({P, rg * Wo, pool_size}), 2);
  const Tensor win = cv.reshape({P, rg / pool_size, pool_size, Wo});
  const Tensor d = dst.reshape({P, rg / pool_size, Wo});
  nisa::tensor_tensor(d, win(nl::all, nl::all, 0), win(nl::all, nl::all, 1), nl::maximum);
  for (int64_t q = 2; q < pool_size; ++q) nisa::tensor_tensor(d, d, win(nl::all, nl::all, q), nl::maximum);
}

}  // namespace

Tensor fused_conv2d_maxpool(const Tensor& X, const Tensor& W, const Tensor& bias, int64_t pool_size) {
  const ConvPlan c = plan_conv(X, W, bias, pool_size);
  const int64_t B = c.B, K = c.K, P = c.P, Wd = c.Wd, Ho = c.Ho, Wo = c.Wo, Hout = c.Hout, Wout = c.Wout;
  const int64_t CT = c.CT, CO_T = c.CO_T, BR = c.BR, R = c.R, NBANDS = c.NBANDS, Cout = c.Cout, KK = c.KK;
  const nki::Dtype dtype = c.dtype;

  Tensor out = nl::ndarray({B, Cout, Ho, Wo}, dtype, nl::shared_hbm, "out");

  // --- weights: W[co, ci, i, j] -> w_T[ct][ci, ((cot * K + i) * K + j) * 128 + co] --------------
  Tensor w_T = nl::ndarray({CT, nl::par_dim(P), CO_T * KK * P}, dtype, nl::sbuf, "w_T");
  // The bands' buffers are placed now, beside the weights' staging tiles rather than over them,
  // so that the first band loads while the weights are transposed.
  Tensor x_bufs = nl::ndarray({2, CT, nl::par_dim(P), (BR + K - 1) * Wd}, dtype, nl::sbuf, "x_band");
  Tensor o_bufs = nl::ndarray({2, nl::par_dim(P), BR / pool_size * Wo}, dtype, nl::sbuf, "out_band");
  Tensor bias_sb = nl::ndarray({CO_T, nl::par_dim(P), 1}, dtype, nl::sbuf, "bias_sb");
  transpose_weights(c, W, bias, w_T, bias_sb);

  // --- the layer ------------------------------------------------------------------------------
  // The double buffers are picked from the loop indices (the bands in the order they are
  // loaded), as the NKI twin must: NKI traces a loop body once.
  for (int64_t b : nl::affine_range(B)) {
    for (int64_t band : nl::affine_range(NBANDS)) {
      const int64_t r0 = band * BR, br = std::min(BR, Hout - r0);
      Tensor x_band = x_bufs[(b * NBANDS + band) % 2];
      for (int64_t ct = 0; ct < CT; ++ct)
        nisa::dma_copy(x_band[ct](nl::all, nl::ds(0, (br + K - 1) * Wd)),
                       X[b](nl::ds(ct * P, P), nl::ds(r0, br + K - 1), nl::all));
      for (int64_t cot : nl::affine_range(CO_T)) {
        Tensor out_band = o_bufs[((b * NBANDS + band) * CO_T + cot) % 2];
        for (int64_t g : nl::affine_range((br + R - 1) / R)) {
          const int64_t rg = std::min(R, br - g * R);  // rows in this group
          Tensor ps = nl::ndarray({P, R * Wout}, nl::float32, nl::psum, "conv_psum");
          Tensor acc = ps(nl::all, nl::ds(0, rg * Wout));
          int64_t n = 0;
          for (int64_t ct = 0; ct < CT; ++ct) {
            const Tensor rows = x_band[ct].reshape({P, BR + K - 1, Wd});
            for (int64_t i = 0; i < K; ++i)
              for (int64_t j = 0; j < K; ++j)
                nisa::nc_matmul(acc, w_T[ct](nl::all, nl::ds(((cot * K + i) * K + j) * P, P)),
                                rows(nl::all, nl::ds(g * R + i, rg), nl::ds(j, Wout)), n++ > 0);
          }
          bias_and_pool(c, out_band(nl::all, nl::ds(g * R / pool_size * Wo, rg / pool_size * Wo)), acc, bias_sb[cot],
                        rg, pool_size);
        }
        nisa::dma_copy(out(b, nl::ds(cot * P, P), nl::ds(r0 / pool_size, br / pool_size)),
                       out_band(nl::all, nl::ds(0, br / pool_size * Wo)));
      }
    }
  }
  return out;
}

// --- declaration ----------------------------------------------------------------------------

namespace {

Param size(std::string name, std::string flag, std::string help, int64_t def, std::string what,
           std::vector<std::pair<std::string, int>> from) {
  return Param{.name = std::move(name),
               .flag = std::move(flag),
               .help = std::move(help),
               .def = def,
               .what = std::move(what),
               .from_inputs = std::move(from)};
}

const Register conv{Kernel{
    .name = "conv",
    .function = "fused_conv2d_maxpool",
    .doc = "fused_conv2d_maxpool (handout part 2): out = maxpool(conv2d(X, W) + bias, --pool-size) for X [--batch, "
           "--in-channels, --height, --width] and W [--out-channels, --in-channels, --filter, --filter], stride 1, no "
           "padding; channels multiples of 128; inputs from --x/--w/--bias .npy files or random (--no-bias: zeros); "
           "sums in fp32 (compared with the reference within the forward error bound of the accumulation)",
    .params = {size("batch", "--batch", "images in X", 4, "batch size", {{"X", 0}}),
               size("in_channels", "--in-channels", "input channels, a multiple of 128", 128, "input channel count",
                    {{"X", 1}, {"W", 1}}),
               size("out_channels", "--out-channels", "output channels, a multiple of 128", 128,
                    "output channel count", {{"W", 0}, {"bias", 0}}),
               size("height", "--height", "image height", 32, "image height", {{"X", 2}}),
               size("width", "--width", "image width", 16, "image width", {{"X", 3}}),
               size("filter", "--filter", "filter height and width", 3, "filter size", {{"W", 2}, {"W", 3}}),
               size("pool_size", "--pool-size", "max-pool window and stride; 1 is no pooling", 1, "pool size", {}),
               {.name = "bias", .flag = "--no-bias", .help = "a bias of zeros instead of random", .def = 1, .is_switch = true}},
    .inputs = {{.name = "X",
                .shape = [](const Values& v) { return Dims{v["batch"], v["in_channels"], v["height"], v["width"]}; },
                .help = "input images [batch, in channels, height, width]",
                .dims = {"batch", "in channels", "height", "width"},
                .file_flag = "--x"},
               {.name = "W",
                .shape = [](const Values& v) { return Dims{v["out_channels"], v["in_channels"], v["filter"], v["filter"]}; },
                .help = "weights [out channels, in channels, filter height, filter width]",
                .dims = {"out channels", "in channels", "filter height", "filter width"},
                .file_flag = "--w"},
               {.name = "bias",
                .shape = [](const Values& v) { return Dims{v["out_channels"]}; },
                .help = "bias [out channels]",
                .dims = {"out channels"},
                .file_flag = "--bias",
                .zeros = [](const Values& v) { return v["bias"] == 0; }}},
    .outputs = {{.name = "out",
                 .shape =
                     [](const Values& v) {
                       const int64_t p = v["pool_size"];
                       return Dims{v["batch"], v["out_channels"], (v["height"] - v["filter"] + 1) / p,
                                   (v["width"] - v["filter"] + 1) / p};
                     },
                 .help = "maxpool(conv2d(X, W) + bias) [batch, out channels, height', width']"}},
    .body = [](const Inputs& in, const Values& v) { return Outputs{fused_conv2d_maxpool(in[0], in[1], in[2], v["pool_size"])}; },
    .reference = ref::conv,
    .exact = false,
    .error_bound = ref::conv_bound,
    .example = "--check",
    .waves = "conv"}};

}  // namespace

}  // namespace kernels
