// Tensor views: dtypes, shapes, slicing, integer indexing and reshape. See tensor.hpp.
#include "nki/tensor.hpp"

#include <fmt/format.h>

#include "ncore/error.hpp"
#include "ncore/size.hpp"
#include "ncore/isa_kinds.hpp"
#include "tracer_impl.hpp"

namespace nki {

// --- dtypes and buffers ------------------------------------------------------------------

namespace {
using IsaDtype = ncore::isa::Dtype;
// NKI's dtypes, once: the name, the bytes of an element, the ISA dtype that holds it (the
// integers' names are the ISA's), and whether the model computes with it.
constexpr DtypeInfo kDtypes[] = {
    {Dtype::float32, "float32", 4, IsaDtype::fp32, true},
    {Dtype::bfloat16, "bfloat16", 2, IsaDtype::bf16, true},
    {Dtype::float16, "float16", 2, IsaDtype::fp16, true},
    {Dtype::tfloat32, "tfloat32", 4, IsaDtype::tf32, true},
    {Dtype::float8_e4m3, "float8_e4m3", 1, IsaDtype::fp8_e4m3, true},
    {Dtype::float8_e5m2, "float8_e5m2", 1, IsaDtype::fp8_e5m2, true},
    {Dtype::int8, "int8", 1, IsaDtype::int8, true},
    {Dtype::uint8, "uint8", 1, IsaDtype::uint8, true},
    {Dtype::int16, "int16", 2, IsaDtype::int16, true},
    {Dtype::uint16, "uint16", 2, IsaDtype::uint16, true},
    {Dtype::int32, "int32", 4, IsaDtype::int32, true},
    {Dtype::uint32, "uint32", 4, IsaDtype::uint32, true},
    {Dtype::bool_, "bool_", 1, IsaDtype::uint8, true},
};
static_assert(std::size(kDtypes) == static_cast<size_t>(Dtype::bool_) + 1, "one row per Dtype, in its order");

const DtypeInfo& info(Dtype d) { return kDtypes[static_cast<size_t>(d)]; }
}  // namespace

const std::vector<DtypeInfo>& dtype_table() {
  static const std::vector<DtypeInfo> table(std::begin(kDtypes), std::end(kDtypes));
  return table;
}

const char* to_string(Dtype d) { return info(d).name; }

int64_t dtype_bytes(Dtype d) { return info(d).bytes; }

bool is_fp8(Dtype d) { return d == Dtype::float8_e4m3 || d == Dtype::float8_e5m2; }

bool is_float(Dtype d) {
  return d == Dtype::float32 || d == Dtype::tfloat32 || d == Dtype::bfloat16 || d == Dtype::float16 || is_fp8(d);
}

bool is_supported(Dtype d) { return info(d).modelled; }

Dtype promote(Dtype a, Dtype b) {
  if (a == Dtype::bool_) a = Dtype::uint8;
  if (b == Dtype::bool_) b = Dtype::uint8;
  if (a == b) return a;
  // Two floats that differ (NKI's rules): the wider one, with the widened types of NKI's examples:
  // float8_e4m3 with float8_e5m2 gives bfloat16, float16 with bfloat16 float32.
  if (is_fp8(a) && is_fp8(b)) return Dtype::bfloat16;
  if (is_fp8(a) && is_float(b)) return b;
  if (is_fp8(b) && is_float(a)) return a;
  // tfloat32 (float32's exponent, 10 mantissa bits) holds bfloat16 and float16; float32 holds it
  if (a == Dtype::tfloat32 || b == Dtype::tfloat32)
    return (a == Dtype::float32 || b == Dtype::float32) ? Dtype::float32 : Dtype::tfloat32;
  if (is_float(a) && is_float(b)) return Dtype::float32;  // one is float32, or float16 with bfloat16
  if (is_float(a) || is_float(b)) return is_float(a) ? a : b;
  auto is_signed = [](Dtype d) { return ncore::isa::is_signed_integer(to_isa(d)); };
  if (is_signed(a) == is_signed(b)) return dtype_bytes(a) >= dtype_bytes(b) ? a : b;
  const Dtype s = is_signed(a) ? a : b, u = is_signed(a) ? b : a;
  if (dtype_bytes(u) < dtype_bytes(s)) return s;
  // the unsigned one is at least as wide: a signed type of twice its width (none beyond 32 bits)
  return dtype_bytes(u) == 1 ? Dtype::int16 : dtype_bytes(u) == 2 ? Dtype::int32 : Dtype::float32;
}

const char* supported_dtypes() {
  static const std::string names = [] {
    std::string s;
    for (const DtypeInfo& i : kDtypes)
      if (i.modelled) s += (s.empty() ? "" : ", ") + std::string(i.name);
    return s;
  }();
  return names.c_str();
}

ncore::isa::Dtype to_isa(Dtype d) {
  if (!is_supported(d))
    throw ncore::KernelError(
        fmt::format("dtype {} is not supported by this model (supported: {})", to_string(d), supported_dtypes()));
  return info(d).isa;
}

Dtype from_isa(ncore::isa::Dtype d) {
  for (const DtypeInfo& i : kDtypes)
    if (i.modelled && i.isa == d && i.dtype != Dtype::bool_) return i.dtype;
  throw ncore::KernelError(fmt::format("invalid ISA dtype {}", static_cast<unsigned>(d)));
}

const char* to_string(BufferKind b) {
  switch (b) {
    case BufferKind::hbm: return "hbm";
    case BufferKind::shared_hbm: return "shared_hbm";
    case BufferKind::sbuf: return "sbuf";
    case BufferKind::psum: return "psum";
  }
  return "?";
}

// --- shapes --------------------------------------------------------------------------------

Shape::Shape(std::initializer_list<Dim> dims) {
  if (dims.size() > static_cast<size_t>(kMaxDims))
    throw ncore::KernelError(
        fmt::format("a tensor of {} dimensions exceeds the supported maximum of {}", dims.size(), kMaxDims));
  for (const Dim& d : dims) {
    if (d.par) {
      if (par_ >= 0) throw ncore::KernelError("a shape may have only one par_dim");
      par_ = static_cast<int8_t>(n_);
    }
    d_[n_++] = d.size;
  }
}

Shape::Shape(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(kMaxDims))
    throw ncore::KernelError(
        fmt::format("a tensor of {} dimensions exceeds the supported maximum of {}", dims.size(), kMaxDims));
  for (int64_t v : dims) d_[n_++] = v;
}

Shape::Shape(const std::vector<int64_t>& dims, int par_index) : Shape(dims) {
  if (par_index >= static_cast<int>(n_)) throw ncore::KernelError("par_dim outside the shape");
  par_ = static_cast<int8_t>(par_index < 0 ? -1 : par_index);
}

void Shape::push_back(int64_t v) {
  if (n_ >= kMaxDims)
    throw ncore::KernelError(fmt::format("a tensor of more than {} dimensions is not supported", kMaxDims));
  d_[n_++] = v;
}

std::optional<int64_t> Shape::checked_elements() const {
  const auto n = ncore::count_product(begin(), end());
  if (!n) return std::nullopt;
  return static_cast<int64_t>(*n);
}

int64_t Shape::elements() const {
  const auto n = checked_elements();
  if (!n) throw ncore::KernelError(fmt::format("shape {} has more than 2^60 elements", str()));
  return *n;
}

std::string Shape::str() const { return detail::shape_str(d_.data(), n_); }

bool Shape::operator==(const Shape& o) const {
  if (n_ != o.n_) return false;
  for (size_t i = 0; i < n_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

namespace detail {

std::string shape_str(const int64_t* d, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

std::string operand_str(const Ctx& c, const char* param) { return fmt::format("operand '{}' of '{}'", param, c.op); }

}  // namespace detail

// --- views ---------------------------------------------------------------------------------

namespace {

[[noreturn]] void view_error(const Loc& loc, const std::string& msg) {
  if (detail::TracerImpl* t = detail::current()) {
    if (loc.file && loc.file[0]) t->fail(loc, msg);
    if (t->last_loc.file && t->last_loc.file[0])
      throw ncore::KernelError(fmt::format("{} (in an index expression after the API call at {})", msg,
                                           t->where(t->last_loc)));
    throw ncore::KernelError(msg);
  }
  if (loc.file && loc.file[0]) throw ncore::KernelError(fmt::format("{}:{}: {}", loc.file, loc.line, msg));
  throw ncore::KernelError(msg);
}

// numpy's reshape without a copy: strides for `nsz` over the elements of (osz, ost), or false.
bool nocopy_reshape(const int64_t* osz, const int64_t* ost, int on, const int64_t* nsz, int nn, int64_t* nst) {
  int64_t od[kMaxDims], os[kMaxDims];
  int m = 0;
  for (int i = 0; i < on; ++i)
    if (osz[i] != 1) {
      od[m] = osz[i];
      os[m] = ost[i];
      ++m;
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nn && oi < m) {
    int64_t np = nsz[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn) return false;
        np *= nsz[nj++];
      } else {
        if (oj >= m) return false;
        op *= od[oj++];
      }
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
    nst[nj - 1] = os[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) nst[nk - 1] = nst[nk] * nsz[nk];
    ni = nj++;
    oi = oj++;
  }
  const int64_t last = ni > 0 ? nst[ni - 1] : 1;
  for (int nk = ni; nk < nn; ++nk) nst[nk] = last;
  return true;
}

}  // namespace

Shape Tensor::shape() const {
  Shape s;
  for (int i = 0; i < v_.nd; ++i) s.push_back(v_.size[i]);
  return s;
}

const std::string& Tensor::name() const {
  static const std::string none = "<empty>";
  return st_ ? st_->name : none;
}

BufferKind Tensor::buffer() const { return st_ ? st_->kind : BufferKind::hbm; }

bool Tensor::on_chip() const { return st_ && st_->kind != BufferKind::hbm && st_->kind != BufferKind::shared_hbm; }

std::string Tensor::str() const { return name() + detail::shape_str(v_.size.data(), v_.nd); }

Tensor Tensor::operator[](int64_t i) const {
  Index ix(i);
  return index(&ix, 1, Loc{});
}

Tensor Tensor::operator()(Index i0, Index i1, Index i2, Index i3, Index i4, Loc loc) const {
  const Index all[5] = {i0, i1, i2, i3, i4};
  int n = 5;
  while (n > 0 && all[n - 1].kind == Index::none) --n;
  return index(all, n, loc);
}

Tensor Tensor::index(const std::vector<Index>& idx, Loc loc) const {
  return index(idx.data(), static_cast<int>(idx.size()), loc);
}

Tensor Tensor::index(const Index* idx, int n, const Loc& loc) const {
  if (!st_) view_error(loc, "indexing an empty tensor");
  if (n > v_.nd)
    view_error(loc, fmt::format("too many indices for tensor `{}` of shape {}: {} given", name(),
                                detail::shape_str(v_.size.data(), v_.nd), n));
  detail::View w = v_;
  w.nd = 0;
  for (int d = 0; d < v_.nd; ++d) {
    const Index ix = d < n ? idx[d] : Index();
    const int64_t size = v_.size[d];
    int64_t pos = 0, len = size, step = 1;
    bool keep = true;
    if (ix.kind == Index::integer) {
      pos = ix.i < 0 ? ix.i + size : ix.i;
      if (pos < 0 || pos >= size)
        view_error(loc, fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] "
                                    "exceed dimension size of {}",
                                    name(), d, ix.i, ix.i, size));
      keep = false;
    } else if (ix.kind == Index::slice) {
      pos = ix.s.start;
      step = ix.s.step;
      if (step <= 0)
        view_error(loc, fmt::format("slice step {} on dimension {} of tensor `{}`: steps must be positive", step, d,
                                    name()));
      len = ix.s.size < 0 ? (size - pos + step - 1) / step : ix.s.size;
      if (len <= 0)
        view_error(loc, fmt::format("empty slice ds({}, {}) on dimension {} of tensor `{}`", ix.s.start, ix.s.size, d,
                                    name()));
      if (pos < 0 || pos + (len - 1) * step + 1 > size)
        view_error(loc, fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] "
                                    "exceed dimension size of {}",
                                    name(), d, pos, pos + (len - 1) * step, size));
      if (step != 1 && v_.kind[d] != detail::DimKind::free)
        view_error(loc, fmt::format("a step of {} on the {} dimension {} of tensor `{}`: only free dimensions can be "
                                    "strided",
                                    step, v_.kind[d] == detail::DimKind::part ? "partition" : "block", d, name()));
    }
    switch (v_.kind[d]) {
      case detail::DimKind::free: w.offset += pos * v_.stride[d]; break;
      case detail::DimKind::part: w.part += pos; break;
      case detail::DimKind::block: w.block[v_.stride[d]] += pos; break;
    }
    if (keep) {
      w.size[w.nd] = len;
      w.stride[w.nd] = v_.kind[d] == detail::DimKind::free ? v_.stride[d] * step : v_.stride[d];
      w.kind[w.nd] = v_.kind[d];
      ++w.nd;
    }
  }
  return Tensor(st_, w);
}

Tensor Tensor::permute(const std::vector<int>& order, Loc loc) const {
  if (!st_) view_error(loc, "permuting an empty tensor");
  if (order.size() != v_.nd)
    view_error(loc, fmt::format("permute of tensor `{}` of {} dimensions needs {} axes, got {}", name(), v_.nd, v_.nd,
                                order.size()));
  std::vector<bool> seen(v_.nd, false);
  detail::View w = v_;
  for (size_t i = 0; i < order.size(); ++i) {
    const int d = order[i];
    if (d < 0 || d >= v_.nd || seen[static_cast<size_t>(d)])
      view_error(loc, fmt::format("permute of tensor `{}`: ({}) is not a permutation of its {} dimensions", name(),
                                  fmt::join(order, ", "), v_.nd));
    seen[static_cast<size_t>(d)] = true;
    if ((v_.kind[d] != detail::DimKind::free || v_.kind[i] != detail::DimKind::free) && d != static_cast<int>(i))
      view_error(loc, fmt::format("permute of on-chip tensor `{}`: the block and partition dimensions stay in front; "
                                  "only free dimensions move",
                                  name()));
    w.size[i] = v_.size[d];
    w.stride[i] = v_.stride[d];
    w.kind[i] = v_.kind[d];
  }
  return Tensor(st_, w);
}

Tensor Tensor::broadcast(int dim, int64_t size, Loc loc) const {
  if (!st_) view_error(loc, "broadcasting an empty tensor");
  if (dim < 0 || dim >= v_.nd || v_.size[dim] != 1 || size < 1)
    view_error(loc, fmt::format("broadcast of tensor `{}` of shape {}: dimension {} must have size 1", name(),
                                detail::shape_str(v_.size.data(), v_.nd), dim));
  if (v_.kind[dim] != detail::DimKind::free)
    view_error(loc, fmt::format("broadcast of tensor `{}`: only a free dimension can be broadcast (the partitions are "
                                "the engines' lanes)",
                                name()));
  detail::View w = v_;
  w.size[dim] = size;
  w.stride[dim] = 0;
  return Tensor(st_, w);
}

Tensor Tensor::affine(const std::vector<int64_t>& offset, const std::vector<std::vector<int64_t>>& coeff,
                      const std::vector<int64_t>& grid, Loc loc) const {
  if (!st_) view_error(loc, "indexing an empty tensor");
  if (offset.size() != v_.nd || coeff.size() != v_.nd)
    view_error(loc, fmt::format("an index of tensor `{}` of shape {} needs {} entries", name(),
                                detail::shape_str(v_.size.data(), v_.nd), v_.nd));
  if (grid.size() > static_cast<size_t>(kMaxDims))
    view_error(loc, fmt::format("an index grid of {} axes exceeds the supported maximum of {}", grid.size(), kMaxDims));
  detail::View w = v_;
  w.nd = static_cast<uint8_t>(grid.size());
  for (size_t a = 0; a < grid.size(); ++a) {
    w.size[a] = grid[a];
    w.stride[a] = 0;
    w.kind[a] = detail::DimKind::free;
  }
  int part_axis = -1;
  for (int d = 0; d < v_.nd; ++d) {
    if (coeff[d].size() != grid.size())
      view_error(loc, fmt::format("an index of tensor `{}`: dimension {} has {} coefficients for {} grid axes", name(),
                                  d, coeff[d].size(), grid.size()));
    // The index range along d: lowest and highest position reached.
    int64_t lo = offset[d], hi = offset[d];
    for (size_t a = 0; a < grid.size(); ++a) {
      const int64_t span = coeff[d][a] * (grid[a] - 1);
      (span < 0 ? lo : hi) += span;
    }
    if (lo < 0 || hi >= v_.size[d])
      view_error(loc, fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] exceed "
                                  "dimension size of {}",
                                  name(), d, lo, hi, v_.size[d]));
    switch (v_.kind[d]) {
      case detail::DimKind::free:
        w.offset += offset[d] * v_.stride[d];
        for (size_t a = 0; a < grid.size(); ++a) w.stride[a] += coeff[d][a] * v_.stride[d];
        break;
      case detail::DimKind::part:
        w.part += offset[d];
        for (size_t a = 0; a < grid.size(); ++a) {
          if (coeff[d][a] == 0) continue;
          if (coeff[d][a] != 1 || part_axis >= 0)
            view_error(loc, fmt::format("the partition dimension of tensor `{}` must be indexed by one range with step "
                                        "1 (the partitions are the engines' lanes)",
                                        name()));
          part_axis = static_cast<int>(a);
        }
        break;
      case detail::DimKind::block: {
        // A range over the tiles of an automatically placed tensor: its tiles lie one after the
        // other in each partition, so the range is a free stride of whole tiles.
        const detail::Storage& s = *st_;
        const int bd = static_cast<int>(v_.stride[d]);  // which block dimension of the storage
        int64_t tail = 1;
        for (size_t e = static_cast<size_t>(bd) + 1; e < s.free_tiles.size(); ++e) tail *= s.free_tiles[e];
        for (size_t a = 0; a < grid.size(); ++a) {
          if (coeff[d][a] == 0 || grid[a] == 1) continue;
          if (s.direct || !s.par_tiles.empty())
            view_error(loc, fmt::format("block dimension {} of tensor `{}` (placed by mod_alloc) must be indexed by a "
                                        "number (one tile per instruction)",
                                        d, name()));
          w.stride[a] += coeff[d][a] * tail * (s.tile_bytes / dtype_bytes(v_.dtype));
        }
        w.block[bd] += offset[d];
        break;
      }
    }
  }
  if (part_axis >= 0) {
    if (w.stride[part_axis] != 0)
      view_error(loc, fmt::format("the range indexing the partitions of tensor `{}` also indexes a free dimension",
                                  name()));
    w.kind[part_axis] = detail::DimKind::part;
    if (part_axis != 0)
      view_error(loc, fmt::format("the partition dimension of tensor `{}` must stay the first dimension of the result",
                                  name()));
  } else if (on_chip()) {
    // No range on the partitions: one partition, as a leading dimension of size 1.
    bool has_part = false;
    for (int d = 0; d < v_.nd; ++d) has_part |= v_.kind[d] == detail::DimKind::part;
    if (has_part) {
      if (w.nd >= kMaxDims) view_error(loc, "an index grid with too many axes");
      for (int a = w.nd; a > 0; --a) {
        w.size[a] = w.size[a - 1];
        w.stride[a] = w.stride[a - 1];
        w.kind[a] = w.kind[a - 1];
      }
      w.size[0] = 1;
      w.stride[0] = 0;
      w.kind[0] = detail::DimKind::part;
      ++w.nd;
    }
  }
  return Tensor(st_, w);
}

Tensor Tensor::reshape(const Shape& shape, Loc loc) const {
  if (!st_) view_error(loc, "reshaping an empty tensor");
  const std::string from = detail::shape_str(v_.size.data(), v_.nd);
  int64_t have = 1;
  for (int d = 0; d < v_.nd; ++d) have *= v_.size[d];
  for (int64_t s : shape)
    if (s <= 0)
      view_error(loc, fmt::format("cannot reshape tensor `{}` of shape {} into {}: dimension sizes must be positive",
                                  name(), from, shape.str()));
  const auto want = shape.checked_elements();
  if (want != have)
    view_error(loc, fmt::format("cannot reshape tensor `{}` of shape {} into {}: {} elements cannot become {}",
                                name(), from, shape.str(), have, want ? fmt::format("{}", *want) : "more than 2^60"));
  // On chip the block and partition dimensions stay in front; only free dimensions change.
  int lead = 0;
  if (on_chip()) {
    while (lead < v_.nd && v_.kind[lead] != detail::DimKind::free) ++lead;
    bool ok = static_cast<int>(shape.size()) >= lead;
    for (int d = 0; d < lead && ok; ++d) ok = shape[d] == v_.size[d];
    if (!ok)
      view_error(loc, fmt::format("cannot reshape on-chip tensor `{}` of shape {} into {}: the block and partition "
                                  "dimensions must stay in front, unchanged",
                                  name(), from, shape.str()));
  }
  detail::View w = v_;
  const int nn = static_cast<int>(shape.size()) - lead;
  int64_t nsz[kMaxDims], nst[kMaxDims];
  for (int i = 0; i < nn; ++i) nsz[i] = shape[lead + i];
  if (!nocopy_reshape(v_.size.data() + lead, v_.stride.data() + lead, v_.nd - lead, nsz, nn, nst))
    view_error(loc, fmt::format("cannot reshape tensor `{}` of shape {} into {}: the view's strides do not allow it "
                                "without a copy",
                                name(), from, shape.str()));
  w.nd = static_cast<uint8_t>(shape.size());
  for (int i = 0; i < nn; ++i) {
    w.size[lead + i] = nsz[i];
    w.stride[lead + i] = nst[i];
    w.kind[lead + i] = detail::DimKind::free;
  }
  return Tensor(st_, w);
}

Tensor Tensor::ap(const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<int64_t> offset,
                  Loc loc) const {
  if (!st_) view_error(loc, "an access pattern of an empty tensor");
  if (pattern.empty() || pattern.size() > static_cast<size_t>(kMaxDims))
    view_error(loc, fmt::format("the access pattern of tensor `{}` has {} [step, num] pairs: 1 to {}", name(),
                                pattern.size(), kMaxDims));
  for (const auto& [step, num] : pattern)
    if (num <= 0)
      view_error(loc, fmt::format("the access pattern of tensor `{}`: [{}, {}] has no elements (num must be positive)",
                                  name(), step, num));
  const detail::Storage& s = *st_;
  detail::View w;
  w.dtype = v_.dtype;
  w.nd = static_cast<uint8_t>(pattern.size());
  // The flat range the pairs from `from` on reach from `start` must lie in [0, size).
  auto check_range = [&](size_t from, int64_t start, int64_t size, const char* of) {
    int64_t lo = start, hi = start;
    for (size_t a = from; a < pattern.size(); ++a) {
      const int64_t span = pattern[a].first * (pattern[a].second - 1);
      (span < 0 ? lo : hi) += span;
    }
    if (lo < 0 || hi >= size)
      view_error(loc, fmt::format("Out-of-bound access for tensor `{}`: its access pattern reaches elements [{}, {}] of "
                                  "{}{}",
                                  name(), lo, hi, of, size));
  };
  for (size_t a = 0; a < pattern.size(); ++a) {
    w.size[a] = pattern[a].second;
    w.stride[a] = pattern[a].first;
    w.kind[a] = detail::DimKind::free;
  }
  if (!on_chip()) {
    w.offset = offset ? *offset : v_.offset;
    const int64_t total = s.hbm_elems * dtype_bytes(s.dtype) / dtype_bytes(v_.dtype);
    check_range(0, w.offset, total, "");
    return Tensor(st_, w);
  }
  if (s.nblock != 0)
    view_error(loc, fmt::format("an access pattern of tensor `{}`, which has block dimensions: index a tile of it first",
                                name()));
  const int64_t pelems = s.free_bytes / dtype_bytes(v_.dtype);  // the elements of one partition
  const int64_t flat = offset ? *offset : v_.part * pelems + v_.offset;
  const auto [pstep, pnum] = pattern[0];
  if (pnum > 1 && pstep != pelems)
    view_error(loc, fmt::format("the access pattern of on-chip tensor `{}`: its first pair [{}, {}] walks the "
                                "partitions, so its step must be the elements of one partition, {}",
                                name(), pstep, pnum, pelems));
  w.kind[0] = detail::DimKind::part;
  w.stride[0] = 0;
  w.part = flat / pelems;
  w.offset = flat % pelems;
  if (flat < 0 || w.part + pnum > s.tile_parts)
    view_error(loc, fmt::format("Out-of-bound access for tensor `{}`: its access pattern reaches partitions [{}, {}] of {}",
                                name(), w.part, w.part + pnum - 1, s.tile_parts));
  check_range(1, w.offset, pelems, "each partition's ");
  return Tensor(st_, w);
}

std::optional<std::pair<std::vector<std::pair<int64_t, int64_t>>, int64_t>> Tensor::pattern() const {
  if (!st_) return std::nullopt;
  const detail::Storage& s = *st_;
  const int64_t pelems = on_chip() ? s.free_bytes / dtype_bytes(v_.dtype) : 0;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int d = 0; d < v_.nd; ++d) {
    switch (v_.kind[d]) {
      case detail::DimKind::block: return std::nullopt;
      case detail::DimKind::part: out.emplace_back(pelems, v_.size[d]); break;
      case detail::DimKind::free: out.emplace_back(v_.stride[d], v_.size[d]); break;
    }
  }
  if (on_chip() && s.nblock != 0) return std::nullopt;
  return std::pair{out, on_chip() ? v_.part * pelems + v_.offset : v_.offset};
}

Tensor Tensor::bitcast(Dtype to, Loc loc) const {
  if (!st_) view_error(loc, "viewing an empty tensor as another dtype");
  const int64_t from_b = dtype_bytes(v_.dtype), to_b = dtype_bytes(to);
  detail::View w = v_;
  w.dtype = to;
  if (from_b == to_b) return Tensor(st_, w);
  auto whole = [&](int64_t elems, const char* what) {
    if (elems * from_b % to_b != 0)
      view_error(loc, fmt::format("tensor `{}` ({}) read as {}: its {} of {} {} elements is not a whole number of {} "
                                  "elements",
                                  name(), to_string(v_.dtype), to_string(to), what, elems, to_string(v_.dtype),
                                  to_string(to)));
    return elems * from_b / to_b;
  };
  const int last = v_.nd - 1;
  if (last < 0 || v_.kind[last] != detail::DimKind::free || (v_.size[last] > 1 && v_.stride[last] != 1))
    view_error(loc, fmt::format("tensor `{}` read as {}: its last dimension must be contiguous", name(),
                                to_string(to)));
  for (int d = 0; d < last; ++d)
    if (v_.kind[d] == detail::DimKind::free) w.stride[d] = whole(v_.stride[d], "stride");
  w.size[last] = whole(v_.size[last], "last dimension");
  w.stride[last] = 1;
  w.offset = whole(v_.offset, "offset");
  return Tensor(st_, w);
}

}  // namespace nki
