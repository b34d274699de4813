#pragma once
// Internal: the one description of "memory laid out over a shape" that every layer below the
// program shares. A host tile's block, a view a kernel body receives, a message's piece of a
// tile, a staging buffer and a device copy are each a Region: the element type is erased (only
// its size is kept), so the comm and device layers are compiled once, in the library. Not part
// of the API: programs hold Tiles, Residents and Views.

#include <array>
#include <cstddef>
#include <type_traits>

#include "hit/shape.hpp"
#include "hit/tile.hpp"
#include "hit/view.hpp"

namespace hit::detail {

// Elements `element_size` bytes wide over the array indices of `shape`: the element at
// shape.first() is at `data`, and the next point of axis k is steps[k] elements further (steps
// may be of any sign, and `data` may be null for a region not yet placed: a device layout's
// offsets before its allocation). The null region has a null shape.
struct Region {
  void* data = nullptr;
  std::size_t element_size = 0;
  Shape shape;
  std::array<index_t, max_rank> steps{};

  int rank() const noexcept { return shape.rank(); }
  // shape's points (0 for the null region).
  index_t elements() const noexcept { return shape.is_null() ? 0 : shape.size(); }
  // The elements are one dense run in memory, in row-major order.
  bool contiguous() const noexcept;

  // Elements from data to the first point of `sub` (whose points lie on shape's grid, inside or
  // outside shape: a ghost ring or padding around it).
  index_t offset_of(const Shape& sub) const noexcept;
  // The steps from one point of `sub` to the next (sub's strides are multiples of shape's).
  std::array<index_t, max_rank> steps_over(const Shape& sub) const noexcept;
  // The same memory seen over `sub` (as Tile::select): no bounds are checked here, the owner of
  // the memory knows what it may reach.
  Region select(const Shape& sub) const noexcept;
  // The same layout at another address (a device copy laid out as this region says).
  Region placed_at(void* at) const noexcept {
    Region r = *this;
    r.data = at;
    return r;
  }
  // Where the element at shape.first() + `elements` steps lies.
  unsigned char* byte_at(index_t elements) const noexcept {
    return static_cast<unsigned char*>(data) + elements * static_cast<index_t>(element_size);
  }
};

// Row-major element steps of a dense region over `s` (an empty axis counts as one element).
std::array<index_t, max_rank> dense_steps(const Shape& s);

// The elements of `tile` over `sub` (a sub-shape of its allocated_shape(): ghost cells and
// padding included); Error(shape) otherwise, as Tile::select.
template <class T>
Region region_of(const Tile<T>& tile, const Shape& sub) {
  const Tile<T> g = tile.select(sub);
  Region r;
  r.data = const_cast<std::remove_const_t<T>*>(g.data());
  r.element_size = sizeof(T);
  r.shape = g.shape();
  r.steps = g.steps();
  return r;
}
// The tile with its ghost cells (what a launch of a plain tile stages).
template <class T>
Region region_of(const Tile<T>& tile) {
  return region_of(tile, tile.ghost_shape());
}

// The view of a region, element type T (the region's element size must be sizeof(T), or the
// view is of bytes: T = unsigned char counts elements, not bytes, all the same).
template <class T>
View<T> view_of(const Region& r) {
  View<T> v;
  v.data = static_cast<T*>(r.data);
  v.rank = r.rank();
  for (int k = 0; k < v.rank; ++k) {
    v.extent[k] = r.shape.extent(k);
    v.stride[k] = r.steps[static_cast<std::size_t>(k)];
    v.origin[k] = r.shape[k].begin();
    v.step[k] = r.shape[k].stride();
  }
  return v;
}

}  // namespace hit::detail
