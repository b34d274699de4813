#pragma once
// hit-layout's dry-run figures: the memory each rank allocates for its blocks and the bytes it
// sends in a named communication, and their table and JSON forms; for a sparse layout, each
// rank's rows, nonzeros, ghosts and halo volume, the edge cut and the imbalance.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hit/core/spec.hpp"
#include "hit/layout.hpp"
#include "hit/sparse/sparse_layout.hpp"

namespace hit::tools {

// How a rank's tile is allocated.
struct Allocation {
  index_t element_bytes = 8;  // sizeof the element type
  index_t ghost = 0;          // ghost border width, on both sides of every axis
  bool pad = false;           // every block padded to the layout's max_extents()
};

// The element size of a --type name (double, float, int32, int64); Error(invalid_argument) else.
index_t element_bytes(const std::string& type);

// Bytes `proc` allocates: for each of its blocks, its extents (or the layout's max extents with
// pad) plus 2*ghost per axis, times the element size. 0 for an inactive proc.
index_t allocated_bytes(const Layout& layout, int proc, const Allocation& alloc);

// The communications hit-layout can estimate, as spec strings:
//   shift:axis=A[,offset=O][,wrap=true|false]   each rank's data to its neighbour along topology
//                                                axis A (Cannon's shifts; default offset 1, wrap)
//   halo[:width=W]                               face exchange of W (default 1) positions along
//                                                every split shape axis, no corners, no wrap
//                                                (hit::face_traffic, hit/comm/comm_traffic.hpp)
//   bcast:axis=A[,root=R]                        in each line along topology axis A, the R-th
//                                                (default 0) rank holding data sends its data to
//                                                the other active ranks of the line
// "Data" is the rank's blocks, padded when alloc.pad (the tile is sent whole), without ghosts.
// Returns the bytes each rank sends (the logical volume, one entry per process), each rank's from
// its own neighbours: O(P · log P) for grid layouts.
std::vector<index_t> send_bytes(const Layout& layout, const Spec& comm, const Allocation& alloc);

// The parameters of each communication, for --help and errors.
std::string comm_grammar();

// The --json document of docs/layouts.md (with "send_bytes" per rank when `sends` is given).
nlohmann::ordered_json layout_json(const Layout& layout, const Allocation& alloc,
                                   const std::optional<std::vector<index_t>>& sends);

// The communication volume of an outer-product matrix product over a 2-D layout that gives every
// active process one block: the sum of the blocks' half-perimeters (rows + columns), beside the
// best r×c grid of as many processes (c·n + r·m for an n×m shape). nullopt for other layouts.
struct HalfPerimeters {
  index_t total = 0;
  index_t best_grid = 0;
  int grid_rows = 0;
  int grid_cols = 0;
};
std::optional<HalfPerimeters> half_perimeters(const Layout& layout);

// A human-readable table of the same figures, with a summary line.
std::string layout_table(const Layout& layout, const Allocation& alloc, const std::string& type,
                         const std::optional<std::vector<index_t>>& sends);

// A sparse layout as hit-layout reports it: measured (stats() filled), of the matrix named
// `matrix` (a file path or a generator spec), whose values are `element_bytes` each.
struct SparseReport {
  const SparseLayout& layout;
  std::string matrix;
  index_t nonzeros = 0;  // of the whole matrix
  index_t element_bytes = 8;
};

// The --json document of a sparse layout: "matrix", "rows", "nonzeros", "procs", "topology",
// "layout", "edge_cut", "imbalance" and "ranks", one object per rank with "rank", "active",
// "rows", "nonzeros", "ghosts", "send_values" and "send_bytes" (send_values x element_bytes),
// plus "predicted_time" when the layout has one.
nlohmann::ordered_json sparse_layout_json(const SparseReport& report);

// The table of the same figures, with a summary line.
std::string sparse_layout_table(const SparseReport& report, const std::string& type);

}  // namespace hit::tools
