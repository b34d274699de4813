#pragma once
// hit::Tile<T>: typed, row-major memory over a Shape in global (array) coordinates (docs/tiles.md).
//
// A Tile is a *handle*: copying one is cheap and gives another handle to the same memory (like a
// shared_ptr), so tiles can be passed and stored by value. `clone()` makes a deep copy. Constness
// is shallow, as for any handle: a const Tile still hands out mutable views through select().
//
// Memory. An owning tile allocates, 64-byte aligned and zero-initialised, per axis
//   padded extent + 2 * ghost   elements,  padded extent = max(shape extent, max_shape extent),
// row-major (last axis contiguous). shape() starts `ghost` elements into every axis, so the ghost
// cells of the low side sit before it and those of the high side right after it (inside the
// padding when there is some). Padding (Hitmap's maxShape) lets the uneven blocks of a layout all
// have one buffer size, so shifts can exchange whole buffers.
//
// Coordinates. Elements are addressed by array indices, a(i, j) (the indices of shape(), which may
// be strided: a cyclic layout gives [1:100:4]), or by tile positions, a.local(p, q) (0..extent-1
// per axis). Position p of axis k lives at data() + p * step(k); positions may be negative or past
// the extent to reach ghost cells and padding: every index of allocated_shape() is addressable.
// a(i, j) costs a subtraction, a shift and a multiplication per axis, with no branch, for any
// stride; a.local(p, q) a multiplication per axis; inner loops that must vectorise can walk data()
// with step(k) instead.
//
// Views. select() returns a view sharing the memory (and keeping it alive). A view's steps are
// those of its parent scaled by the view's stride, so views of views of strided views address the
// right elements and writes through any of them reach the owner. A view has no ghosts and no
// padding of its own (it addresses exactly its shape()), except padded(), which keeps the ghosts.

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/shape.hpp"

namespace hit {

struct TileOptions {
  // Null: no padding. Else the allocated extent of axis k is max(shape.extent(k),
  // max_shape.extent(k)); max_shape must have the rank of the shape (only its extents matter).
  Shape max_shape{};
  // Ghost border width on every side of every axis, in elements (positions); >= 0.
  index_t ghost = 0;
};

// How Tile<T>::of(layout) allocates this process's part of a layout.
struct LayoutTileOptions {
  // Pad to the layout's largest block (max_extents()): every block of the layout then fits the
  // buffer, so shifts can exchange whole buffers (Hitmap's maxShape).
  bool padded = false;
  // Ghost border width, as TileOptions::ghost.
  index_t ghost = 0;
};

namespace detail {

// Non-template parts of Tile (src/tiles/tile.cpp).

// The shape extended at the end of each axis to the padded extents (validates `max_shape`).
Shape padded_shape(const Shape& shape, const Shape& max_shape);
void check_ghost_width(index_t ghost);
// Elements of an allocation of `padded` plus `ghost` on each side of every axis; throws
// Error(out_of_memory) when the byte count does not fit (names the shape and the bytes).
index_t allocation_elements(const Shape& padded, index_t ghost, std::size_t element_size);
// 64-byte aligned raw memory; Error(out_of_memory) naming the bytes when it cannot be had.
void* allocate_aligned(std::size_t bytes);
void free_aligned(void* p) noexcept;
inline constexpr std::size_t tile_alignment = 64;

[[noreturn]] void throw_not_addressable(const Index& index, const Shape& shape,
                                        const Shape& allocated, const char* coordinates);
[[noreturn]] void throw_bad_selection(const Shape& sub, const Shape& shape, const Shape& allocated);
[[noreturn]] void throw_extent_mismatch(const Shape& to, const Shape& from);
[[noreturn]] void throw_bad_relabel(const Shape& to, const Shape& shape);
[[noreturn]] void throw_bad_axis(int axis, int rank);

using Steps = std::array<index_t, max_rank>;

// The inverse of an odd number modulo 2^64 (Newton's iteration: each step doubles the correct
// low bits, starting from 3 since a * a == 1 mod 8 for odd a).
constexpr std::uint64_t odd_inverse(std::uint64_t a) noexcept {
  std::uint64_t x = a;
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
static_assert(odd_inverse(3) * 3 == 1 && odd_inverse(12345) * 12345 == 1);

// Calls row(positions, offset_a, offset_b) for every row of an `extent` box (every combination of
// positions of the axes before the last, row-major); offsets are in elements along steps a and b.
template <class Row>
void for_each_row(int rank, const Steps& extent, const Steps& step_a, const Steps& step_b,
                  Row&& row) {
  if (rank == 0) return;
  for (int k = 0; k < rank; ++k) {
    if (extent[static_cast<std::size_t>(k)] == 0) return;
  }
  Steps pos{};
  index_t a = 0, b = 0;
  for (;;) {
    row(static_cast<const Steps&>(pos), a, b);
    int k = rank - 2;
    for (; k >= 0; --k) {
      const auto u = static_cast<std::size_t>(k);
      ++pos[u];
      a += step_a[u];
      b += step_b[u];
      if (pos[u] < extent[u]) break;
      a -= pos[u] * step_a[u];
      b -= pos[u] * step_b[u];
      pos[u] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace detail

template <class T>
class Tile {
  // Tiles are moved as bytes: by MPI, to and from devices, to and from files.
  static_assert(std::is_trivially_copyable_v<T>, "hit::Tile holds trivially copyable elements");

 public:
  using value_type = T;

  // The null tile: no memory, null shape (what an inactive process holds).
  Tile() = default;

  // An owning tile over `shape`, zero-initialised. A null shape gives the null tile.
  explicit Tile(const Shape& shape, TileOptions options = {}) {
    if (shape.is_null()) return;
    detail::check_ghost_width(options.ghost);
    padded_ = detail::padded_shape(shape, options.max_shape);
    shape_ = shape;
    ghost_ = options.ghost;
    const index_t n = detail::allocation_elements(padded_, ghost_, sizeof(T));
    allocated_bytes_ = n * static_cast<index_t>(sizeof(T));
    if (n > 0) {
      T* p = static_cast<T*>(detail::allocate_aligned(static_cast<std::size_t>(allocated_bytes_)));
      std::uninitialized_value_construct_n(p, static_cast<std::size_t>(n));
      buffer_ = std::shared_ptr<T>(p, [](T* q) { detail::free_aligned(q); });
    }
    // Row-major steps over the allocated extents; the origin is `ghost` in on every axis.
    index_t step = 1, origin = 0;
    for (int k = rank() - 1; k >= 0; --k) {
      step_[static_cast<std::size_t>(k)] = step;
      origin += ghost_ * step;
      step *= padded_.extent(k) + 2 * ghost_;
    }
    origin_ = buffer_ ? buffer_.get() + origin : nullptr;
    update_addressing();
  }

  // This process's block of `layout` (a hit::Layout: the tile layer does not depend on it), the
  // null tile when the process holds none (inactive). Error(invalid_argument) when the layout
  // gives the process several blocks (make one tile per block of layout.local().blocks).
  template <class L>
  static Tile of(const L& layout, LayoutTileOptions options = {}) {
    const auto mine = layout.local();
    if (!mine.active) return Tile();
    return Tile(mine.block(),
                TileOptions{options.padded ? layout.max_extents() : Shape{}, options.ghost});
  }

  // ---- geometry ----------------------------------------------------------------------------
  const Shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.rank(); }
  index_t ghost() const noexcept { return ghost_; }
  Shape ghost_shape() const { return shape_.expand(ghost_); }
  // shape() extended at the end of each axis to the padded extents (same begins and strides).
  const Shape& padded_shape() const noexcept { return padded_; }
  // Every index this handle can address: padded_shape().expand(ghost()). It contains
  // ghost_shape() and padded_shape(); select() accepts any sub-shape of it.
  Shape allocated_shape() const { return padded_.expand(ghost_); }

  bool is_null() const noexcept { return shape_.is_null(); }
  bool is_view() const noexcept { return view_; }
  bool empty() const noexcept { return shape_.empty(); }
  index_t size() const noexcept { return shape_.size(); }
  // Bytes of the whole allocation this tile lives in (padding and ghosts included; a view
  // reports its owner's allocation).
  index_t allocated_bytes() const noexcept { return allocated_bytes_; }

  // The element at shape().first() (nullptr for the null tile).
  T* data() noexcept { return origin_; }
  const T* data() const noexcept { return origin_; }
  // Memory distance in elements between neighbouring positions of shape() along `axis`.
  index_t step(int axis) const {
    if (axis < 0 || axis >= rank()) detail::throw_bad_axis(axis, rank());
    return step_[static_cast<std::size_t>(axis)];
  }
  const std::array<index_t, max_rank>& steps() const noexcept { return step_; }
  // shape()'s elements are one dense run in memory (row-major, no gaps).
  bool contiguous() const noexcept {
    index_t expected = 1;
    for (int k = rank() - 1; k >= 0; --k) {
      const index_t e = shape_.extent(k);
      if (e == 0) return true;
      if (e == 1) continue;
      if (step_[static_cast<std::size_t>(k)] != expected) return false;
      expected *= e;
    }
    return true;
  }

  // ---- element access ----------------------------------------------------------------------
  // One meaning per spelling (as on View):
  //   a(i, j, ...)      array indices; the hot path, bounds-checked (Error(shape)) only in debug
  //                     builds (NDEBUG unset);
  //   a.at(i, j, ...)   array indices, always bounds-checked (Error(shape));
  //   a.local(p, q, ...) tile positions (0..extent-1 of shape(); ghost cells at -ghost..-1 and
  //                     extent..), bounds-checked only in debug builds.
  // All may address ghost cells and padding (allocated_shape()).
  template <std::integral... I>
  T& operator()(I... array_indices) {
    static_assert(sizeof...(I) >= 1 && sizeof...(I) <= max_rank, "a tile has 1 to 8 axes");
    return origin_[offset_of(static_cast<index_t>(array_indices)...)];
  }
  template <std::integral... I>
  const T& operator()(I... array_indices) const {
    static_assert(sizeof...(I) >= 1 && sizeof...(I) <= max_rank, "a tile has 1 to 8 axes");
    return origin_[offset_of(static_cast<index_t>(array_indices)...)];
  }
  T& operator()(const Index& array_index) { return origin_[offset_of(array_index)]; }
  const T& operator()(const Index& array_index) const { return origin_[offset_of(array_index)]; }

  template <std::integral... I>
  T& at(I... array_indices) {
    return at(Index{static_cast<index_t>(array_indices)...});
  }
  template <std::integral... I>
  const T& at(I... array_indices) const {
    return at(Index{static_cast<index_t>(array_indices)...});
  }
  T& at(const Index& array_index) {
    check_addressable(array_index);
    return origin_[unchecked_offset(array_index)];
  }
  const T& at(const Index& array_index) const {
    check_addressable(array_index);
    return origin_[unchecked_offset(array_index)];
  }

  template <std::integral... I>
  T& local(I... positions) {
    static_assert(sizeof...(I) >= 1 && sizeof...(I) <= max_rank, "a tile has 1 to 8 axes");
    return origin_[position_offset(static_cast<index_t>(positions)...)];
  }
  template <std::integral... I>
  const T& local(I... positions) const {
    static_assert(sizeof...(I) >= 1 && sizeof...(I) <= max_rank, "a tile has 1 to 8 axes");
    return origin_[position_offset(static_cast<index_t>(positions)...)];
  }
  T& local(const Index& positions) { return origin_[position_offset(positions)]; }
  const T& local(const Index& positions) const { return origin_[position_offset(positions)]; }

  // Whether `array_index` can be addressed through this handle (is in allocated_shape()).
  bool addressable(const Index& array_index) const {
    return !is_null() && allocated_shape().contains(array_index);
  }

  // ---- views -------------------------------------------------------------------------------
  // A view of `sub` (array coordinates), which must lie inside allocated_shape() (so inside
  // ghost_shape() or padded_shape() or both), else Error(shape). Selecting null from null gives
  // the null tile.
  Tile select(const Shape& sub) const {
    if (is_null() && sub.is_null()) return Tile();
    const Shape reach = allocated_shape();
    if (sub.rank() != rank() || !reach.includes(sub)) {
      detail::throw_bad_selection(sub, shape_, reach);
    }
    Tile v = *this;
    v.view_ = true;
    v.ghost_ = 0;
    Shape own = sub;
    if (!sub.empty()) {
      index_t offset = 0;
      for (int k = 0; k < rank(); ++k) {
        const auto u = static_cast<std::size_t>(k);
        const Sig& mine = shape_[k];
        const Sig& s = sub[k];
        offset += (s.begin() - mine.begin()) / mine.stride() * step_[u];
        if (s.size() > 1) {
          v.step_[u] = step_[u] * (s.stride() / mine.stride());
        } else {
          // One element: its stride is arbitrary; use ours so position arithmetic stays exact.
          own = own.with_sig(k, Sig(s.begin(), s.begin() + 1, mine.stride()));
        }
      }
      v.origin_ = origin_ + offset;
    }
    v.shape_ = own;
    v.padded_ = own;
    v.update_addressing();
    return v;
  }
  // A view by positions of shape() (e.g. [0:2][1:5:2]); Error(shape) outside 0..extent.
  Tile select_tile(const Shape& positions) const {
    if (is_null() && positions.is_null()) return Tile();
    return select(shape_.select_tile(positions));
  }
  // A view of the same elements under another shape of the same extents (Hitmap's relabelling):
  // position p of shape() is position p of `to`. For a buffer reused for data of other global
  // indices (the panels of a matrix product). Error(shape) when the extents differ.
  Tile relabel(const Shape& to) const {
    if (is_null() && to.is_null()) return Tile();
    bool same = to.rank() == rank();
    for (int k = 0; same && k < rank(); ++k) same = to.extent(k) == shape_.extent(k);
    if (!same) detail::throw_bad_relabel(to, shape_);
    Tile v = *this;
    v.view_ = true;
    Shape padded = to;
    for (int k = 0; k < rank(); ++k) {
      const Sig& s = to[k];
      padded = padded.with_sig(
          k, Sig(s.begin(), s.begin() + padded_.extent(k) * s.stride(), s.stride()));
    }
    v.shape_ = to;
    v.padded_ = padded;
    v.update_addressing();
    return v;
  }
  // A view of `block` with `ghost` cells on each side of every axis, in this tile's memory:
  // block.expand(ghost) must lie inside allocated_shape(), on this tile's strides (Error(shape)
  // otherwise). A buffer allocated with room to spare holds a block that grows or shrinks in
  // place this way: the elements that stay keep their addresses (rows a balancer moves).
  Tile within(const Shape& block, index_t ghost) const {
    detail::check_ghost_width(ghost);
    bool same_strides = !is_null() && block.rank() == rank();
    for (int k = 0; same_strides && k < rank(); ++k) {
      same_strides = block[k].stride() == shape_[k].stride();
    }
    const Shape reach = allocated_shape();
    if (!same_strides || block.empty() || !reach.includes(block.expand(ghost))) {
      detail::throw_bad_selection(block.is_null() ? block : block.expand(ghost), shape_, reach);
    }
    Tile v = select(block);
    v.ghost_ = ghost;
    v.update_addressing();
    return v;
  }
  // A view over ghost_shape().
  Tile with_ghosts() const { return select(ghost_shape()); }
  // A view over padded_shape(); it keeps the ghost width.
  Tile padded() const {
    Tile v = *this;
    v.view_ = true;
    v.shape_ = padded_;
    v.update_addressing();
    return v;
  }

  // A deep copy: a new owning tile with the same shape, padding and ghosts, and a copy of every
  // addressable element (ghost cells and padding included).
  Tile clone() const {
    if (is_null()) return Tile();
    Tile out(shape_, TileOptions{padded_, ghost_});
    const Shape all = allocated_shape();
    out.select(all).copy_from(select(all));
    return out;
  }

  // ---- whole-tile operations ---------------------------------------------------------------
  void fill(const T& value) {
    const index_t n = inner_extent(), st = inner_step();
    for_each_row_of([&](const detail::Steps&, index_t off, index_t) {
      T* p = origin_ + off;
      if (st == 1) {
        std::fill_n(p, n, value);
      } else {
        for (index_t j = 0; j < n; ++j) p[j * st] = value;
      }
    });
  }

  // Copies `other`'s elements in row-major order: the extents must be equal per axis (begins,
  // strides and steps may differ), else Error(shape). The two must not overlap in memory unless
  // they are the same elements.
  void copy_from(const Tile& other) {
    if (other.rank() != rank()) detail::throw_extent_mismatch(shape_, other.shape_);
    for (int k = 0; k < rank(); ++k) {
      if (other.shape_.extent(k) != shape_.extent(k)) {
        detail::throw_extent_mismatch(shape_, other.shape_);
      }
    }
    if (is_null() || (other.origin_ == origin_ && other.step_ == step_)) return;
    const index_t n = inner_extent(), sa = inner_step(), sb = other.inner_step();
    const T* src_origin = other.origin_;
    detail::for_each_row(rank(), extents(), step_, other.step_,
                         [&](const detail::Steps&, index_t to, index_t from) {
                           T* dst = origin_ + to;
                           const T* src = src_origin + from;
                           if (sa == 1 && sb == 1) {
                             std::copy_n(src, n, dst);
                           } else {
                             for (index_t j = 0; j < n; ++j) dst[j * sa] = src[j * sb];
                           }
                         });
  }

  // fn(const Index& array_index, T& value) for every element of shape(), row-major.
  template <class F>
  void for_each(F&& fn) {
    visit(*this, fn);
  }
  template <class F>
  void for_each(F&& fn) const {
    visit(*this, fn);
  }

  // Row-major copy of shape()'s elements.
  std::vector<T> to_vector() const {
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(size()));
    const index_t n = inner_extent(), st = inner_step();
    for_each_row_of([&](const detail::Steps&, index_t off, index_t) {
      const T* p = origin_ + off;
      for (index_t j = 0; j < n; ++j) out.push_back(p[j * st]);
    });
    return out;
  }

 private:
  // Called whenever shape_, step_ or ghost_ change. Array index i of axis k is at memory offset
  // ((i - begin) / stride) * step from data(). The division is exact (i is on the axis' lattice):
  // it is a shift by the stride's power of two and a product by the inverse of its odd part modulo
  // 2^64, folded into one multiplier. Counting from the lowest addressable index keeps the shifted
  // value non-negative, so a logical shift (which vectorises) is exact. No branch, no division.
  void update_addressing() {
    offset_bias_ = 0;
    for (int k = 0; k < rank(); ++k) {
      const auto u = static_cast<std::size_t>(k);
      const Sig& s = shape_[k];
      const auto stride = static_cast<std::uint64_t>(s.stride());
      lowest_[u] = s.begin() - ghost_ * s.stride();
      shift_[u] = static_cast<std::uint64_t>(std::countr_zero(stride));
      multiplier_[u] =
          detail::odd_inverse(stride >> shift_[u]) * static_cast<std::uint64_t>(step_[u]);
      offset_bias_ += static_cast<std::uint64_t>(ghost_ * step_[u]);
    }
  }

  detail::Steps extents() const {
    detail::Steps e{};
    for (int k = 0; k < rank(); ++k) e[static_cast<std::size_t>(k)] = shape_.extent(k);
    return e;
  }
  index_t inner_extent() const { return rank() == 0 ? 0 : shape_.extent(rank() - 1); }
  index_t inner_step() const {
    return rank() == 0 ? 0 : step_[static_cast<std::size_t>(rank() - 1)];
  }

  template <class Row>
  void for_each_row_of(Row&& row) const {
    detail::for_each_row(rank(), extents(), step_, step_, row);
  }

  template <class Self, class F>
  static void visit(Self& self, F& fn) {
    const int r = self.rank();
    const index_t n = self.inner_extent(), st = self.inner_step();
    const Sig inner = r == 0 ? Sig() : self.shape_[r - 1];
    Index idx = Index::zeros(r);
    self.for_each_row_of([&](const detail::Steps& pos, index_t off, index_t) {
      for (int k = 0; k + 1 < r; ++k)
        idx[k] = self.shape_[k].to_array(pos[static_cast<std::size_t>(k)]);
      std::conditional_t<std::is_const_v<Self>, const T*, T*> p = self.origin_ + off;
      for (index_t j = 0; j < n; ++j) {
        idx[r - 1] = inner.to_array(j);
        fn(static_cast<const Index&>(idx), p[j * st]);
      }
    });
  }

  // Memory offset of array index i on axis k from the lowest addressable index (wrapping
  // unsigned arithmetic; see update_addressing).
  std::uint64_t axis_offset(std::size_t k, index_t i) const noexcept {
    return (static_cast<std::uint64_t>(i - lowest_[k]) >> shift_[k]) * multiplier_[k];
  }

  template <class... I>
  index_t offset_of(I... i) const {
#ifndef NDEBUG
    check_addressable(Index{i...});
#endif
    std::uint64_t off = 0;
    std::size_t k = 0;
    ((off += axis_offset(k++, i)), ...);
    return static_cast<index_t>(off - offset_bias_);
  }
  index_t offset_of(const Index& i) const {
#ifndef NDEBUG
    check_addressable(i);
#endif
    return unchecked_offset(i);
  }
  index_t unchecked_offset(const Index& i) const noexcept {
    std::uint64_t off = 0;
    for (int k = 0; k < i.rank(); ++k) off += axis_offset(static_cast<std::size_t>(k), i[k]);
    return static_cast<index_t>(off - offset_bias_);
  }
  template <class... P>
  index_t position_offset(P... p) const {
#ifndef NDEBUG
    check_position(Index{p...});
#endif
    index_t off = 0;
    std::size_t k = 0;
    ((off += p * step_[k++]), ...);
    return off;
  }
  index_t position_offset(const Index& p) const {
#ifndef NDEBUG
    check_position(p);
#endif
    index_t off = 0;
    for (int k = 0; k < p.rank(); ++k) off += p[k] * step_[static_cast<std::size_t>(k)];
    return off;
  }
  void check_position(const Index& p) const {
    if (p.rank() != rank() || !addressable(shape_.to_array(p))) {
      detail::throw_not_addressable(p, shape_, allocated_shape(), "tile position");
    }
  }
  void check_addressable(const Index& i) const {
    if (!addressable(i)) detail::throw_not_addressable(i, shape_, allocated_shape(), "index");
  }

  std::shared_ptr<T> buffer_;  // the whole allocation, shared by every view of it
  T* origin_ = nullptr;        // element at shape_.first()
  Shape shape_;
  Shape padded_;
  index_t ghost_ = 0;
  detail::Steps step_{};
  index_t allocated_bytes_ = 0;
  bool view_ = false;
  // Addressing (see update_addressing), per axis: the lowest addressable index, the trailing zero
  // bits of the stride, the inverse of its odd part times the step; and the offset of data().
  std::array<index_t, max_rank> lowest_{};
  std::array<std::uint64_t, max_rank> shift_{};
  std::array<std::uint64_t, max_rank> multiplier_{};
  std::uint64_t offset_bias_ = 0;
};

}  // namespace hit
