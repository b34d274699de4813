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
// Builders take (layout, tile, parameters...), optionally preceded by the Environment (else
// Environment::current()). Construction is collective over the run: every rank builds the same
// Comms in the same order; errors (a tile that does not match its block, a halo wider than the
// ghosts) are agreed, so every rank throws the same Error and none waits in a later collective.
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
#include <string>
#include <type_traits>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/detail/comm_plan.hpp"
#include "hit/layout.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"

namespace hit {

enum class ReduceOp { sum, prod, min, max };
MPI_Op to_mpi(ReduceOp op);

// A reusable communication. Copies are handles to the same plan.
class Comm {
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

struct ShiftOptions {
  // Receive into a second buffer and swap it with the first when the shift completes: no copy of
  // the whole block before the sends. Needs a Resident tile (whose host() is then the other
  // buffer after every run).
  bool double_buffered = false;
};

// ---- builders -------------------------------------------------------------------------------

// Circular shift along topology axis `axis`: the tile's content moves to the process `offset`
// positions further along that axis (among the processes that hold data there, wrapping), and
// each process receives from `offset` positions back. The whole padded buffer travels, so
// uneven blocks allocated with padding (Tile<T>::of(layout, {.padded = true})) stay aligned.
template <LocalTile A>
Comm shift(Environment& env, const Layout& layout, A& tile, int axis, int offset,
           ShiftOptions options = {});
template <LocalTile A>
Comm shift(const Layout& layout, A& tile, int axis, int offset, ShiftOptions options = {}) {
  return shift(Environment::current(), layout, tile, axis, offset, options);
}

// Ghost-border exchange with the neighbours along every distributed axis (no wrap-around unless
// `periodic`): each process receives into its ghost cells the neighbours' boundary cells, `width`
// deep. The tile must have ghost() >= width. With `corners`, diagonal ghost cells are filled too
// (axes are then exchanged in order).
template <LocalTile A>
Comm halo(Environment& env, const Layout& layout, A& tile, index_t width = 1, bool corners = false,
          bool periodic = false);
template <LocalTile A>
Comm halo(const Layout& layout, A& tile, index_t width = 1, bool corners = false,
          bool periodic = false) {
  return halo(Environment::current(), layout, tile, width, corners, periodic);
}

// Broadcast along topology axis `axis` from the process at coordinate `root` on that axis to every
// process of its line (the other coordinates equal). The padded buffers must have equal sizes.
template <LocalTile A>
Comm bcast(Environment& env, const Layout& layout, A& tile, int axis, int root);
template <LocalTile A>
Comm bcast(const Layout& layout, A& tile, int axis, int root) {
  return bcast(Environment::current(), layout, tile, axis, root);
}

// Moves a distributed array from one layout to another of the same global shape: every element
// travels from its owner under `from` to its owner under `to`, computed from block intersections.
// Serves multi-block layouts (one tile per block, in the layout's order), inactive processes and
// different process subsets.
template <class T>
Comm redistribute(Environment& env, const Layout& from, std::vector<Tile<T>>& from_tiles,
                  const Layout& to, std::vector<Tile<T>>& to_tiles);
template <class T>
Comm redistribute(const Layout& from, std::vector<Tile<T>>& from_tiles, const Layout& to,
                  std::vector<Tile<T>>& to_tiles) {
  return redistribute(Environment::current(), from, from_tiles, to, to_tiles);
}
template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm
redistribute(Environment& env, const Layout& from, A& from_tile, const Layout& to, B& to_tile);
template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm redistribute(const Layout& from,
                                                                              A& from_tile,
                                                                              const Layout& to,
                                                                              B& to_tile) {
  return redistribute(Environment::current(), from, from_tile, to, to_tile);
}

// Every process receives, into `into`, the region `wanted[its rank]` of the array `layout`
// distributes (`tile`: this process's block), from the processes that hold it; `wanted` lists one
// region per process of the run (the null Shape: nothing), the same list on every process. A
// region wanted by several processes goes to each of them from its owners directly (never
// through one rank): SUMMA's panel broadcasts, where the owners of A[:, k0:k1] send to every
// process whose block of C meets those rows. `into` must contain its region (array indices; a
// relabelled buffer, Tile::relabel, serves panel after panel). Messages are built once, from
// block intersections, with derived datatypes; a Resident `into` gets what arrives on its device.
template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm fetch_regions(
    Environment& env, const Layout& layout, A& tile, const std::vector<Shape>& wanted, B& into);
template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm
fetch_regions(const Layout& layout, A& tile, const std::vector<Shape>& wanted, B& into) {
  return fetch_regions(Environment::current(), layout, tile, wanted, into);
}
// The same from a process with several blocks (a block-cyclic layout): `tiles` holds one tile per
// block of the layout, in the layout's order (as redistribute and gather take them).
template <class T, LocalTile B>
requires std::same_as<T, tile_element_t<B>> Comm fetch_regions(Environment& env,
                                                               const Layout& layout,
                                                               std::vector<Tile<T>>& tiles,
                                                               const std::vector<Shape>& wanted,
                                                               B& into);

// Gathers the whole array on `root` (into `whole`, whose shape is the layout's shape; ignored on
// other ranks), and scatters it back.
template <class T>
Comm gather(Environment& env, const Layout& layout, std::vector<Tile<T>>& parts, int root,
            Tile<T>& whole);
template <LocalTile A>
Comm gather(Environment& env, const Layout& layout, A& part, int root,
            Tile<tile_element_t<A>>& whole);
template <class T>
Comm scatter(Environment& env, const Layout& layout, std::vector<Tile<T>>& parts, int root,
             Tile<T>& whole);
template <LocalTile A>
Comm scatter(Environment& env, const Layout& layout, A& part, int root,
             Tile<tile_element_t<A>>& whole);
template <class P, class T>
Comm gather(const Layout& layout, P& parts, int root, Tile<T>& whole) {
  return gather(Environment::current(), layout, parts, root, whole);
}
template <class P, class T>
Comm scatter(const Layout& layout, P& parts, int root, Tile<T>& whole) {
  return scatter(Environment::current(), layout, parts, root, whole);
}

// Element-wise reduction of equal-shaped tiles over all ranks: the result lands in every rank's
// tile (`allreduce`) or in root's (`reduce`). A null tile takes no part.
template <class T>
void allreduce(Environment& env, Tile<T>& tile, ReduceOp op);
template <class T>
void reduce(Environment& env, Tile<T>& tile, ReduceOp op, int root);
template <class T>
void allreduce(Tile<T>& tile, ReduceOp op) {
  allreduce(Environment::current(), tile, op);
}
template <class T>
void reduce(Tile<T>& tile, ReduceOp op, int root) {
  reduce(Environment::current(), tile, op, root);
}
// Scalar reductions over all ranks.
template <class T>
requires std::is_arithmetic_v<T> T allreduce(Environment& env, T value, ReduceOp op);
template <class T>
requires std::is_arithmetic_v<T> T allreduce(T value, ReduceOp op) {
  return allreduce(Environment::current(), value, op);
}

}  // namespace hit

#include "hit/detail/comm_builders.hpp"
