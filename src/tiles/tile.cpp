// The non-template parts of hit::Tile: shape checks, allocation, error messages.
#include "hit/tile.hpp"

#include "core/host_memory.hpp"
#include "hit/core/units.hpp"

#include <cstdlib>
#include <limits>
#include <new>
#include <string>

namespace hit::detail {

Shape padded_shape(const Shape& shape, const Shape& max_shape) {
  if (max_shape.is_null()) return shape;
  if (max_shape.rank() != shape.rank()) {
    throw Error(ErrorKind::shape, "tile max_shape " + max_shape.str() + " has rank " +
                                      std::to_string(max_shape.rank()) + ", the tile shape " +
                                      shape.str() + " has rank " + std::to_string(shape.rank()));
  }
  Shape out = shape;
  for (int k = 0; k < shape.rank(); ++k) {
    const Sig& s = shape[k];
    const index_t n = std::max(s.size(), max_shape.extent(k));
    if (n == s.size()) continue;
    out = out.with_sig(k, Sig(s.begin(), s.begin() + (n - 1) * s.stride() + 1, s.stride()));
  }
  return out;
}

void check_ghost_width(index_t ghost) {
  if (ghost < 0) {
    throw Error(ErrorKind::invalid_argument,
                "tile ghost width must be 0 or more, got " + std::to_string(ghost));
  }
}

index_t allocation_elements(const Shape& padded, index_t ghost, std::size_t element_size) {
  // Computed wide so that absurd shapes give a clear error rather than a wrapped size.
  detail::int128 n = 1;
  const detail::int128 limit = std::numeric_limits<index_t>::max();
  for (int k = 0; k < padded.rank(); ++k) {
    n *= static_cast<detail::int128>(padded.extent(k)) + 2 * static_cast<detail::int128>(ghost);
    if (n * static_cast<detail::int128>(element_size) > limit) {
      throw Error(ErrorKind::out_of_memory, "a tile of shape " + padded.str() + " with ghost " +
                                                std::to_string(ghost) + " and " +
                                                std::to_string(element_size) +
                                                "-byte elements is too large to allocate");
    }
  }
  return static_cast<index_t>(n);
}

void* allocate_aligned(std::size_t bytes) {
  void* p = allocate_host(bytes, tile_alignment);
  if (p == nullptr) {
    throw Error(ErrorKind::out_of_memory,
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory for a tile (" +
                    human_bytes(static_cast<double>(bytes)) +
                    "): the problem is too large for this process's host memory; run a smaller "
                    "one, or more processes on more nodes");
  }
  return p;
}

void free_aligned(void* p) noexcept {
  std::free(p);
}

void throw_not_addressable(const Index& index, const Shape& shape, const Shape& allocated,
                           const char* coordinates) {
  throw Error(ErrorKind::shape, std::string("tile ") + coordinates + " " + index.str() +
                                    " is outside tile " + shape.str() +
                                    " (addressable indices: " + allocated.str() + ")");
}

void throw_bad_selection(const Shape& sub, const Shape& shape, const Shape& allocated) {
  throw Error(ErrorKind::shape, "cannot select " + sub.str() + " from tile " + shape.str() +
                                    ": it must lie inside the addressable indices " +
                                    allocated.str() + " (the ghost or padded shape)");
}

void throw_bad_relabel(const Shape& to, const Shape& shape) {
  throw Error(ErrorKind::shape, "cannot relabel tile " + shape.str() + " as " + to.str() +
                                    ": a relabelled tile keeps the extents of every axis");
}

void throw_extent_mismatch(const Shape& to, const Shape& from) {
  std::string ext_to, ext_from;
  for (int k = 0; k < to.rank(); ++k) ext_to += (k ? "x" : "") + std::to_string(to.extent(k));
  for (int k = 0; k < from.rank(); ++k) {
    ext_from += (k ? "x" : "") + std::to_string(from.extent(k));
  }
  throw Error(ErrorKind::shape, "cannot copy tile " + from.str() + " (extents " + ext_from +
                                    ") into tile " + to.str() + " (extents " + ext_to +
                                    "): the extents must be equal on every axis");
}

void throw_bad_axis(int axis, int rank) {
  throw Error(
      ErrorKind::invalid_argument,
      "axis " + std::to_string(axis) + " is outside a tile of rank " + std::to_string(rank));
}

}  // namespace hit::detail
