// Masks, boxes and the tiling of high-level calls; see mask.hpp.
#include "nki/mask.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "ncore/error.hpp"
#include "nki/language.hpp"

namespace nki {
namespace {

[[noreturn]] void fail(const Loc& loc, const std::string& msg) {
  kernel_check(false, msg, loc);
  throw ncore::KernelError(msg);  // kernel_check has thrown
}

int64_t floordiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceildiv(int64_t a, int64_t b) { return -floordiv(-a, b); }

using Interval = std::pair<int64_t, int64_t>;

// [lo, hi) narrowed by c * i <= rhs (le) or c * i >= rhs.
Interval bound(Interval r, int64_t c, bool le, int64_t rhs) {
  if (le == (c > 0)) return {r.first, std::min(r.second, floordiv(rhs, c) + 1)};
  return {std::max(r.first, ceildiv(rhs, c)), r.second};
}

// A comparison e cmp 0 as bounds e <= k or e >= k.
std::vector<std::pair<bool, int64_t>> as_bounds(AluOp cmp) {
  switch (cmp) {
    case AluOp::less:
      return {{true, -1}};
    case AluOp::less_equal:
      return {{true, 0}};
    case AluOp::greater:
      return {{false, 1}};
    case AluOp::greater_equal:
      return {{false, 0}};
    case AluOp::equal:
      return {{true, 0}, {false, 0}};
    default:
      return {};
  }
}

int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}

}  // namespace

bool Box::empty() const {
  return std::any_of(bounds.begin(), bounds.end(), [](const auto& b) { return b.second.first >= b.second.second; });
}

int64_t Box::extent(const std::vector<int64_t>& shape, int a) const {
  auto it = bounds.find(a);
  if (it == bounds.end()) return shape[static_cast<size_t>(a)];
  return it->second.second - it->second.first;
}

Mask Mask::nothing(const std::string& api, const Loc& loc) {
  Mask m;
  m.api_ = api;
  m.loc_ = loc;
  m.sizes_[0] = 0;
  m.bounds_[0] = {0, 0};
  return m;
}

Mask Mask::of(const std::vector<MaskTerm>& terms, const std::string& api, const Loc& loc) {
  Mask m;
  m.api_ = api;
  m.loc_ = loc;
  for (const MaskTerm& t : terms) {
    const auto bs = as_bounds(t.cmp);
    if (bs.empty())
      fail(loc, fmt::format("the mask of '{}' uses '!=': this model applies masks of <, <=, >, >= and ==", api));
    std::map<int, int64_t> coeff;
    for (const auto& [a, c] : t.coeff)
      if (c != 0) coeff[a] = c;
    for (const auto& [a, n] : t.sizes) m.sizes_[a] = n;
    for (const auto& [le, k] : bs) {
      const int64_t rhs = k - t.start;
      if (coeff.empty()) {  // a comparison of constants: all or nothing
        if (!(le ? 0 <= rhs : 0 >= rhs)) return nothing(api, loc);
        continue;
      }
      if (coeff.size() > 2)
        fail(loc, fmt::format("the mask of '{}' compares an expression of {} index axes: this model applies masks of "
                              "one or two axes per comparison (use nisa.affine_select for others)",
                              api, coeff.size()));
      if (coeff.size() == 2) {
        auto it = coeff.begin();
        const auto [a, ca] = *it++;
        const auto [b, cb] = *it;
        m.pairs_.push_back({a, b, ca, cb, le, rhs});
        continue;
      }
      const auto [a, c] = *coeff.begin();
      auto cur = m.bounds_.count(a) ? m.bounds_[a] : Interval{0, m.sizes_[a]};
      m.bounds_[a] = bound(cur, c, le, rhs);
    }
  }
  return m;
}

std::vector<Box> Mask::split(const std::set<int>& reduced) const {
  auto full = [&](int a) {
    auto it = bounds_.find(a);
    return it != bounds_.end() ? it->second : Interval{0, sizes_.at(a)};
  };
  Box base;
  base.bounds = bounds_;
  base.sizes = sizes_;
  if (pairs_.empty()) return {base};
  // Per enumerated axis e: its constraints (c_e, the other axis r, c_r, le, rhs).
  struct Con {
    int64_t ce;
    int r;
    int64_t cr;
    bool le;
    int64_t rhs;
  };
  std::map<int, std::vector<Con>> by_axis;
  for (const Pair& p : pairs_) {
    std::vector<int> choices;
    for (int x : {p.a, p.b})
      if (!reduced.count(x)) choices.push_back(x);
    if (choices.empty())
      fail(loc_, fmt::format("the mask of '{}' compares two axes the instruction reduces: this model applies masks "
                             "whose axes it can split into boxes",
                             api_));
    // a free axis if it can: a run of partitions must start where the engines allow
    const int e = *std::min_element(choices.begin(), choices.end(), [&](int x, int y) {
      return std::make_tuple(x == 0, sizes_.at(x)) < std::make_tuple(y == 0, sizes_.at(y));
    });
    by_axis[e].push_back(e == p.a ? Con{p.ca, p.b, p.cb, p.le, p.rhs} : Con{p.cb, p.a, p.ca, p.le, p.rhs});
  }
  for (const auto& [e, cons] : by_axis)
    for (const Con& c : cons)
      if (by_axis.count(c.r))
        fail(loc_, fmt::format("the mask of '{}' relates more than two index axes in a chain: this model applies masks "
                               "that bound each axis by at most one other (use nisa.affine_select)",
                               api_));
  // For each enumerated axis: runs of its values with the same bounds on the other axes.
  struct Run {
    int64_t v0, v1;
    std::vector<std::pair<int, Interval>> key;
  };
  std::vector<std::pair<int, std::vector<Run>>> runs;
  for (const auto& [e, cons] : by_axis) {
    const Interval re = full(e);
    std::vector<Run> axis_runs;
    for (int64_t v = re.first; v < re.second; ++v) {
      std::map<int, Interval> b;
      for (const Con& c : cons) {
        const Interval cur = b.count(c.r) ? b[c.r] : full(c.r);
        b[c.r] = bound(cur, c.cr, c.le, c.rhs - c.ce * v);
      }
      std::vector<std::pair<int, Interval>> key(b.begin(), b.end());
      if (!axis_runs.empty() && axis_runs.back().key == key && axis_runs.back().v1 == v)
        axis_runs.back().v1 = v + 1;
      else
        axis_runs.push_back({v, v + 1, std::move(key)});
    }
    runs.emplace_back(e, std::move(axis_runs));
  }
  std::vector<std::map<int, Interval>> boxes{bounds_};
  for (const auto& [e, axis_runs] : runs) {
    std::vector<std::map<int, Interval>> next;
    for (const auto& b : boxes)
      for (const Run& r : axis_runs) {
        auto nb = b;
        nb[e] = {r.v0, r.v1};
        for (const auto& [ax, rg] : r.key) {
          const Interval p = nb.count(ax) ? nb[ax] : full(ax);
          nb[ax] = {std::max(p.first, rg.first), std::min(p.second, rg.second)};
        }
        next.push_back(std::move(nb));
      }
    boxes = std::move(next);
  }
  std::vector<Box> out;
  for (auto& b : boxes) out.push_back(Box{std::move(b), sizes_});
  return out;
}

std::vector<Box> Mask::boxes(const std::set<int>& reduced) const {
  std::vector<Box> out;
  for (Box& b : split(reduced))
    if (!b.empty()) out.push_back(std::move(b));
  return out;
}

bool Mask::keeps_all() const {
  const auto bs = boxes();
  if (bs.size() != 1) return false;
  for (const auto& [a, r] : bs[0].bounds)
    if (r != Interval{0, sizes_.at(a)}) return false;
  return true;
}

Mask Mask::transposed() const {
  auto swap = [](int a) { return a == 0 ? 1 : a == 1 ? 0 : a; };
  Mask m;
  m.api_ = api_;
  m.loc_ = loc_;
  for (const auto& [a, n] : sizes_) m.sizes_[swap(a)] = n;
  for (const auto& [a, r] : bounds_) m.bounds_[swap(a)] = r;
  for (Pair p : pairs_) {
    p.a = swap(p.a);
    p.b = swap(p.b);
    m.pairs_.push_back(p);
  }
  return m;
}

void fit(const Box& b, const std::vector<int64_t>& shape, const std::set<int>& reduced, std::vector<Box>& out) {
  std::vector<int64_t> ext;
  for (size_t a = 0; a < shape.size(); ++a) ext.push_back(b.extent(shape, static_cast<int>(a)));
  if (product(ext, 1) <= kMaxFreeElems) {
    out.push_back(b);
    return;
  }
  for (size_t a = 1; a < shape.size(); ++a) {
    if (reduced.count(static_cast<int>(a)) || ext[a] <= 1) continue;
    const int64_t step = std::max<int64_t>(1, kMaxFreeElems / product(ext, a + 1));
    auto it = b.bounds.find(static_cast<int>(a));
    const Interval r = it != b.bounds.end() ? it->second : Interval{0, shape[a]};
    Box base = b;
    base.sizes[static_cast<int>(a)] = shape[a];
    for (int64_t s = r.first; s < r.second; s += step) {
      Box nb = base;
      nb.bounds[static_cast<int>(a)] = {s, std::min(r.second, s + step)};
      fit(nb, shape, reduced, out);
    }
    return;
  }
  out.push_back(b);
}

std::vector<int64_t> TileArg::shape() const { return deferred ? deferred->grid : t.shape().vec(); }

Dtype TileArg::dtype() const { return deferred ? deferred->base.dtype() : t.dtype(); }

Tensor TileArg::whole(const Loc& loc) const {
  (void)loc;
  if (deferred) throw ncore::KernelError(deferred->error);  // the view's own error, at the view's line
  return t;
}

Tensor cut(const TileArg& x, const Box& b, const Loc& loc) {
  if (x.deferred) {
    const Deferred& d = *x.deferred;
    std::vector<int64_t> offset = d.offset, grid = d.grid;
    for (const auto& [a, r] : b.bounds) {
      const auto au = static_cast<size_t>(a);
      if (au < grid.size() && grid[au] == b.sizes.at(a)) {
        for (size_t dim = 0; dim < offset.size(); ++dim) offset[dim] += d.coeff[dim][au] * r.first;
        grid[au] = std::max<int64_t>(0, r.second - r.first);
      }
    }
    return d.base.affine(offset, d.coeff, grid, loc);
  }
  const Shape s = x.t.shape();
  std::vector<Index> items(s.size(), Index(All{}));
  bool narrowed = false;
  for (const auto& [a, r] : b.bounds) {
    const auto au = static_cast<size_t>(a);
    if (au >= s.size() || s[au] == 1) continue;
    if (s[au] != b.sizes.at(a))
      fail(loc,
           fmt::format("the mask bounds axis {} of the index grid ({} elements) but operand {} has {} on that axis", a,
                       b.sizes.at(a), x.t.str(), s[au]));
    if (r == Interval{0, s[au]}) continue;
    items[au] = Index(Slice{r.first, r.second - r.first, 1});
    narrowed = true;
  }
  return narrowed ? x.t.index(items, loc) : x.t;
}

}  // namespace nki
