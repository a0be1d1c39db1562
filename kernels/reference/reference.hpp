// The kernels' plain C++ references: what each kernel's output should be, computed from the
// input bytes with host arithmetic, for the per-kernel check ("Correctness passed?").
//
// Why they are independent of the golden model. The model is checked at three depths: each
// instruction on the RTL against the golden model (check mode), each RTL module by its unit
// bench, and each kernel's output against these references. The first two share the golden
// model's numerics (tb/golden): a mistake there (a wrong rounding, a dropped subnormal, an
// operand read in the wrong order) would be reproduced by the RTL check and go unseen. The
// references therefore use none of it: no ISA semantics, no golden model, no access patterns,
// only the inputs' bytes, their own dtype conversions (host_float.hpp) and host float or double
// arithmetic, summed in an order of their own (matmul and conv in double, rounded once to the
// dtype). Where the kernel's result is not the exact answer (the tensor engine sums in fp32 in
// its own order) the kernel's declaration says so (Kernel::exact) and the comparison allows
// for it.
//
// Each takes the kernel's parameter values and its inputs by name (checked against the
// declaration by kernels::reference()) and returns the outputs by name.
#pragma once

#include "kernels/kernel.hpp"

namespace kernels::ref {

// out = a_vec + b_vec: the sum in fp32 (exact for these inputs' widths, then one rounding), rounded once to the dtype.
ByteMap vector_add(const Values& v, const ByteMap& in);
// out (n, m) = scores (n, m) where column <= row, -inf elsewhere (exact).
ByteMap causal_mask(const Values& v, const ByteMap& in);
// out (m, n) = a_tensor (n, m) transposed, exactly (a permutation of the elements).
ByteMap transpose(const Values& v, const ByteMap& in);
// result (m, n) = lhsT (k, m).T @ rhs (k, n): the products summed in double, rounded once.
ByteMap matmul(const Values& v, const ByteMap& in);
// Its error bound: per element the sum of |lhsT[k, i] * rhs[k, j]|, over k + ceil(k / 128) + 1
// roundings.
ErrorBound matmul_bound(const Values& v, const ByteMap& in);
// out = maxpool(conv2d(X, W) + bias): per output channel the sums over (ci, i, j) in double,
// plus the bias, max-pooled, rounded once to the dtype. The output channels are split over the
// machine's cores.
ByteMap conv(const Values& v, const ByteMap& in);
// Its error bound: per element the largest sum of |products| + |bias| over its pool window,
// over Cin * K * K + ceil(Cin / 128) * K * K + 1 roundings.
ErrorBound conv_bound(const Values& v, const ByteMap& in);

}  // namespace kernels::ref
