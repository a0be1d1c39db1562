// nki.isa (nisa): the instructions a kernel issues. Each call checks its operands against
// the hardware's rules (NKI's error wording, plus the kernel location), lowers them to
// access patterns and hands the instruction to the scheduler.
//
// Argument order follows NKI 2.x (destination first). The forms without a destination
// allocate their result tile at the call site (SBUF; PSUM for the tensor engine), as NKI 0.x did.
//
// Tensor engine (spec 1.4, 2.1, 2.2). nc_matmul(dst, stationary, moving) computes
// dst[M, N] = stationary[K, M].T @ moving[K, N]: K <= 128 partitions shared by both operands
// (the contraction), M <= 128 (gemm_stationary_fmax), N <= 512 (gemm_moving_fmax), both in
// SBUF, fp32 pairing only with fp32 (bf16 and fp16 mix freely); dst is a float32 PSUM tile of
// M partitions x N elements inside one bank. It lowers to two instructions on the tensor
// engine's stream: load_stationary (the operand into the array; skipped when the array
// already holds the same unchanged operand, see TraceOptions::reuse_stationary) and
// multiply_moving, whose products are exact and summed in fp32 down k = 0..K-1 from +0.
//
// accumulate: false overwrites dst, true adds into it, and std::nullopt (NKI's None, the
// default) infers: the first matmul into a PSUM region since its tile was allocated or last
// read overwrites (it starts the accumulation group), later ones add. The handout's form
//
//   res_psum += nisa::nc_matmul(lhsT_tile, rhs_tile);
//
// is nc_matmul(res_psum, lhsT_tile, rhs_tile) with accumulate inferred; on a tile from
// nl::zeros it gives the same bits as adding into zeros. nc_matmul(stationary, moving) alone
// converts to a new float32 PSUM tile [M, N] (NKI 0.x), allocated at the call.
//
// nc_transpose(data) runs on the tensor engine as a matmul with `data` [P <= 128, F <= 128]
// (SBUF) as the stationary operand and an identity [P, P] as the moving one: the result is
// [F, P] float32 in PSUM, out[f, p] = data[p, f]. The identity is a hidden SBUF tile loaded
// once per kernel by a dma_copy from a constant HBM tensor (identity_fp32 for fp32 data,
// identity_bf16 for bf16/fp16 data). As on NeuronCore-v2, which is not bit-exact in this mode,
// the multiply maps -0 to +0, and a NaN or infinity in data[p, f] turns every other element of
// output row f into NaN (0 x inf); finite values come out exactly. Copy the result out of PSUM
// with tensor_copy (or nl::copy), casting to the dtype wanted.
#pragma once

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "nki/loc.hpp"
#include "nki/tensor.hpp"

namespace nki {

// A tensor_scalar operand: an fp32 immediate or a (P, 1) tile (one value per partition).
class Operand {
 public:
  Operand() = default;
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T v) : kind_(imm), value_(static_cast<float>(v)) {}
  Operand(const Tensor& t) : kind_(tile), tensor_(t) {}

  bool none() const { return kind_ == absent; }
  bool is_imm() const { return kind_ == imm; }
  bool is_tile() const { return kind_ == tile; }
  float value() const { return value_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  enum Kind { absent, imm, tile } kind_ = absent;
  float value_ = 0;
  Tensor tensor_;
};

namespace nisa {

// dst <- src between HBM and SBUF (either way) or within one of them; casts through fp32.
void dma_copy(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());

// src (HBM or SBUF) with its axes permuted as NKI's dma_transpose permutes them ([1, 0] for 2-D,
// [2, 1, 0] for 3-D, [3, 1, 2, 0] for 4-D), into a new SBUF tile (in src's dtype unless given) or
// dst: one dma_copy whose source access pattern walks src in the permuted order. An SBUF source
// is first copied to an HBM scratch tensor (a second dma_copy): a DMA reads an SBUF tile one
// partition at a time, so it cannot turn partitions into a free axis in one transfer.
Tensor dma_transpose(const Tensor& src, Loc loc = Loc::here());
Tensor dma_transpose(const Tensor& src, Dtype dtype, Loc loc = Loc::here());
void dma_transpose(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());

// data1 op data2, elementwise; the result in the operands' promoted dtype (promote).
Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Loc loc = Loc::here());
Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Dtype dtype, Loc loc = Loc::here());
void tensor_tensor(const Tensor& dst, const Tensor& data1, const Tensor& data2, AluOp op, Loc loc = Loc::here());

// (data op0 operand0) op1 operand1; reverse0/1 swap the operands of op0/op1.
Tensor tensor_scalar(const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0 = false,
                     AluOp op1 = AluOp::bypass, const Operand& operand1 = {}, bool reverse1 = false,
                     Loc loc = Loc::here());
void tensor_scalar(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0 = false,
                   AluOp op1 = AluOp::bypass, const Operand& operand1 = {}, bool reverse1 = false,
                   Loc loc = Loc::here());

// A copy on the vector engine, with a dtype cast when the dtypes differ.
Tensor tensor_copy(const Tensor& src, Loc loc = Loc::here());
Tensor tensor_copy(const Tensor& src, Dtype dtype, Loc loc = Loc::here());
void tensor_copy(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());

// Fill with a constant.
void memset(const Tensor& dst, float value, Loc loc = Loc::here());

// The free axes a reduction runs over, as NKI's `axis` (an int or a tuple of ints): indices into
// the tile's shape with 0 the partition dimension, and, as NKI requires, the last ones (for a
// [P, a, b, c] tile: {3}, {2, 3} or {1, 2, 3}).
struct Axes {
  Axes(int a) : v{a} {}
  Axes(std::initializer_list<int> l) : v(l) {}
  explicit Axes(std::vector<int> l) : v(std::move(l)) {}
  std::vector<int> v;
};

// nisa.tensor_reduce (vector engine): op (add, multiply, max, min) over the axes of data, in
// fp32, rounded once to dtype; the result has data's partitions and its other free dimensions
// (keepdims: the reduced ones kept with size 1). The elements of each group are folded in order
// from the first. The destination form takes the result tile as the first argument.
Tensor tensor_reduce(AluOp op, const Tensor& data, const Axes& axis, Loc loc = Loc::here());
Tensor tensor_reduce(AluOp op, const Tensor& data, const Axes& axis, Dtype dtype, bool keepdims = false,
                     Loc loc = Loc::here());
void tensor_reduce(const Tensor& dst, AluOp op, const Tensor& data, const Axes& axis, Loc loc = Loc::here());

// nisa.activation (scalar engine): op(data * scale + bias), in fp32 (the product and the sum each
// rounded to fp32), rounded once to the destination's dtype. scale: an immediate (default 1.0)
// or an fp32 (P, 1) tile; bias: none (default), an immediate, or a (P, 1) tile, any dtype. data
// and the destination may be in the SBUF or the PSUM (the usual way out of PSUM with a bias).
Tensor activation(ActFunc op, const Tensor& data, const Operand& bias = {}, const Operand& scale = 1.0f,
                  Loc loc = Loc::here());
Tensor activation(ActFunc op, const Tensor& data, const Operand& bias, const Operand& scale, Dtype dtype,
                  Loc loc = Loc::here());
void activation(const Tensor& dst, ActFunc op, const Tensor& data, const Operand& bias = {},
                const Operand& scale = 1.0f, Loc loc = Loc::here());
// nisa.activation_reduce: the same, and also the sum of op's fp32 outputs along the free axis of
// each partition (reduce_op add only), rounded once into reduce_res, a (P, 1) tile.
void activation_reduce(const Tensor& dst, ActFunc op, const Tensor& data, AluOp reduce_op, const Tensor& reduce_res,
                       const Operand& bias = {}, const Operand& scale = 1.0f, Loc loc = Loc::here());

// nc_matmul's accumulate flag: false, true, or std::nullopt (NKI's None: inferred).
using Accumulate = std::optional<bool>;

// dst = stationary.T @ moving (accumulate = false), dst += ... (true), or inferred.
void nc_matmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving, Accumulate accumulate = std::nullopt,
               Loc loc = Loc::here());

// What nc_matmul(stationary, moving) returns: the product, not yet placed. `psum += it`
// accumulates it into a PSUM tile (accumulate inferred); converting it to a Tensor puts it in
// a new PSUM tile. It must be used exactly once: one left unused is reported by the next API
// call (or at the end of the trace) as an error.
class [[nodiscard]] MatmulResult {
 public:
  MatmulResult(const Tensor& stationary, const Tensor& moving, Loc loc);
  MatmulResult(const MatmulResult&) = delete;
  MatmulResult& operator=(const MatmulResult&) = delete;
  MatmulResult(MatmulResult&& o) noexcept;
  ~MatmulResult();

  operator Tensor() const;               // a new float32 PSUM tile [M, N], overwritten
  void add_to(const Tensor& dst) const;  // nc_matmul(dst, stationary, moving), accumulate inferred

 private:
  void use() const;
  Tensor stationary_, moving_;
  Loc loc_;
  mutable bool used_ = false;
};

MatmulResult nc_matmul(const Tensor& stationary, const Tensor& moving, Loc loc = Loc::here());

// Transpose on the tensor engine: data [P <= 128, F <= 128] in SBUF to [F, P] float32 in PSUM.
Tensor nc_transpose(const Tensor& data, Loc loc = Loc::here());
void nc_transpose(const Tensor& dst, const Tensor& data, Loc loc = Loc::here());


// --- Calls lowered to sequences of the instructions above (kernels/nki/src/compose.cpp) --------
// Each is what a compiler for this instruction set emits for the NKI call: docs/nki-python.md lists
// the instructions of each. Intermediate results are float32 tiles, so each result is rounded once to
// its dtype. The select-like calls (affine_select, tensor_copy_predicated, nl::where) are a
// maximum and a minimum against +-infinity; they give every value exactly (signed zeros and
// infinities included), except that a NaN in the operand not selected makes the result NaN.

// An affine expression of a grid's index variables: start + sum over axes a of coeff[a] * i_a,
// i_a in [0, grid[a]) (axis 0 the partitions): NKI's nl.arange / nl.mgrid expressions.
struct Affine {
  int64_t start = 0;
  std::vector<int64_t> coeff;
  std::vector<int64_t> grid;
};
// A predicate of affine expressions: every term's `expr cmp 0` holds (cmp one of the
// comparisons: greater, greater_equal, less, less_equal, equal, not_equal). NKI's
// `i_p - i_f >= 0`; a bare expression e means e > 0.
struct AffinePredicate {
  std::vector<std::pair<Affine, AluOp>> terms;
};

// nisa.iota: the expression's values (int32 arithmetic, cast to dtype through fp32) as a new
// SBUF tile of the grid's shape: a constant HBM tensor of the values and one dma_copy.
Tensor iota(const Affine& expr, Dtype dtype, Loc loc = Loc::here());
void iota(const Tensor& dst, const Affine& expr, Loc loc = Loc::here());

// nisa.affine_select: on_true_tile where the predicate holds, on_false_value (float32) where not:
// a constant [P, 2F] tile of the bounds (-inf/+inf where it holds, on_false_value where not)
// loaded by one dma_copy, then tensor_tensor max and tensor_tensor min.
void affine_select(const Tensor& dst, const AffinePredicate& pred, const Tensor& on_true_tile, float on_false_value,
                   Loc loc = Loc::here());

// nisa.tensor_copy_predicated: dst = predicate ? src : dst, element-wise (reverse_pred: where the
// predicate is zero). The predicate is a tile of dst's shape, true where non-zero (this model
// has no integer dtypes); src a tile of dst's shape and dtype, a (P, 1) tile or a number.
void tensor_copy_predicated(const Tensor& dst, const Operand& src, const Tensor& predicate, bool reverse_pred = false,
                            Loc loc = Loc::here());

// nisa.scalar_tensor_tensor: (data op0 operand0) op1 operand1, operand0 a number or (P, 1) tile,
// operand1 a tile of data's shape: tensor_scalar into float32, then tensor_tensor.
void scalar_tensor_tensor(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, AluOp op1,
                          const Tensor& operand1, bool reverse0 = false, bool reverse1 = false, Loc loc = Loc::here());

// nisa.tensor_scalar_reduce: dst = data op0 operand0, and reduce_res (P, 1) = reduce_op (add,
// multiply, maximum, minimum) of its float32 values over every free axis: tensor_scalar, then
// tensor_reduce (and a tensor_copy when dst is not float32).
void tensor_scalar_reduce(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, AluOp reduce_op,
                          const Tensor& reduce_res, bool reverse0 = false, Loc loc = Loc::here());

// nisa.tensor_tensor_scan on 2-D tiles: r[:, 0] = (data0[:, 0] op0 initial) op1 data1[:, 0],
// r[:, i] = (data0[:, i] op0 r[:, i-1]) op1 data1[:, i] (reverse0/1 swap op0's/op1's operands),
// carried in float32: one tensor_scalar per column, the previous column and data1's column as its
// two per-partition operands (and a tensor_copy when dst is not float32).
void tensor_tensor_scan(const Tensor& dst, const Tensor& data0, const Tensor& data1, const Operand& initial,
                        AluOp op0, AluOp op1, bool reverse0 = false, bool reverse1 = false, Loc loc = Loc::here());

// nisa.bn_stats: data (at most 512 elements per partition, nl.tile_size.bn_stats_fmax) to
// dst (P, 6): count, mean and count * variance of the even-indexed elements, then of the odd ones.
// Per half: memset (count), tensor_reduce add, tensor_scalar divide (mean), tensor_scalar
// (-mean), activation_reduce square with bias -mean (the sum of squared deviations).
void bn_stats(const Tensor& dst, const Tensor& data, Loc loc = Loc::here());
Tensor bn_stats(const Tensor& data, Dtype dtype, Loc loc = Loc::here());
// nisa.bn_aggr: k (count, mean, count * variance) triples per partition (data (P, 3k)) to dst
// (P, 2): the mean and the variance of all the elements they describe (Chan's combination:
// mean = sum(c m) / n, n var = sum(c var) + sum(c (m - mean)^2)), on the vector engine.
void bn_aggr(const Tensor& dst, const Tensor& data, Loc loc = Loc::here());
Tensor bn_aggr(const Tensor& data, Dtype dtype, Loc loc = Loc::here());

// The top-8 calls, on data of 8 to 16384 elements per partition (its free axes flattened), with
// a constant index tile (0 .. F-1 on every partition, by nisa::iota) and min / max reductions:
// a position is found as the minimum over (x != v) * 2^24 + index, and taken (ruled out of later
// searches) by adding 2^24 to its index entry.
// max8: the 8 largest values of each partition in descending order (a value occurring twice
// counts twice) into dst (P, 8): per value a tensor_reduce max, then (but after the last) its
// first position set to -inf (tensor_scalar, tensor_tensor, tensor_reduce min, two tensor_scalar,
// tensor_tensor min).
void max8(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());
Tensor max8(const Tensor& src, Dtype dtype, Loc loc = Loc::here());
// nc_find_index8: the position of the first occurrence of each of vals' 8 values (P, 8) in data,
// as float32 (the model has no integer dtypes); a value given twice takes its first two
// occurrences, in order. Per value: tensor_scalar, tensor_tensor, tensor_reduce min, then the
// position taken (tensor_scalar, tensor_tensor).
void nc_find_index8(const Tensor& dst, const Tensor& data, const Tensor& vals, Loc loc = Loc::here());
Tensor nc_find_index8(const Tensor& data, const Tensor& vals, Dtype dtype, Loc loc = Loc::here());
// nc_match_replace8: data with the first occurrence of each of vals' values replaced by imm, into
// dst; dst_idx (optional, (P, 8)) receives their positions. vals are matched last to first (a value
// given twice: its first occurrence goes to the later column), then one select (as nl::where).
void nc_match_replace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
                       const Tensor* dst_idx = nullptr, Loc loc = Loc::here());

// nisa.dropout: data with each element replaced by 0 with probability prob (a number or a (P, 1)
// tile): the kernel's next random numbers (see nl::rand) as a constant float32 tile by one
// dma_copy, tensor_scalar greater_equal prob (kept where u >= prob), then the select of nl::where.
// Not rescaled (NKI's dropout zeroes only).
void dropout(const Tensor& dst, const Tensor& data, const Operand& prob, Loc loc = Loc::here());

}  // namespace nisa

// psum_tile += nisa::nc_matmul(stationary, moving): the handout's accumulation.
inline const Tensor& operator+=(const Tensor& dst, const nisa::MatmulResult& product) {
  product.add_to(dst);
  return dst;
}

}  // namespace nki
