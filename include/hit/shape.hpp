#pragma once
// Index domains: Sig (one axis) and Shape (up to 8 axes), with their algebra (docs/tiles.md).
//
// A Sig is the half-open, strided index set {begin, begin+stride, ... < end}. A Shape is the
// Cartesian product of its Sigs, in global (array) coordinates. Both are small value types.
// Equality is equality of the index sets: [0:10:2] == [0:9:2], and all empty sets are equal.

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/error.hpp"

namespace hit {

using index_t = std::int64_t;
inline constexpr int max_rank = 8;

namespace detail {

// Wide enough for a product of two index_t (GCC/Clang extension, hence the marker).
__extension__ using int128 = __int128;

constexpr index_t floor_div(index_t a, index_t b) {
  index_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
constexpr index_t floor_mod(index_t a, index_t b) {
  return a - floor_div(a, b) * b;
}

// Inverse of a modulo m (gcd(a, m) == 1, m >= 1).
constexpr index_t mod_inverse(index_t a, index_t m) {
  if (m == 1) return 0;
  index_t old_r = floor_mod(a, m), r = m, old_s = 1, s = 0;
  while (r != 0) {
    const index_t q = old_r / r;
    const index_t tr = old_r - q * r;
    old_r = r;
    r = tr;
    const index_t ts = old_s - q * s;
    old_s = s;
    s = ts;
  }
  return floor_mod(old_s, m);
}

}  // namespace detail

class Sig {
 public:
  constexpr Sig() = default;
  // Throws Error(invalid_argument) for stride <= 0 or end < begin.
  constexpr Sig(index_t begin, index_t end, index_t stride = 1)
      : begin_(begin), end_(end), stride_(stride) {
    if (stride <= 0) {
      throw Error(ErrorKind::invalid_argument,
                  "signature stride must be positive, got " + std::to_string(stride));
    }
    if (end < begin) {
      throw Error(ErrorKind::invalid_argument, "signature end " + std::to_string(end) +
                                                   " is before its begin " + std::to_string(begin) +
                                                   " (use end == begin for an empty axis)");
    }
    index_t span = 0;
    if (__builtin_sub_overflow(end, begin, &span)) {
      throw Error(ErrorKind::invalid_argument,
                  "signature [" + std::to_string(begin) + ":" + std::to_string(end) +
                      "] spans more indices than a 64-bit count holds");
    }
  }

  constexpr index_t begin() const noexcept { return begin_; }
  constexpr index_t end() const noexcept { return end_; }
  constexpr index_t stride() const noexcept { return stride_; }

  // Number of indices (cardinality).
  // (Never overflows: the constructor checked end - begin, and no stride is added to it.)
  constexpr index_t size() const noexcept {
    const index_t span = end_ - begin_;
    return span / stride_ + (span % stride_ != 0 ? 1 : 0);
  }
  constexpr bool empty() const noexcept { return end_ <= begin_; }
  // The last index; only meaningful when not empty.
  constexpr index_t last() const noexcept { return begin_ + (size() - 1) * stride_; }

  constexpr bool contains(index_t i) const noexcept {
    return i >= begin_ && i < end_ && (i - begin_) % stride_ == 0;
  }
  // Array (global) index -> position in this set, and back.
  constexpr index_t to_tile(index_t i) const noexcept { return (i - begin_) / stride_; }
  constexpr index_t to_array(index_t t) const noexcept { return begin_ + t * stride_; }

  // The indices in both sets (a strided set again: the stride is the lcm of the two).
  constexpr Sig intersect(const Sig& o) const {
    if (empty() || o.empty()) return Sig(begin_, begin_, 1);
    const index_t g = std::gcd(stride_, o.stride_);
    const index_t diff = o.begin_ - begin_;
    const index_t lo = std::max(begin_, o.begin_);
    const index_t hi = std::min(end_, o.end_);
    if (diff % g != 0 || hi <= lo) return Sig(lo, lo, 1);
    const index_t l = stride_ / g * o.stride_;
    // x = begin + stride * k with stride * k == diff (mod o.stride).
    const index_t m = o.stride_ / g;
    const index_t k =
        static_cast<index_t>(static_cast<detail::int128>(detail::floor_mod(diff / g, m)) *
                             detail::mod_inverse(stride_ / g, m) % m);
    const index_t x0 = begin_ + stride_ * k;
    const index_t first = x0 + detail::floor_div(lo - x0 + l - 1, l) * l;  // smallest >= lo
    if (first >= hi) return Sig(lo, lo, 1);
    return Sig(first, hi, l);
  }

  // The smallest strided set that contains both (bounding union).
  constexpr Sig bounding(const Sig& o) const {
    if (empty()) return o;
    if (o.empty()) return *this;
    index_t s = 0;
    const index_t b = std::min(begin_, o.begin_);
    const index_t diff = begin_ > o.begin_ ? begin_ - o.begin_ : o.begin_ - begin_;
    s = std::gcd(s, diff);
    if (size() > 1) s = std::gcd(s, stride_);
    if (o.size() > 1) s = std::gcd(s, o.stride_);
    if (s == 0) s = 1;
    return Sig(b, std::max(last(), o.last()) + 1, s);
  }

  // Grows the set by `before` indices below and `after` above (negative values shrink it);
  // the result is empty when it shrinks past itself.
  constexpr Sig expand(index_t before, index_t after) const {
    index_t n = 0;
    index_t shift = 0;
    index_t b = 0;
    bool overflow = __builtin_add_overflow(size(), before, &n) ||
                    __builtin_add_overflow(n, after, &n) ||
                    __builtin_mul_overflow(before, stride_, &shift) ||
                    __builtin_sub_overflow(begin_, shift, &b);
    if (!overflow && n <= 0) return Sig(b, b, stride_);
    index_t end = 0;
    overflow = overflow || __builtin_mul_overflow(n - 1, stride_, &end) ||
               __builtin_add_overflow(end, b + 1, &end);
    if (overflow)
      throw_out_of_range("expanded by " + std::to_string(before) + ", " + std::to_string(after));
    return Sig(b, end, stride_);
  }

  constexpr Sig displace(index_t offset) const {
    index_t b = 0;
    index_t e = 0;
    if (__builtin_add_overflow(begin_, offset, &b) || __builtin_add_overflow(end_, offset, &e)) {
      throw_out_of_range("displaced by " + std::to_string(offset));
    }
    return Sig(b, e, stride_);
  }

  // Positions [first, last) with step `step` of this set (tile coordinates), as array indices.
  constexpr Sig select_tile(index_t first, index_t last_excl, index_t step = 1) const {
    if (step <= 0) {
      throw Error(ErrorKind::invalid_argument,
                  "selection stride must be positive, got " + std::to_string(step));
    }
    if (first < 0 || last_excl < first || last_excl > size()) {
      throw Error(ErrorKind::shape, "tile selection [" + std::to_string(first) + ":" +
                                        std::to_string(last_excl) +
                                        "] is outside [0:" + std::to_string(size()) + "]");
    }
    const index_t n = (last_excl - first + step - 1) / step;
    const index_t b = to_array(first);
    if (n == 0) return Sig(b, b, stride_ * step);
    return Sig(b, b + (n - 1) * stride_ * step + 1, stride_ * step);
  }

  // Is every index of `o` an index of this set?
  constexpr bool includes(const Sig& o) const noexcept {
    if (o.empty()) return true;
    if (!contains(o.begin_)) return false;
    if (o.size() == 1) return true;
    return o.stride_ % stride_ == 0 && o.last() < end_;
  }

  friend constexpr bool operator==(const Sig& a, const Sig& b) noexcept {
    const index_t n = a.size();
    if (n != b.size()) return false;
    if (n == 0) return true;
    if (a.begin_ != b.begin_) return false;
    return n == 1 || a.stride_ == b.stride_;
  }

  std::string str() const;

 private:
  [[noreturn]] void throw_out_of_range(const std::string& what) const;
  index_t begin_ = 0;
  index_t end_ = 0;
  index_t stride_ = 1;
};

// A point in an index space of rank 1..8.
class Index {
 public:
  constexpr Index() = default;
  constexpr Index(std::initializer_list<index_t> v) {
    if (v.size() > max_rank) {
      throw Error(ErrorKind::invalid_argument,
                  "an index has at most 8 coordinates, got " + std::to_string(v.size()));
    }
    for (index_t x : v) v_[static_cast<std::size_t>(rank_++)] = x;
  }
  static constexpr Index zeros(int rank) {
    if (rank < 0 || rank > max_rank) {
      throw Error(ErrorKind::invalid_argument,
                  "an index has 0 to 8 coordinates, got " + std::to_string(rank));
    }
    Index i;
    i.rank_ = rank;
    return i;
  }
  constexpr int rank() const noexcept { return rank_; }
  constexpr index_t& operator[](int axis) noexcept { return v_[static_cast<std::size_t>(axis)]; }
  constexpr index_t operator[](int axis) const noexcept {
    return v_[static_cast<std::size_t>(axis)];
  }
  friend constexpr bool operator==(const Index& a, const Index& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (int k = 0; k < a.rank_; ++k) {
      if (a[k] != b[k]) return false;
    }
    return true;
  }
  std::string str() const;

 private:
  std::array<index_t, max_rank> v_{};
  int rank_ = 0;
};

class Shape {
 public:
  // The null shape (rank 0): "no domain", as an inactive process has.
  constexpr Shape() = default;
  constexpr Shape(std::initializer_list<Sig> sigs) {
    if (sigs.size() == 0 || sigs.size() > max_rank) {
      throw Error(ErrorKind::invalid_argument,
                  "a shape has 1 to 8 axes, got " + std::to_string(sigs.size()));
    }
    for (const Sig& s : sigs) sigs_[static_cast<std::size_t>(rank_++)] = s;
    check_size();
  }
  // A shape [0:e0][0:e1]... from extents.
  static Shape extents(std::initializer_list<index_t> ext);
  static Shape of_rank(int rank);  // rank axes, all [0:0]

  // Parses `[b:e]`, `[b:e:s]` or `[e]` (= [0:e]) per axis, e.g. "[0:10][0:20:2]".
  static Shape parse(std::string_view text);

  constexpr int rank() const noexcept { return rank_; }
  constexpr bool is_null() const noexcept { return rank_ == 0; }
  constexpr const Sig& operator[](int axis) const noexcept {
    return sigs_[static_cast<std::size_t>(axis)];
  }
  const Sig& sig(int axis) const;  // checked
  Shape with_sig(int axis, const Sig& s) const;

  // Number of indices per axis and in all.
  constexpr index_t extent(int axis) const noexcept { return (*this)[axis].size(); }
  // (Never overflows: every Shape is checked to have at most 2^63-1 indices when it is made.)
  constexpr index_t size() const noexcept {
    if (rank_ == 0) return 0;
    index_t n = 1;
    for (int k = 0; k < rank_; ++k) n *= (*this)[k].size();
    return n;
  }
  constexpr bool empty() const noexcept { return size() == 0; }

  constexpr bool contains(const Index& i) const noexcept {
    if (i.rank() != rank_ || rank_ == 0) return false;
    for (int k = 0; k < rank_; ++k) {
      if (!(*this)[k].contains(i[k])) return false;
    }
    return true;
  }
  // Every index of `o` is in this shape (the null and empty shapes are in every shape).
  bool includes(const Shape& o) const;

  // Algebra; the ranks must agree (Error(shape) otherwise). The null shape is neutral for bounding.
  Shape intersect(const Shape& o) const;
  Shape bounding(const Shape& o) const;
  Shape expand(index_t width) const;  // every axis, both sides
  Shape expand(int axis, index_t before, index_t after) const;
  Shape displace(const Index& offset) const;
  // The indices of this shape outside the index ranges of `hole` (its first to its last index on
  // every axis), as at most 2·rank disjoint boxes: slabs below and above the hole along axis 0,
  // then, inside the hole's range of axis 0, along axis 1, and so on. Empty boxes are left out.
  // What an update overlapped with a halo exchange needs: the hole is the part that reads no
  // ghost cell, the boxes are the faces computed once the ghosts have arrived.
  std::vector<Shape> subtract(const Shape& hole) const;
  // Sub-selection by positions (tile coordinates, e.g. [0:2] = the first two indices of each axis).
  Shape select_tile(const Shape& positions) const;
  // Sub-selection by array indices: `sub` must lie inside this shape (Error(shape) otherwise).
  Shape select_array(const Shape& sub) const;

  // First index (row-major order) and per-axis positions (Error(shape) on a rank mismatch).
  Index first() const;
  Index to_tile(const Index& array_index) const;
  Index to_array(const Index& tile_index) const;

  // Visits every index in row-major order.
  template <class F>
  void for_each(F&& fn) const {
    if (empty()) return;
    Index i = first();
    for (;;) {
      fn(static_cast<const Index&>(i));
      int k = rank_ - 1;
      for (; k >= 0; --k) {
        i[k] += (*this)[k].stride();
        if (i[k] < (*this)[k].end()) break;
        i[k] = (*this)[k].begin();
      }
      if (k < 0) return;
    }
  }

  friend constexpr bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    const bool ea = a.rank_ > 0 && a.empty();
    const bool eb = b.rank_ > 0 && b.empty();
    if (ea || eb) return ea && eb;
    for (int k = 0; k < a.rank_; ++k) {
      if (!(a[k] == b[k])) return false;
    }
    return true;
  }

  std::string str() const;

 private:
  void require_same_rank(const Shape& o, const char* op) const;
  // Every operation that can make a shape larger checks that its index count fits index_t (so
  // size() never wraps): Error(invalid_argument) naming the shape otherwise.
  constexpr void check_size() const {
    for (int k = 0; k < rank_; ++k) {
      if ((*this)[k].size() == 0) return;
    }
    index_t n = 1;
    for (int k = 0; k < rank_; ++k) {
      if (__builtin_mul_overflow(n, (*this)[k].size(), &n)) throw_too_large();
    }
  }
  [[noreturn]] void throw_too_large() const;

  std::array<Sig, max_rank> sigs_{};
  int rank_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Sig& s);
std::ostream& operator<<(std::ostream& os, const Shape& s);
std::ostream& operator<<(std::ostream& os, const Index& i);

}  // namespace hit
