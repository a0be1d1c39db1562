// NKI's mask= parameter, and the tiling of a high-level call into instructions of the size one
// engine instruction takes. Both cut one call into boxes of its index grid, each issued as one
// instruction with every operand (and the destination) cut to it.
//
// A mask is a conjunction of comparisons of affine expressions of the instruction's index axes
// with 0 (NKI's `mask=(i * 128 + i_p < n) & (i_f < m)`). The elements it keeps are a union of
// boxes: a comparison of one axis bounds that axis; a comparison of two axes bounds one of them
// by the value of the other, a free axis the instruction keeps, so runs of that axis's values with
// the same bounds on the other are one box each. A comparison of three axes, a chain of two-axis
// comparisons and `!=` are refused (nisa.affine_select expresses them).
//
// An operand of size 1 on an axis is broadcast along it and stays whole; every other operand
// holds the grid's size on each bounded axis. An operand may be a view that runs past the end of
// its tensor (the last, partial tile of a loop; a padded window): a Deferred view, built box by
// box, valid when the mask keeps the instruction inside the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nki/loc.hpp"
#include "nki/tensor.hpp"

namespace nki {

// One box of index ranges: axis -> [lo, hi) of an axis of sizes[axis] elements. An axis without a
// bound is whole.
struct Box {
  std::map<int, std::pair<int64_t, int64_t>> bounds;
  std::map<int, int64_t> sizes;
  bool empty() const;
  // The extent of axis a of a grid of `shape` in this box.
  int64_t extent(const std::vector<int64_t>& shape, int a) const;
};

// `sum over axes a of coeff[a] * i_a + start  cmp  0`, cmp one of less, less_equal, greater,
// greater_equal, equal, not_equal; sizes[a] the grid's size on axis a.
struct MaskTerm {
  std::map<int, int64_t> coeff;
  std::map<int, int64_t> sizes;
  int64_t start = 0;
  AluOp cmp = AluOp::less;
};

class Mask {
 public:
  // The mask of the comparisons (none: keeps everything); errors in NKI's terms name `api`.
  static Mask of(const std::vector<MaskTerm>& terms, const std::string& api, const Loc& loc);
  static Mask nothing(const std::string& api, const Loc& loc);  // a false mask (`mask=False`)

  // The boxes it keeps, splitting only along axes that are not `reduced` (the axes an
  // instruction folds, which must stay whole in each box). Empty when it keeps nothing.
  std::vector<Box> boxes(const std::set<int>& reduced = {}) const;
  // Whether it keeps the whole grid (one box, every bound the full axis), and nothing.
  bool keeps_all() const;
  bool keeps_nothing() const { return boxes().empty(); }
  // The mask with index axes 0 and 1 swapped (a transposing instruction's destination).
  Mask transposed() const;
  const std::map<int, int64_t>& sizes() const { return sizes_; }
  const std::string& api() const { return api_; }
  const Loc& loc() const { return loc_; }

 private:
  struct Pair {  // a comparison of two axes: c_a i_a + c_b i_b  op  rhs, op "<=" or ">="
    int a, b;
    int64_t ca, cb;
    bool le;
    int64_t rhs;
  };
  std::vector<Box> split(const std::set<int>& reduced) const;
  std::string api_;
  Loc loc_;
  std::map<int, int64_t> sizes_;
  std::map<int, std::pair<int64_t, int64_t>> bounds_;
  std::vector<Pair> pairs_;
};

// Elements per partition one engine instruction takes (the ISA's size; the tracer refuses more).
inline constexpr int64_t kMaxFreeElems = 65536;

// `b` split along its outermost kept free axes into boxes of at most kMaxFreeElems elements per
// partition of a grid of `shape` (a box whose reduced axes alone hold more stays whole: the
// instruction then refuses it), appended to `out`; as NKI's compiler tiles a high-level call.
void fit(const Box& b, const std::vector<int64_t>& shape, const std::set<int>& reduced, std::vector<Box>& out);

// A view that may run past the end of its tensor: base.affine(offset, coeff, grid), built box by
// box under a mask that keeps it inside. Used whole (no mask), it is the error `error` says.
struct Deferred {
  Tensor base;
  std::vector<int64_t> offset;
  std::vector<std::vector<int64_t>> coeff;
  std::vector<int64_t> grid;
  std::string error;
};

// A tile operand of a masked call: a view, or a deferred one.
struct TileArg {
  TileArg() = default;
  TileArg(const Tensor& t) : t(t) {}               // NOLINT: a view converts
  TileArg(Deferred d) : deferred(std::move(d)) {}  // NOLINT
  Tensor t;
  std::optional<Deferred> deferred;
  bool valid() const { return t.valid() || deferred.has_value(); }
  std::vector<int64_t> shape() const;
  Dtype dtype() const;
  // The view itself; a deferred view raises its error here (it is used without a mask).
  Tensor whole(const Loc& loc) const;
};

// x cut to box b: the axes b bounds narrowed (an axis of size 1 stays whole); a KernelError when
// x holds another size than the grid on a bounded axis.
Tensor cut(const TileArg& x, const Box& b, const Loc& loc);

}  // namespace nki
