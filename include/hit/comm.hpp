#pragma once
// Communication derived from layouts and tiles (DESIGN §3 "Comm and Pattern").
//
// A Comm is built once from a Layout and the tiles that hold its blocks, and can be run many times:
// it records which regions go to and come from which processes, as MPI derived datatypes over the
// tiles' memory (no hand packing), so it follows any layout without changes to the algorithm.
// Tiles must outlive the Comms built over them. Construction is collective over the layout's
// processes (every rank builds the same Comms in the same order).

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/mpi_type.hpp"
#include "hit/layout.hpp"
#include "hit/pattern.hpp"
#include "hit/tile.hpp"

namespace hit {

// ---- builders -------------------------------------------------------------------------------

// Circular shift along topology axis `axis`: the tile's content moves to the process `offset`
// positions further along that axis (among the processes that hold data there, wrapping), and
// each process receives from `offset` positions back. The whole padded buffer travels, so
// uneven blocks allocated with the layout's max_extents() stay aligned (Hitmap's maxShape).
template <class T>
Comm shift(const Layout& layout, int axis, int offset, Tile<T>& tile);

// Ghost-border exchange with the neighbours along every distributed axis (no wrap-around unless
// `periodic`): each process receives into its ghost cells the neighbours' boundary cells, `width`
// deep. The tile must have ghost() >= width. With `corners`, diagonal ghost cells are filled too
// (axes are then exchanged in order).
template <class T>
Comm halo(const Layout& layout, Tile<T>& tile, index_t width = 1, bool corners = false,
          bool periodic = false);

// Broadcast along topology axis `axis` from the process at coordinate `root` on that axis to every
// process of its line (the other coordinates equal). The padded buffers must have equal sizes.
template <class T>
Comm bcast(const Layout& layout, int axis, int root, Tile<T>& tile);

// Moves a distributed array from one layout to another of the same global shape: every element
// travels from its owner under `from` to its owner under `to`, computed from block intersections.
// Serves multi-block layouts, inactive processes and different process subsets.
template <class T>
Comm redistribute(const Layout& from, std::vector<Tile<T>>& from_tiles, const Layout& to,
                  std::vector<Tile<T>>& to_tiles);
template <class T>
Comm redistribute(const Layout& from, Tile<T>& from_tile, const Layout& to, Tile<T>& to_tile);

// Gathers the whole array on `root` (into `whole`, whose shape is the layout's shape; ignored on
// other ranks), and the reverse.
template <class T>
Comm gather(const Layout& layout, std::vector<Tile<T>>& parts, int root, Tile<T>& whole);
template <class T>
Comm gather(const Layout& layout, Tile<T>& part, int root, Tile<T>& whole);
template <class T>
Comm scatter(const Layout& layout, Tile<T>& whole, int root, std::vector<Tile<T>>& parts);
template <class T>
Comm scatter(const Layout& layout, Tile<T>& whole, int root, Tile<T>& part);

// Element-wise reduction of equal-shaped tiles over all ranks: the result lands in every rank's
// tile (`allreduce`) or in root's (`reduce`).
template <class T>
void allreduce(Tile<T>& tile, ReduceOp op, MPI_Comm comm = Environment::current().comm());
template <class T>
void reduce(Tile<T>& tile, ReduceOp op, int root, MPI_Comm comm = Environment::current().comm());
// Scalar reductions.
template <class T>
T allreduce(T value, ReduceOp op, MPI_Comm comm = Environment::current().comm());

}  // namespace hit

#include "hit/comm_impl.hpp"
