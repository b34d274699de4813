#pragma once
// Communication derived from layouts and tiles: Comm (one reusable communication), Pattern (a
// group of them run together) and their builders.
//
// A Comm is built once from a Layout and the tile that holds this process's block, and can be run
// many times: it records which regions go to and come from which processes, as MPI derived
// datatypes over the tile's memory (no hand packing), so it follows any layout without changes to
// the algorithm. A Comm holds handles to the tiles it moves, so it stays valid when the program's
// own tile variables go out of scope.
//
// Builders take (layout, tile, required parameters..., options): the options last, one struct per
// builder (hit/comm/comm_options.hpp), with the Comm's `label`. They run on the run's Environment
// (there is exactly one, Environment::current()). Construction is collective over the run: every
// rank builds the same Comms in the same order; errors (a tile that does not match its block, a
// halo wider than the ghosts) are agreed, so every rank throws the same Error and none waits in a
// later collective. A Comm built and dropped is a bug (if another rank runs its twin, those
// messages find no peer), so Comm is [[nodiscard]].
//
// The builder templates only convert the tile to its type-free description (its element's MPI
// datatype and size, hit/comm/detail/comm_tile.hpp); the algorithms are compiled once, in
// src/comm/.
//
// Tiles: a hit::Tile<T>, or a hit::Resident<T> that lives on the process's device. For a Resident
// only what travels crosses between device and host: a halo copies the faces it sends out of the
// device and the ghost cells it receives into it, a shift the padded buffer once each way (and
// not at all when the device copy is not newer than the host's). An inactive process passes its
// null tile; its Comm does nothing.

#include <mpi.h>

#include <concepts>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "hit/comm/comm_options.hpp"
#include "hit/comm/detail/comm_tile.hpp"
#include "hit/layout.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"

namespace hit {

namespace detail {
class CommPlan;
}

enum class ReduceOp { sum, prod, min, max };
MPI_Op to_mpi(ReduceOp op);

// A reusable communication. Copies are handles to the same plan.
class [[nodiscard]] Comm {
 public:
  Comm() = default;
  explicit Comm(std::shared_ptr<detail::CommPlan> plan) : plan_(std::move(plan)) {}

  void start();  // posts the transfers and returns
  void wait();   // completes them; received data is in the tiles
  void run() {
    start();
    wait();
  }
  bool is_null() const noexcept { return !plan_; }
  // Bytes this rank sends per run (what hit-layout's dry run predicts).
  std::size_t bytes_sent() const;
  std::size_t bytes_received() const;
  // The options' label, else the builder's description.
  const std::string& name() const;

 private:
  std::shared_ptr<detail::CommPlan> plan_;
};

// A group of Comms run together: `ordered` runs them one after another (needed when one fills
// data the next sends, as halo corners do); `unordered` starts all then waits for all.
class Pattern {
 public:
  enum class Order { ordered, unordered };
  explicit Pattern(Order order = Order::unordered) : order_(order) {}
  Pattern& add(Comm comm) {
    comms_.push_back(std::move(comm));
    return *this;
  }
  void start();
  void wait();
  void run() {
    start();
    wait();
  }
  std::size_t size() const noexcept { return comms_.size(); }
  std::size_t bytes_sent() const;

 private:
  Order order_;
  std::vector<Comm> comms_;
  bool started_ = false;
};

// What a builder accepts as "the tile of this process": Tile<T> or Resident<T>.
template <class A>
struct tile_element;
template <class T>
struct tile_element<Tile<T>> {
  using type = T;
};
template <class T>
struct tile_element<Resident<T>> {
  using type = T;
};
template <class A>
concept LocalTile = requires {
  typename tile_element<std::remove_cvref_t<A>>::type;
};
template <class A>
using tile_element_t = typename tile_element<std::remove_cvref_t<A>>::type;

// What a builder accepts as "this process's part of a layout": its one tile (a LocalTile), or a
// std::vector<Tile<T>> with one tile per block of the layout, in the layout's order (a process
// with several blocks, e.g. under a block-cyclic layout).
template <class P>
struct parts_element {};
template <class T>
struct parts_element<Tile<T>> {
  using type = T;
};
template <class T>
struct parts_element<Resident<T>> {
  using type = T;
};
template <class T>
struct parts_element<std::vector<Tile<T>>> {
  using type = T;
};
template <class P>
concept LocalParts = requires {
  typename parts_element<std::remove_cvref_t<P>>::type;
};
template <class P>
using parts_element_t = typename parts_element<std::remove_cvref_t<P>>::type;

namespace detail {

// A process's part as the algorithms (src/comm/) take it: one tile per block, or `one` tile for
// the process's single block (which a process without a block passes and the plan ignores).
struct Parts {
  std::vector<CommTile> tiles;
  ElementType element;
  bool one = false;
};
template <class T>
Parts parts(std::vector<Tile<T>>& tiles) {
  return {comm_tiles(tiles), element_type<T>(), false};
}
template <LocalTile A>
Parts parts(A& tile) {
  return {{comm_tile(tile)}, element_type<tile_element_t<A>>(), true};
}

// The algorithms, compiled once (src/comm/).
Comm shift(const Layout& layout, const CommTile& tile, int axis, int offset,
           const ShiftOptions& options);
Comm halo(const Layout& layout, const CommTile& tile, const HaloOptions& options);
Comm bcast(const Layout& layout, const CommTile& tile, int axis, int root,
           const CommOptions& options);
Comm redistribute(const Layout& from, Parts from_parts, const Layout& to, Parts to_parts,
                  const CommOptions& options);
Comm fetch_regions(const Layout& layout, Parts from, const std::vector<Shape>& wanted,
                   const CommTile& into, const CommOptions& options);
Comm fetch(const Layout& layout, Parts from, const Shape& wanted, const CommTile& into,
           const CommOptions& options);
Comm root_transfer(const Layout& layout, Parts parts, int root, const CommTile& whole, bool to_root,
                   const CommOptions& options);
void reduce_tile(const TileData& tile, ElementType element, ReduceOp op, int root);
void reduce_values(void* values, std::size_t count, ElementType element, ReduceOp op);

}  // namespace detail

// ---- builders -------------------------------------------------------------------------------

// Circular shift along topology axis `axis`: the tile's content moves to the process `offset`
// positions further along that axis (among the processes that hold data there, wrapping), and
// each process receives from `offset` positions back. The whole padded buffer travels, so
// uneven blocks allocated with padding (Tile<T>::of(layout, {.padded = true})) stay aligned.
template <LocalTile A>
Comm shift(const Layout& layout, A& tile, int axis, int offset, const ShiftOptions& options = {}) {
  return detail::shift(layout, detail::comm_tile(tile), axis, offset, options);
}

// Ghost-border exchange with the neighbours along every distributed axis (no wrap-around unless
// `periodic`): each process receives into its ghost cells the neighbours' boundary cells,
// `width` deep. The tile must have ghost() >= width. With `corners`, diagonal ghost cells are
// filled too (axes are then exchanged in order).
template <LocalTile A>
Comm halo(const Layout& layout, A& tile, const HaloOptions& options = {}) {
  return detail::halo(layout, detail::comm_tile(tile), options);
}

// Broadcast along topology axis `axis` from the process at coordinate `root` on that axis to every
// process of its line (the other coordinates equal). The padded buffers must have equal sizes.
template <LocalTile A>
Comm bcast(const Layout& layout, A& tile, int axis, int root, const CommOptions& options = {}) {
  return detail::bcast(layout, detail::comm_tile(tile), axis, root, options);
}

// Moves a distributed array from one layout to another of the same global shape: every element
// travels from its owner under `from` to its owner under `to`, computed from block intersections.
// Serves multi-block layouts (parts as vectors of tiles), inactive processes and different
// process subsets.
template <LocalParts P, LocalParts Q>
requires std::same_as<parts_element_t<P>, parts_element_t<Q>> Comm
redistribute(const Layout& from, P& from_part, const Layout& to, Q& to_part,
             const CommOptions& options = {}) {
  return detail::redistribute(from, detail::parts(from_part), to, detail::parts(to_part), options);
}

// Every process receives, into `into`, the region `wanted[its rank]` of the array `layout`
// distributes (`part`: this process's block, or its blocks), from the processes that hold it;
// `wanted` lists one region per process of the run (the null Shape: nothing), the same list on
// every process. A region wanted by several processes goes to each of them from its owners
// directly (never through one rank). `into` must contain its region (array indices; a
// relabelled buffer, Tile::relabel, serves panel after panel). Messages are built once, from
// block intersections, with derived datatypes; a Resident `into` gets what arrives on its device.
template <LocalParts P, LocalTile B>
requires std::same_as<parts_element_t<P>, tile_element_t<B>> Comm
fetch_regions(const Layout& layout, P& part, const std::vector<Shape>& wanted, B& into,
              const CommOptions& options = {}) {
  return detail::fetch_regions(layout, detail::parts(part), wanted, detail::comm_tile(into),
                               options);
}

// fetch_regions in the global view: each process passes only the region *it* wants (the null
// Shape: nothing), computed from what it holds, and the builder shares the requests (one
// allgather while it builds; none when the Comm runs). SUMMA's panels: every process wants
// A[its rows of C, k0:k1] and B[k0:k1, its columns of C], and the owners of each panel send it to
// every process that asked, directly.
template <LocalParts P, LocalTile B>
requires std::same_as<parts_element_t<P>, tile_element_t<B>> Comm fetch(
    const Layout& layout, P& part, const Shape& wanted, B& into, const CommOptions& options = {}) {
  return detail::fetch(layout, detail::parts(part), wanted, detail::comm_tile(into), options);
}

// Gathers the whole array on `root` (into `whole`, whose shape is the layout's shape; ignored on
// other ranks), and scatters it back.
template <LocalParts P>
Comm gather(const Layout& layout, P& part, int root, Tile<parts_element_t<P>>& whole,
            const CommOptions& options = {}) {
  return detail::root_transfer(layout, detail::parts(part), root, detail::comm_tile(whole), true,
                               options);
}
template <LocalParts P>
Comm scatter(const Layout& layout, P& part, int root, Tile<parts_element_t<P>>& whole,
             const CommOptions& options = {}) {
  return detail::root_transfer(layout, detail::parts(part), root, detail::comm_tile(whole), false,
                               options);
}

// Element-wise reduction of equal-shaped tiles over all ranks: the result lands in every rank's
// tile (`allreduce`) or in root's (`reduce`). A null tile takes no part.
template <class T>
void allreduce(Tile<T>& tile, ReduceOp op) {
  detail::reduce_tile(detail::tile_data(tile), detail::element_type<T>(), op, -1);
}
template <class T>
void reduce(Tile<T>& tile, ReduceOp op, int root) {
  detail::reduce_tile(detail::tile_data(tile), detail::element_type<T>(), op, root);
}
// Scalar reductions over all ranks.
template <class T>
requires std::is_arithmetic_v<T>
[[nodiscard]] T allreduce(T value, ReduceOp op) {
  detail::reduce_values(&value, 1, detail::element_type<T>(), op);
  return value;
}
// Every element of `values` replaced, on every rank, by `op` of that element over the ranks.
// The ranks pass the same count.
template <class T>
requires std::is_arithmetic_v<T>
void allreduce(std::span<T> values, ReduceOp op) {
  detail::reduce_values(values.data(), values.size(), detail::element_type<T>(), op);
}

}  // namespace hit
