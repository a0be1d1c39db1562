// Tensors of the NKI-like API: a view (shape, strides, offset, partition placement) of
// storage in HBM, SBUF or PSUM.
//
// An on-chip (SBUF/PSUM) tensor has up to three kinds of dimensions, in this order: block
// dimensions (logical tiles, only with an explicit par_dim), one partition dimension, and
// free dimensions. A plain `nl::ndarray((P, F...), dtype, nl::sbuf)` has no block dimension:
// its first dimension is the partition dimension. An HBM tensor is row-major with element
// strides; when it meets the hardware its first dimension becomes the partition rows.
//
// Views are cheap values: slicing (`t(nl::ds(a, n), nl::all)`), integer indexing (`t[m]`,
// dropping the leading dimension) and reshape (where the strides allow it without a copy)
// return new views of the same storage. Every check that can be made on a view alone (bounds,
// reshape) is made here; the rest when an instruction uses it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ncore/isa_gen.hpp"
#include "nki/loc.hpp"

namespace nki {

inline constexpr int kMaxDims = 8;

using AluOp = ncore::isa::AluOp;
using ActFunc = ncore::isa::ActFunc;

// Element types by their NKI names. float32, bfloat16, float16, the integers and bool_ (a uint8
// holding 0 or 1) are modelled; tfloat32 and the float8 types exist so that a kernel using them
// gets a clear error rather than a compile error.
enum class Dtype : uint8_t {
  float32, bfloat16, float16, tfloat32, float8_e4m3, float8_e5m2,
  int8, uint8, int16, uint16, int32, uint32, bool_,
};
// One row of the dtype table: everything else about a Dtype is read from it.
struct DtypeInfo {
  Dtype dtype;
  const char* name;  // NKI's
  int64_t bytes;
  ncore::isa::Dtype isa;  // the ISA dtype that holds its elements
  bool modelled;          // false: none today (a dtype documented but not modelled is refused by name)
};
const std::vector<DtypeInfo>& dtype_table();  // in Dtype order
const char* to_string(Dtype d);
int64_t dtype_bytes(Dtype d);
bool is_supported(Dtype d);
bool is_float(Dtype d);               // float32, tfloat32, bfloat16, float16 or an fp8 type
bool is_fp8(Dtype d);                 // float8_e4m3 or float8_e5m2
// NKI's type promotion of two operands' dtypes (an arithmetic op's default result dtype): a
// float over an integer; the wider float, float32 for float16 with bfloat16; the wider integer, or
// a signed one wide enough for both (int8 and uint8: int16), float32 for int32 with uint32.
Dtype promote(Dtype a, Dtype b);
const char* supported_dtypes();       // their names, for messages
ncore::isa::Dtype to_isa(Dtype d);  // throws ncore::KernelError for unsupported types
Dtype from_isa(ncore::isa::Dtype d);

enum class BufferKind : uint8_t { hbm, shared_hbm, sbuf, psum };
const char* to_string(BufferKind b);  // "hbm", "shared_hbm", "sbuf", "psum"
struct Buffer {
  BufferKind kind;
};

// A direct allocation (ncc::sbuf::mod_alloc): where the physical tiles of a tensor go.
struct Alloc {
  int64_t base_addr = 0;
  int64_t base_partition = 0;
  std::vector<int64_t> num_par_tiles;
  std::vector<int64_t> num_free_tiles;
  // Today's NKI's nl.ndarray(..., address=(partition, byte offset)): in SBUF or PSUM (a PSUM tensor
  // starts at a bank and fits it; tensors placed at the same bytes share them).
  BufferKind buffer = BufferKind::sbuf;
  bool by_address = false;  // errors say address=, not mod_alloc
};

// nl::par_dim(n): marks the partition dimension in a shape with block dimensions.
struct ParDim {
  int64_t size;
};

struct Dim {
  int64_t size = 0;
  bool par = false;
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr Dim(I v) : size(static_cast<int64_t>(v)) {}
  constexpr Dim(ParDim p) : size(p.size), par(true) {}
};

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<Dim> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  Shape(const std::vector<int64_t>& dims, int par_index);  // par_index: the nl::par_dim, or -1

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](size_t i) const { return d_[i]; }
  int64_t& operator[](size_t i) { return d_[i]; }
  const int64_t* begin() const { return d_.data(); }
  const int64_t* end() const { return d_.data() + n_; }
  void push_back(int64_t v);
  int par_index() const { return par_; }  // position of nl::par_dim, -1 if none
  int64_t elements() const;  // a KernelError above ncore::kMaxCount (see checked_elements)
  // The element count, or nullopt when it is above ncore::kMaxCount (2^60): for the callers
  // that refuse such a shape in their own words (an allocation, a reshape).
  std::optional<int64_t> checked_elements() const;
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  std::string str() const;  // "[128, 512]"
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  std::array<int64_t, kMaxDims> d_{};
  uint8_t n_ = 0;
  int8_t par_ = -1;
};

// An index along one dimension: an integer (drops the dimension), a slice, or everything.
struct Slice {
  int64_t start = 0;
  int64_t size = -1;  // -1: to the end
  int64_t step = 1;   // elements between two selected ones (free dimensions only)
};
struct All {};
class Index {
 public:
  enum Kind : uint8_t { none, integer, slice };
  Index() = default;
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  Index(I v) : kind(integer), i(static_cast<int64_t>(v)) {}
  Index(Slice s) : kind(slice), s(s) {}
  Index(All) {}

  Kind kind = none;
  int64_t i = 0;
  Slice s;
};

namespace detail {
struct Storage;
enum class DimKind : uint8_t { block, part, free };

// How a view maps its indices onto storage.
struct View {
  Dtype dtype = Dtype::float32;
  uint8_t nd = 0;
  std::array<int64_t, kMaxDims> size{};
  std::array<int64_t, kMaxDims> stride{};  // free: elements; block: which block dimension of the storage
  std::array<DimKind, kMaxDims> kind{};
  int64_t offset = 0;                      // elements: HBM from the tensor's base, on-chip within a tile's partition
  int64_t part = 0;                        // on-chip: first partition, relative to the tile's
  std::array<int64_t, kMaxDims> block{};   // on-chip: logical tile index (start) per block dimension of the storage
};
}  // namespace detail

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<detail::Storage> st, const detail::View& v) : st_(std::move(st)), v_(v) {}

  bool valid() const { return st_ != nullptr; }
  Shape shape() const;
  Dtype dtype() const { return v_.dtype; }
  size_t ndim() const { return v_.nd; }
  const std::string& name() const;
  BufferKind buffer() const;
  bool on_chip() const;
  std::string str() const;  // name[dims], as NKI prints a tile

  // t[m]: the leading dimension indexed by m (for a mod_alloc'd tensor: logical tile m).
  Tensor operator[](int64_t i) const;
  // t(nl::ds(a, n), nl::all, 3): one index per leading dimension; the rest are kept whole.
  Tensor operator()(Index i0, Index i1 = {}, Index i2 = {}, Index i3 = {}, Index i4 = {},
                    Loc loc = Loc::here()) const;
  // One index per leading dimension, as many as the tensor has (the Python front end's t[...]).
  Tensor index(const std::vector<Index>& idx, Loc loc = Loc::here()) const;
  // The dimensions reordered (order[i]: the dimension that becomes dimension i; a view, no copy).
  // On chip only the free dimensions move: block and partition dimensions stay in front.
  Tensor permute(const std::vector<int>& order, Loc loc = Loc::here()) const;
  // Dimension `dim` of size 1 read `size` times (stride 0; free dimensions only): a broadcast view.
  Tensor broadcast(int dim, int64_t size, Loc loc = Loc::here()) const;
  // An affine view (the Python front end's nl.arange/nl.mgrid indexing): the result has one
  // dimension per grid axis (sizes `grid`); tensor dimension d is indexed by
  // offset[d] + sum over axes a of coeff[d][a] * i_a. A partition dimension takes at most one
  // axis, with coefficient 1; the result's dimension for that axis is its partition dimension.
  Tensor affine(const std::vector<int64_t>& offset, const std::vector<std::vector<int64_t>>& coeff,
                const std::vector<int64_t>& grid, Loc loc = Loc::here()) const;
  // The same elements under a new shape; only where the view's strides allow it.
  Tensor reshape(const Shape& shape, Loc loc = Loc::here()) const;
  // NKI's tensor.ap(pattern=[[step, num], ...], offset=): a view of the tensor's storage read flat,
  // in elements of its dtype, one dimension of `num` elements `step` apart per pair (outermost
  // first). On chip the first pair walks the partitions (its step: the elements of one partition)
  // and the flat offset is partition * that + the element within the partition. offset nullopt:
  // the view's own start.
  Tensor ap(const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<int64_t> offset,
            Loc loc = Loc::here()) const;
  // The same bytes read as another dtype (NKI's tensor.view(dtype)): the last dimension must be
  // contiguous; its size, the other strides and the offset are rescaled and must stay whole.
  Tensor bitcast(Dtype to, Loc loc = Loc::here()) const;
  // The view as NKI's access pattern: [step, num] per dimension (on chip the partition dimension's
  // step is the elements of one partition) and the flat offset, in elements; nullopt for a view
  // with block dimensions (no one flat pattern).
  std::optional<std::pair<std::vector<std::pair<int64_t, int64_t>>, int64_t>> pattern() const;

  const detail::View& view() const { return v_; }
  const std::shared_ptr<detail::Storage>& storage() const { return st_; }

 private:
  Tensor index(const Index* idx, int n, const Loc& loc) const;

  std::shared_ptr<detail::Storage> st_;
  detail::View v_;
};

}  // namespace nki
