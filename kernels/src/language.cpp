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
  nisa::memset(t, 0.0f, loc);
  return t;
}

Tensor copy(const Tensor& x, Dtype dtype, Loc loc) { return nisa::tensor_copy(x, dtype, loc); }

Tensor copy(const Tensor& x, Loc loc) { return nisa::tensor_copy(x, x.dtype(), loc); }

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
