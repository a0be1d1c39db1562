// The fused convolution + max-pool layer of handout 003, part 2, in the NKI-like C++ API.
#pragma once

#include <cstdint>

#include "nki/tensor.hpp"

namespace kernels {

// out[b, co, y, x] = max over the pool_size x pool_size window at (y, x) of
//   bias[co] + sum over ci, i, j of W[co, ci, i, j] * X[b, ci, y' + i, x' + j]
// for X [B, Cin, H, W] and W [Cout, Cin, K, K] in HBM: stride 1, no padding, max pool with
// window and stride pool_size (1: no pooling) over the whole windows: the output is
// ((H - K + 1) // pool_size, (W - K + 1) // pool_size), as PyTorch's max_pool2d, the rows and
// columns past the last window dropped. Cin and Cout multiples of 128, W - K + 1 <= 512 (one
// PSUM bank), the weights
// small enough for the SBUF. Products exact and summed in fp32 on the tensor engine; bias added
// and the result rounded once to X's dtype on the scalar engine; no intermediate result goes to
// HBM. See conv.cpp for the tiling.
nki::Tensor fused_conv2d_maxpool(const nki::Tensor& X, const nki::Tensor& W, const nki::Tensor& bias,
                                 int64_t pool_size);

}  // namespace kernels
