// nki.language: tensor creation and the loop ranges. See language.hpp.
#include "nki/language.hpp"

#include <fmt/format.h>

#include "ncore/error.hpp"
#include "nki/compiler.hpp"
#include "nki/isa.hpp"
#include "tracer_impl.hpp"

namespace nki {

Range::Range(int64_t n, bool sequential, Loc loc) : n_(n), sequential_(sequential), loc_(loc) {
  if (n < 0) {
    const std::string msg = fmt::format("{} of a negative trip count {}", sequential ? "sequential_range" : "affine_range", n);
    if (detail::TracerImpl* t = detail::current()) t->fail(loc, msg);
    throw ncore::KernelError(msg);
  }
}

Range::~Range() {
  if (tracer_ && detail::current() == tracer_) tracer_->loop_exit(frame_);
}

Range::iterator Range::begin() {
  tracer_ = detail::current();
  if (tracer_) frame_ = tracer_->loop_enter(n_, sequential_, loc_);
  return iterator(this, 0);
}

int64_t Range::iterator::operator*() const {
  if (r_->tracer_) r_->tracer_->loop_iter(r_->frame_, i_);
  return i_;
}

void kernel_check(bool cond, const std::string& message, Loc loc) {
  if (cond) return;
  if (detail::TracerImpl* t = detail::current()) t->fail(loc, message);
  throw ncore::KernelError(fmt::format("{}:{}: {}", loc.file, loc.line, message));
}

namespace nl {
namespace {

// NKI's name of an element-wise op: "add", "subtract", "multiply", "maximum", "minimum".
const char* isa_name(AluOp op) {
  switch (op) {
    case AluOp::max: return "maximum";
    case AluOp::min: return "minimum";
    default: return ncore::isa::to_string(op);
  }
}

}  // namespace

Tensor ndarray(const Shape& shape, Dtype dtype, Buffer buffer, Loc loc) { return ndarray(shape, dtype, buffer, "", loc); }

Tensor ndarray(const Shape& shape, Dtype dtype, Buffer buffer, const std::string& name, Loc loc) {
  detail::TracerImpl& tr = detail::require("ndarray", loc);
  switch (buffer.kind) {
    case BufferKind::hbm:
    case BufferKind::shared_hbm:
      return tr.new_hbm(name, shape, dtype, ncore::TensorRole::internal, loc);
    case BufferKind::sbuf:
    case BufferKind::psum:
      return tr.new_tile(shape, dtype, buffer.kind, name, loc);
  }
  tr.fail(loc, "ndarray: unknown buffer");
}

Tensor ndarray(const Shape& shape, Dtype dtype, const Alloc& alloc, Loc loc) { return ndarray(shape, dtype, alloc, "", loc); }

Tensor ndarray(const Shape& shape, Dtype dtype, const Alloc& alloc, const std::string& name, Loc loc) {
  detail::TracerImpl& tr = detail::require("ndarray", loc);
  return tr.new_direct(shape, dtype, alloc, name, loc);
}

Tensor zeros(const Shape& shape, Dtype dtype, Buffer buffer, Loc loc) { return zeros(shape, dtype, buffer, "", loc); }

Tensor zeros(const Shape& shape, Dtype dtype, Buffer buffer, const std::string& name, Loc loc) {
  detail::TracerImpl& tr = detail::require("zeros", loc);
  if (buffer.kind == BufferKind::hbm || buffer.kind == BufferKind::shared_hbm)
    tr.fail(loc, fmt::format("nl.zeros in {}: an HBM tensor with an initial value is not supported "
                             "(err_hbm_tensor_with_init_value_not_supported); create it with nl.ndarray and write it",
                             to_string(buffer.kind)));
  Tensor t = tr.new_tile(shape, dtype, buffer.kind, name, loc);
  if (buffer.kind == BufferKind::psum) {
    const detail::TracerImpl::DeferZeros defer(tr);
    fill(t, 0.0f, loc);
  } else {
    fill(t, 0.0f, loc);
  }
  return t;
}

void fill(const Tensor& t, float value, Loc loc) {
  const detail::View& v = t.view();
  int nb = 0;
  while (nb < v.nd && v.kind[nb] == detail::DimKind::block) ++nb;
  int64_t tiles = 1;
  for (int d = 0; d < nb; ++d) tiles *= v.size[d];
  for (int64_t i = 0; i < tiles; ++i) {
    std::vector<Index> idx(static_cast<size_t>(nb));
    int64_t r = i;
    for (int d = nb - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = Index(r % v.size[d]);
      r /= v.size[d];
    }
    nisa::memset(nb ? t.index(idx, loc) : t, value, loc);
  }
}

Tensor broadcast_partitions(const Tensor& row, int64_t partitions, Loc loc) {
  detail::TracerImpl& tr = detail::require("broadcast_to", loc);
  const Shape s = row.shape();
  if (!row.on_chip() || s.empty() || s[0] != 1)
    tr.fail(loc, fmt::format("broadcast_to along the partitions needs a tile of one partition in SBUF or PSUM, got "
                             "`{}` of shape {}",
                             row.name(), s.str()));
  if (partitions < 1 || partitions > tile_size::pmax)
    tr.fail(loc, fmt::format("number of partitions {} exceed architecture limitation of {}.", partitions,
                             tile_size::pmax));
  int64_t free = 1;
  Shape out_shape{partitions};
  for (size_t d = 1; d < s.size(); ++d) {
    free *= s[d];
    out_shape.push_back(s[d]);
  }
  if (s.size() == 1) out_shape.push_back(1);
  const int64_t chunk = tile_size::psum_fmax;
  // The moving operand as (1, free): the row itself when it fits one multiply, else flattened.
  const Tensor flat = s.size() == 2 ? row : row.reshape(Shape{1, free}, loc);
  const Tensor ones = ndarray(Shape{1, partitions}, row.dtype(), sbuf, "ones", loc);
  nisa::memset(ones, 1.0f, loc);
  const Tensor out = ndarray(out_shape, row.dtype(), sbuf, "broadcast", loc);
  const Tensor out2 = out.reshape(Shape{partitions, free}, loc);
  for (int64_t c0 = 0; c0 < free; c0 += chunk) {
    const int64_t n = std::min(chunk, free - c0);
    const Tensor ps = ndarray(Shape{partitions, n}, Dtype::float32, psum, "broadcast_psum", loc);
    nisa::nc_matmul(ps, ones, flat.index({Index(Slice{0, 1}), Index(Slice{c0, n})}, loc), false, loc);
    nisa::tensor_copy(out2.index({Index(All{}), Index(Slice{c0, n})}, loc), ps, loc);
  }
  return out;
}

Tensor copy(const Tensor& x, Dtype dtype, Loc loc) { return nisa::tensor_copy(x, dtype, loc); }

Tensor copy(const Tensor& x, Loc loc) { return nisa::tensor_copy(x, x.dtype(), loc); }

Tensor load(const Tensor& src, Loc loc) { return load(src, src.dtype(), loc); }

Tensor load(const Tensor& src, Dtype dtype, Loc loc) {
  detail::TracerImpl& tr = detail::require("load", loc);
  if (!src.valid()) tr.fail(loc, "nl.load of an empty tensor");
  if (src.on_chip())
    tr.fail(loc, fmt::format("Expected operand 'src' of 'load' to be in address space 'hbm', but got a tile in '{}' "
                             "instead.",
                             to_string(src.buffer())));
  Shape s = src.shape();
  if (s.empty()) s.push_back(1);
  if (s.size() == 1) s.push_back(1);  // a vector: one element per partition
  Tensor t = tr.new_tile(s, dtype, BufferKind::sbuf, src.name() + "_tile", loc);
  nisa::dma_copy(t, src, loc);
  return t;
}

void store(const Tensor& dst, const Tensor& value, Loc loc) {
  detail::TracerImpl& tr = detail::require("store", loc);
  if (!dst.valid() || !value.valid()) tr.fail(loc, "nl.store of an empty tensor");
  if (dst.on_chip())
    tr.fail(loc, fmt::format("Expected operand 'dst' of 'store' to be in address space 'hbm', but got a tile in '{}' "
                             "instead.",
                             to_string(dst.buffer())));
  nisa::dma_copy(dst, value, loc);
}

Tensor result_tile(const Tensor& like, Dtype dtype, Loc loc) {
  detail::TracerImpl& tr = detail::require("result", loc);
  return tr.new_result(like, dtype, "result", loc);
}

namespace {

// Whether a tile holds one element per partition (its shape (P, 1, ...)).
bool per_partition(const Tensor& t) {
  const Shape s = t.shape();
  int64_t free = 1;
  for (size_t d = 1; d < s.size(); ++d) free *= s[d];
  return free == 1;
}

}  // namespace

namespace {

Tensor elementwise_impl(const Tensor* dst_in, AluOp op, const Operand& x, const Operand& y, std::optional<Dtype> dtype,
                        const Loc& loc) {
  detail::TracerImpl& tr = detail::require(isa_name(op), loc);
  if (x.none() || y.none()) tr.fail(loc, fmt::format("nl.{} needs two operands", isa_name(op)));
  if (!x.is_tile() && !y.is_tile())
    tr.fail(loc, fmt::format("nl.{} of two scalars: compute it in the kernel, or give a tile", isa_name(op)));
  // A scalar or a (P, 1) tile against a bigger tile: tensor_scalar, reversed when it comes first.
  const bool x_small = !x.is_tile() || (y.is_tile() && per_partition(x.tensor()) && !per_partition(y.tensor()));
  const bool y_small = !y.is_tile() || (x.is_tile() && per_partition(y.tensor()) && !per_partition(x.tensor()));
  if (y_small || x_small) {
    const Tensor& data = y_small ? x.tensor() : y.tensor();
    // A (P, 1) tile promotes with the data as any two tiles do; a scalar leaves the data's dtype
    // (the Python front end gives NKI's dtype of a weakly typed scalar as `dtype`).
    const Operand& small = y_small ? y : x;
    const Dtype out = dtype ? *dtype : small.is_tile() ? promote(data.dtype(), small.tensor().dtype()) : data.dtype();
    const Tensor dst = dst_in ? *dst_in : tr.new_result(data, out, isa_name(op), loc);
    nisa::tensor_scalar(dst, data, op, y_small ? y : x, x_small, AluOp::bypass, {}, false, loc);
    return dst;
  }
  if (dst_in) {
    nisa::tensor_tensor(*dst_in, x.tensor(), y.tensor(), op, loc);
    return *dst_in;
  }
  return dtype ? nisa::tensor_tensor(x.tensor(), y.tensor(), op, *dtype, loc)
               : nisa::tensor_tensor(x.tensor(), y.tensor(), op, loc);
}

}  // namespace

Tensor elementwise(AluOp op, const Operand& x, const Operand& y, std::optional<Dtype> dtype, Loc loc) {
  return elementwise_impl(nullptr, op, x, y, dtype, loc);
}

void elementwise(const Tensor& dst, AluOp op, const Operand& x, const Operand& y, Loc loc) {
  elementwise_impl(&dst, op, x, y, std::nullopt, loc);
}

Tensor AluFn::operator()(const Operand& x, const Operand& y, Loc loc) const {
  return elementwise(op, x, y, std::nullopt, loc);
}

Tensor AluFn::operator()(const Operand& x, const Operand& y, Dtype dtype, Loc loc) const {
  return elementwise(op, x, y, dtype, loc);
}

Tensor AluFn::operator()(const Tensor& x, Loc loc) const {
  const bool unary = op == AluOp::logical_not || op == AluOp::invert;  // the ALU ignores b
  return elementwise(op, x, unary ? Operand(0.0f) : Operand(), std::nullopt, loc);
}

Tensor ActFn::operator()(const Tensor& x, Loc loc) const { return nisa::activation(f, x, {}, 1.0f, x.dtype(), loc); }

Tensor ActFn::operator()(const Tensor& x, Dtype dtype, Loc loc) const {
  return nisa::activation(f, x, {}, 1.0f, dtype, loc);
}

Range affine_range(int64_t n, Loc loc) { return Range(n, false, loc); }
Range sequential_range(int64_t n, Loc loc) { return Range(n, true, loc); }

}  // namespace nl

namespace ncc::sbuf {

Alloc mod_alloc(int64_t base_addr, int64_t base_partition, std::vector<int64_t> num_par_tiles,
                std::vector<int64_t> num_free_tiles) {
  Alloc a;
  a.base_addr = base_addr;
  a.base_partition = base_partition;
  a.num_par_tiles = std::move(num_par_tiles);
  a.num_free_tiles = std::move(num_free_tiles);
  return a;
}

}  // namespace ncc::sbuf
}  // namespace nki
