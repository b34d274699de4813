#pragma once
// Internal: a tile of any element type as the comm layer's algorithms (src/comm/) see it, and the
// thin typed conversions hit/comm.hpp's builder templates make. Only the element's MPI datatype
// and size depend on the element type, so the algorithms are compiled once, in the library, and
// a program's translation units see only these conversions. Not part of the API.

#include <mpi.h>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "hit/core/mpi_type.hpp"
#include "hit/detail/region.hpp"
#include "hit/resident.hpp"
#include "hit/shape.hpp"
#include "hit/tile.hpp"

namespace hit::detail {

// The element type of a tile, as MPI and memory copies need it.
struct ElementType {
  MPI_Datatype mpi = MPI_DATATYPE_NULL;
  std::size_t size = 0;
};
template <class T>
ElementType element_type() {
  return {mpi_type<T>(), sizeof(T)};
}

// A Tile<T> handle without its element type: its memory over shape() (the Region), the padding
// and the ghost width (see hit/tile.hpp). The null tile has a null shape.
struct TileData : Region {
  Shape padded;
  index_t ghost = 0;

  bool is_null() const noexcept { return shape.is_null(); }
  Shape allocated_shape() const { return padded.expand(ghost); }
  // The memory of `sub` (array indices inside allocated_shape(), else Error(shape) as
  // Tile::select); the null region for an empty `sub`.
  Region region(const Shape& sub) const;
  // The memory of shape() and of the padded shape (the null region when empty).
  Region whole() const;
  Region padded_region() const;
};

template <class T>
TileData tile_data(const Tile<T>& t) {
  TileData d;
  if (t.is_null()) return d;
  d.data = const_cast<void*>(static_cast<const void*>(t.data()));
  d.element_size = sizeof(T);
  d.shape = t.shape();
  d.padded = t.padded_shape();
  d.ghost = t.ghost();
  d.steps = t.steps();
  return d;
}

// The two host buffers of a Resident whose shift is double-buffered: where the padded buffer of
// the host side and of the spare side start now, and the swap that makes the spare the host.
struct HostBuffers {
  std::function<const void*()> host;
  std::function<const void*()> spare;
  std::function<void()> swap;
};

// The tile a builder got: its geometry, the element type, an owner handle the plan keeps alive,
// and for a Resident its device copy (null for a host tile) and host buffers.
struct CommTile {
  TileData tile;
  ElementType element;
  std::shared_ptr<const void> owner;
  std::shared_ptr<ResidentState> device;
  bool resident = false;
  HostBuffers buffers;  // set for a Resident only
};

template <class T>
CommTile comm_tile(Tile<T>& t) {
  return {tile_data(t), element_type<T>(), std::make_shared<Tile<T>>(t), nullptr, false, {}};
}

template <class T>
CommTile comm_tile(Resident<T>& r) {
  CommTile c{tile_data(r.host()),
             element_type<T>(),
             std::make_shared<Resident<T>>(r),
             resident_state(r),
             true,
             {}};
  c.buffers.host = [r]() mutable { return tile_data(r.host()).padded_region().data; };
  c.buffers.spare = [r]() mutable { return tile_data(r.spare()).padded_region().data; };
  c.buffers.swap = [r]() mutable { r.swap_host_buffers(); };
  return c;
}

// One CommTile per tile of a process with several blocks (host tiles).
template <class T>
std::vector<CommTile> comm_tiles(std::vector<Tile<T>>& tiles) {
  std::vector<CommTile> out;
  out.reserve(tiles.size());
  for (Tile<T>& t : tiles) out.push_back(comm_tile(t));
  return out;
}

}  // namespace hit::detail
