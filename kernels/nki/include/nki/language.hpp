// nki.language (nl): dtypes, buffers, ALU op names, tensor creation, slicing helpers and the
// loop ranges whose iterations the tracer follows.
#pragma once

#include <cstdint>
#include <string>

#include <optional>
#include <vector>

#include "nki/isa.hpp"
#include "nki/loc.hpp"
#include "nki/tensor.hpp"

namespace nki {

namespace detail {
class TracerImpl;
}

// The iterable returned by affine_range / sequential_range. The tracer learns from it when
// the loop starts (begin), which iteration runs (each dereference) and when the loop is left
// (its destructor, which a range-for runs after the last iteration or a break). Tiles
// allocated in the body belong to the innermost such loop.
class Range {
 public:
  Range(int64_t n, bool sequential, Loc loc);
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
  ~Range();

  class iterator {
   public:
    int64_t operator*() const;
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    friend class Range;
    iterator(const Range* r, int64_t i) : r_(r), i_(i) {}
    const Range* r_;
    int64_t i_;
  };
  iterator begin();
  iterator end() const { return iterator(this, n_); }
  int64_t size() const { return n_; }

 private:
  int64_t n_;
  bool sequential_;
  Loc loc_;
  detail::TracerImpl* tracer_ = nullptr;
  uint64_t frame_ = 0;
};

// A kernel's own precondition (NKI kernels assert them in Python): throws KernelError with
// `message` and the kernel location when `cond` is false.
void kernel_check(bool cond, const std::string& message, Loc loc = Loc::here());

namespace nl {

inline constexpr Dtype float32 = Dtype::float32, bfloat16 = Dtype::bfloat16, float16 = Dtype::float16,
                       tfloat32 = Dtype::tfloat32, float8_e4m3 = Dtype::float8_e4m3, float8_e5m2 = Dtype::float8_e5m2;
inline constexpr Dtype int8 = Dtype::int8, uint8 = Dtype::uint8, int16 = Dtype::int16, uint16 = Dtype::uint16,
                       int32 = Dtype::int32, uint32 = Dtype::uint32;

inline constexpr Buffer hbm{BufferKind::hbm}, shared_hbm{BufferKind::shared_hbm}, sbuf{BufferKind::sbuf},
    psum{BufferKind::psum};

// An ALU op by its NKI name. It is an op argument (nisa::tensor_tensor(a, b, nl::add)) and the
// element-wise call of NKI's language, nl::add(x, y) (see elementwise below).
struct AluFn {
  AluOp op;
  constexpr operator AluOp() const { return op; }
  Tensor operator()(const Operand& x, const Operand& y, Loc loc = Loc::here()) const;
  Tensor operator()(const Operand& x, const Operand& y, Dtype dtype, Loc loc = Loc::here()) const;
  // A unary op (logical_not) of x; the binary ones need two operands.
  Tensor operator()(const Tensor& x, Loc loc = Loc::here()) const;
};
inline constexpr AluFn add{AluOp::add};
inline constexpr AluFn subtract{AluOp::subtract};
inline constexpr AluFn multiply{AluOp::multiply};
inline constexpr AluFn maximum{AluOp::max};
inline constexpr AluFn minimum{AluOp::min};
inline constexpr AluFn divide{AluOp::divide};
// Comparisons: 1.0 where true, 0.0 where not, in the result's dtype (NKI's default dtype is bool,
// which this model does not have: the result takes the tile operand's dtype, as for add).
inline constexpr AluFn equal{AluOp::equal};
inline constexpr AluFn not_equal{AluOp::not_equal};
inline constexpr AluFn greater{AluOp::greater};
inline constexpr AluFn greater_equal{AluOp::greater_equal};
inline constexpr AluFn less{AluOp::less};
inline constexpr AluFn less_equal{AluOp::less_equal};
// power (NumPy's pow), mod (NumPy's, the sign of the divisor: Python's %), fmod (C's, the sign of
// the dividend), and the logical ops (nonzero is true; 1.0 / 0.0 as the comparisons).
inline constexpr AluFn power{AluOp::power};
inline constexpr AluFn mod{AluOp::mod};
inline constexpr AluFn fmod{AluOp::fmod};
inline constexpr AluFn logical_and{AluOp::logical_and};
inline constexpr AluFn logical_or{AluOp::logical_or};
inline constexpr AluFn logical_xor{AluOp::logical_xor};
// logical_not: the ALU's unary op (its second operand unused); nl::logical_not(x) is one
// tensor_scalar.
inline constexpr AluFn logical_not{AluOp::logical_not};
// The bitvec ops, on integer tiles (every operand and the result one integer dtype): the
// elements' bits, not float32. invert is unary, as logical_not; the shifts are logical.
inline constexpr AluFn bitwise_and{AluOp::bitwise_and};
inline constexpr AluFn bitwise_or{AluOp::bitwise_or};
inline constexpr AluFn bitwise_xor{AluOp::bitwise_xor};
inline constexpr AluFn invert{AluOp::invert};
inline constexpr AluFn left_shift{AluOp::left_shift};
inline constexpr AluFn right_shift{AluOp::right_shift};
inline constexpr AluOp bypass = AluOp::bypass;

// An activation function by its NKI name. It is the op argument of nisa::activation
// (nisa::activation(nl::exp, x)) and NKI's element-wise call, nl::exp(x): one activation
// instruction on the scalar engine into a new SBUF tile of `dtype` (default: x's dtype).
struct ActFn {
  ActFunc f;
  constexpr operator ActFunc() const { return f; }
  Tensor operator()(const Tensor& x, Loc loc = Loc::here()) const;
  Tensor operator()(const Tensor& x, Dtype dtype, Loc loc = Loc::here()) const;
};
// NKI's nl.copy as a function argument is nl::identity here (nl::copy is the tensor copy below).
inline constexpr ActFunc identity = ActFunc::copy;
inline constexpr ActFn relu{ActFunc::relu};
inline constexpr ActFn exp{ActFunc::exp};
inline constexpr ActFn log{ActFunc::log};
inline constexpr ActFn tanh{ActFunc::tanh};
inline constexpr ActFn sigmoid{ActFunc::sigmoid};
inline constexpr ActFn sqrt{ActFunc::sqrt};
inline constexpr ActFn rsqrt{ActFunc::rsqrt};
inline constexpr ActFn reciprocal{ActFunc::reciprocal};
inline constexpr ActFn square{ActFunc::square};
inline constexpr ActFn abs{ActFunc::abs};
inline constexpr ActFn negative{ActFunc::negative};
inline constexpr ActFn sign{ActFunc::sign};
inline constexpr ActFn gelu_apprx_tanh{ActFunc::gelu_apprx_tanh};
inline constexpr ActFn silu{ActFunc::silu};
inline constexpr ActFn softplus{ActFunc::softplus};
inline constexpr ActFn gelu{ActFunc::gelu};
inline constexpr ActFn erf{ActFunc::erf};
inline constexpr ActFn sin{ActFunc::sin};
inline constexpr ActFn cos{ActFunc::cos};
inline constexpr ActFn tan{ActFunc::tan};
inline constexpr ActFn arctan{ActFunc::arctan};
inline constexpr ActFn mish{ActFunc::mish};
inline constexpr ActFn gelu_dx{ActFunc::gelu_dx};
inline constexpr ActFn gelu_apprx_sigmoid{ActFunc::gelu_apprx_sigmoid};
inline constexpr ActFn silu_dx{ActFunc::silu_dx};
inline constexpr ActFn erf_dx{ActFunc::erf_dx};
inline constexpr ActFn ceil{ActFunc::ceil};
inline constexpr ActFn floor{ActFunc::floor};
inline constexpr ActFn trunc{ActFunc::trunc};

struct tile_size {
  static constexpr int64_t pmax = 128;
  static constexpr int64_t gemm_stationary_fmax = 128;
  static constexpr int64_t gemm_moving_fmax = 512;
  static constexpr int64_t psum_fmax = 512;
};

// A new tensor. In HBM: a kernel-created tensor (its result, or scratch). In SBUF/PSUM: a
// tile placed by the automatic allocator. With an Alloc from ncc::sbuf::mod_alloc: placed
// exactly there. `name` is what error messages and the listing call it.
Tensor ndarray(const Shape& shape, Dtype dtype, Buffer buffer, Loc loc = Loc::here());
Tensor ndarray(const Shape& shape, Dtype dtype, Buffer buffer, const std::string& name, Loc loc = Loc::here());
Tensor ndarray(const Shape& shape, Dtype dtype, const Alloc& alloc, Loc loc = Loc::here());
Tensor ndarray(const Shape& shape, Dtype dtype, const Alloc& alloc, const std::string& name, Loc loc = Loc::here());

// A new on-chip tensor filled with zeros by a memset on the vector engine (nl.zeros). HBM
// tensors with an initial value are not supported, as in NKI.
Tensor zeros(const Shape& shape, Dtype dtype, Buffer buffer, Loc loc = Loc::here());
Tensor zeros(const Shape& shape, Dtype dtype, Buffer buffer, const std::string& name, Loc loc = Loc::here());

// Every element of an on-chip tensor set to `value`: one memset per logical tile (a tensor with
// block dimensions has several).
void fill(const Tensor& t, float value, Loc loc = Loc::here());

// A copy of an on-chip tile (SBUF or PSUM) into a new SBUF tile, cast to `dtype` (nl.copy;
// nisa::tensor_copy on the vector engine). res_sb = nl::copy(res_psum, result.dtype()).
Tensor copy(const Tensor& x, Dtype dtype, Loc loc = Loc::here());
Tensor copy(const Tensor& x, Loc loc = Loc::here());

// nl.load: a new SBUF tile holding the HBM view `src` (dimension 0 the partitions), read by
// one dma_copy, cast to `dtype` when given. nl.store: `value` (an SBUF tile) written to the HBM
// view `dst` by one dma_copy.
Tensor load(const Tensor& src, Loc loc = Loc::here());
Tensor load(const Tensor& src, Dtype dtype, Loc loc = Loc::here());
void store(const Tensor& dst, const Tensor& value, Loc loc = Loc::here());

// A tile of one partition, (1, f...), repeated on `partitions` partitions: a new SBUF tile
// (partitions, f...) of its dtype (NKI's broadcast_to and element-wise partition broadcast). The
// engines' lanes cannot read another partition, so it is lowered as NKI lowers it, on the tensor
// engine: a (1, partitions) tile of ones (memset) times the row, 512 columns per nc_matmul into
// PSUM, each copied to the SBUF (tensor_copy). Exact: each output is 1 * x + 0 in fp32, so values
// are kept bit for bit except that -0 becomes +0.
Tensor broadcast_partitions(const Tensor& row, int64_t partitions, Loc loc = Loc::here());

// A new SBUF tile for an instruction's result: shaped like the tile `like` (its block
// dimensions dropped), on the same partitions, of `dtype`.
Tensor result_tile(const Tensor& like, Dtype dtype, Loc loc = Loc::here());

// The element-wise operations of NKI's language (nl.add(x, y), ...) on the vector engine, into a
// new SBUF tile of `dtype` (default: the tile operand's dtype). Two tiles of one shape:
// tensor_tensor. A tile and a scalar, or a tile and a (P, 1) tile (broadcast along the free
// dimensions), either way round: tensor_scalar, its operands reversed when the scalar comes
// first. Two scalars are an error (the kernel can compute them itself).
Tensor elementwise(AluOp op, const Operand& x, const Operand& y, std::optional<Dtype> dtype, Loc loc = Loc::here());
// The same into `dst` (x[...] = nl.add(a, b)).
void elementwise(const Tensor& dst, AluOp op, const Operand& x, const Operand& y, Loc loc = Loc::here());


// --- Calls lowered to sequences of instructions (compose.cpp; see isa.hpp) ----------------------

// nl.shared_constant: a constant HBM tensor holding `values` (row-major) rounded to dtype, stored
// in the Program; nl.shared_identity_matrix: the [n, n] identity.
Tensor shared_constant(const std::vector<float>& values, const Shape& shape, Dtype dtype, Loc loc = Loc::here());
Tensor shared_identity_matrix(int64_t n, Dtype dtype, Loc loc = Loc::here());

// nl.where: x where condition is non-zero (NaN counts as true, as in NumPy), y elsewhere, into
// dst (condition's shape); x and y tiles of that shape, (P, 1) tiles or numbers.
void where(const Tensor& dst, const Tensor& condition, const Operand& x, const Operand& y, Loc loc = Loc::here());

// nl.var, nl.softmax, nl.all (all_of here: nl::all is the whole-dimension index) over the
// (trailing) free axes `axis` of x, in float32 until the one rounding to the result's dtype; the
// result is `dst` when given, else a new SBUF tile of `dtype` (x's shape with the axes removed;
// softmax: x's shape).
// var: the population variance (NumPy's ddof=0): tensor_reduce add, divide by n (the mean),
// subtract it, multiply (squares), tensor_reduce add, divide by n.
// softmax: tensor_reduce max, subtract it, exp, tensor_reduce add, divide by it.
// all_of: 1.0 where every element is non-zero (NaN counts as non-zero): not_equal 0, then
// tensor_reduce minimum.
Tensor var(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst = nullptr, Loc loc = Loc::here());
Tensor softmax(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst = nullptr,
               Loc loc = Loc::here());
Tensor all_of(const Tensor& x, const nisa::Axes& axis, Dtype dtype, const Tensor* dst = nullptr, Loc loc = Loc::here());

// nl.rms_norm: x / sqrt(sum(x^2 over axis) / n + epsilon) * w (w a tile of x's shape, a (P, 1)
// tile or a number): activation square, tensor_reduce add, tensor_scalar (divide by n, add
// epsilon), activation sqrt, divide, multiply. Into `dst`, else a new tile of `dtype`.
Tensor rms_norm(const Tensor& x, const Operand& w, const nisa::Axes& axis, int64_t n, float epsilon, Dtype dtype,
                const Tensor* dst = nullptr, Loc loc = Loc::here());

// nl.gather_flattened: out (indices' shape) [p, j] = data[p, indices[p, j]], the free axes of
// both flattened; indices float tiles of whole numbers (the model has no uint32). Per index column:
// a constant index tile compared with it (tensor_scalar equal, - 0.5; tensor_scalar * inf),
// tensor_tensor min with data, tensor_reduce max. Exact, except that a NaN anywhere in the row of
// data gives NaN; an index out of range gives -inf.
Tensor gather_flattened(const Tensor& data, const Tensor& indices, Dtype dtype, const Tensor* dst = nullptr,
                        Loc loc = Loc::here());

// nl.rand: a new SBUF tile of `shape` filled with uniform values in [0, 1): the kernel's next
// random numbers, on the grid k 2^-b the dtype holds exactly (b = 24 float32, 8 bfloat16, 11
// float16), from a splitmix64 stream that nl.random_seed starts (0 until called), as a constant
// HBM tensor loaded by one dma_copy. The values are fixed when the kernel is traced: every run of
// the Program sees the same ones, and the same seed gives the same sequence.
Tensor rand(const Shape& shape, Dtype dtype, Loc loc = Loc::here());
void random_seed(int64_t seed, Loc loc = Loc::here());

// nl.loop_reduce: dst = dst op x (tensor_tensor), the reduction a loop carries.
void loop_reduce(const Tensor& dst, const Tensor& x, AluOp op, Loc loc = Loc::here());

inline constexpr ParDim par_dim(int64_t n) { return ParDim{n}; }
inline constexpr Slice ds(int64_t start, int64_t size) { return Slice{start, size}; }
inline constexpr All all{};

Range affine_range(int64_t n, Loc loc = Loc::here());
Range sequential_range(int64_t n, Loc loc = Loc::here());

}  // namespace nl
}  // namespace nki
