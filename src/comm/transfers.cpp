// The builders whose messages come from block intersections (redistribute, fetch_regions, fetch),
// those between a distributed array and one whole tile (gather, scatter), and the reductions
// (hit/comm.hpp).
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "builder_support.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/program_trace.hpp"

namespace hit::detail {

namespace {

// Messages of a redistribution-like plan: element `e` of the global array goes from the tile of
// `from` holding it to the tile of `to` holding it. Regions are ordered (from-block outer,
// to-block inner) identically on both sides of each message. Only the peers intersection_peers
// finds are visited (in ascending order, as a scan of every rank would meet them), not every rank
// of the run.
void add_intersections(Phase& phase, int tag, ElementType element,
                       const std::vector<Shape>& my_from, const std::vector<CommTile>& from_tiles,
                       const std::vector<Shape>& my_to, const std::vector<CommTile>& to_tiles,
                       const BlocksOf& from, const BlocksOf& to) {
  for (const int peer : intersection_peers(my_from, my_to, from, to)) {
    MessageBuilder send(element.mpi, element.size);
    const auto& peer_to = to(peer);
    for (std::size_t i = 0; i < my_from.size(); ++i) {
      for (const Shape& b : peer_to) {
        const Shape r = my_from[i].intersect(b);
        if (r.is_null() || r.empty()) continue;
        send.add(from_tiles[i].tile.region(r));
        stage(phase.fetch, from_tiles[i].device, r);
      }
    }
    add_message(phase.sends, peer, tag, send);
    MessageBuilder recv(element.mpi, element.size);
    for (const Shape& a : from(peer)) {
      for (std::size_t j = 0; j < my_to.size(); ++j) {
        const Shape r = a.intersect(my_to[j]);
        if (r.is_null() || r.empty()) continue;
        recv.add(to_tiles[j].tile.region(r));
        stage(phase.publish, to_tiles[j].device, r);
      }
    }
    add_message(phase.recvs, peer, tag, recv);
  }
}

// fetch_regions from this process's tiles (one per block of the layout) into `into`, once
// every process's wanted region is known.
Comm fetch_from(const Layout& layout, const CommContext& ctx, std::vector<CommTile> from_tiles,
                ElementType element, const std::vector<Shape>& wanted, const CommTile& into,
                const CommOptions& options) {
  collectively(ctx.comm, [&] {
    if (wanted.size() != static_cast<std::size_t>(ctx.size)) {
      throw Error(ErrorKind::invalid_argument,
                  "fetch_regions: " + std::to_string(wanted.size()) +
                      " wanted regions for a run of " + std::to_string(ctx.size) +
                      " processes (give one per process, the null Shape for none)");
    }
    require_tiles_match(layout, ctx.rank, from_tiles, "fetch_regions (source)");
    for (std::size_t r = 0; r < wanted.size(); ++r) {
      const Shape& w = wanted[r];
      if (w.is_null() || w.empty()) continue;
      if (w.rank() != layout.shape().rank() || !layout.shape().includes(w)) {
        throw Error(ErrorKind::shape, "fetch_regions: rank " + std::to_string(r) + " wants " +
                                          w.str() + ", outside the array " + layout.shape().str() +
                                          " of layout '" + layout.spec() + "'");
      }
    }
    const Shape& mine = wanted[static_cast<std::size_t>(ctx.rank)];
    const TileData& b = into.tile;
    if (!mine.is_null() && !mine.empty() &&
        (b.is_null() || b.shape.rank() != mine.rank() || !b.allocated_shape().includes(mine))) {
      throw Error(ErrorKind::shape, "fetch_regions: rank " + std::to_string(ctx.rank) + " wants " +
                                        mine.str() + " into a tile of shape " +
                                        (b.is_null() ? std::string("(null)") : b.shape.str()));
    }
  });
  std::vector<std::vector<Shape>> lists(static_cast<std::size_t>(ctx.size));
  for (std::size_t r = 0; r < lists.size(); ++r) {
    if (!wanted[r].is_null() && !wanted[r].empty()) lists[r].push_back(wanted[r]);
  }
  std::vector<CommTile> to_tiles;
  const std::vector<Shape>& my_to = lists[static_cast<std::size_t>(ctx.rank)];
  if (!my_to.empty()) to_tiles.push_back(into);
  auto plan = std::make_shared<CommPlan>(
      plan_name(options.label, "fetch_regions(" + layout.spec() + ")"), ctx.comm);
  keep(*plan, from_tiles);
  keep(*plan, into);
  pin(*plan, from_tiles);
  pin(*plan, into);
  const int tag = next_tag_base(ctx.env);
  Phase phase;
  add_intersections(phase, tag, element, blocks_or_none(layout, ctx.rank), from_tiles, my_to,
                    to_tiles, BlocksOf{&layout, nullptr}, BlocksOf{nullptr, &lists});
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

}  // namespace

Comm redistribute(const Layout& from, Parts from_parts, const Layout& to, Parts to_parts,
                  const CommOptions& options) {
  const ElementType element = from_parts.element;
  if (!(from.shape() == to.shape())) {
    throw Error(ErrorKind::shape, "redistribute between layouts of different global shapes: " +
                                      from.shape().str() + " and " + to.shape().str());
  }
  const auto ctx = context_for(from, "redistribute");
  (void)context_for(to, "redistribute");
  const std::vector<CommTile> from_tiles = tiles_of(from, ctx.rank, std::move(from_parts));
  const std::vector<CommTile> to_tiles = tiles_of(to, ctx.rank, std::move(to_parts));
  collectively(ctx.comm, [&] {
    require_tiles_match(from, ctx.rank, from_tiles, "redistribute (source)");
    require_tiles_match(to, ctx.rank, to_tiles, "redistribute (target)");
  });
  auto plan = std::make_shared<CommPlan>(
      plan_name(options.label, "redistribute(" + from.spec() + " -> " + to.spec() + ")"), ctx.comm);
  keep(*plan, from_tiles);
  keep(*plan, to_tiles);
  pin(*plan, from_tiles);
  pin(*plan, to_tiles);
  const int tag = next_tag_base(ctx.env);
  Phase phase;
  add_intersections(phase, tag, element, blocks_or_none(from, ctx.rank), from_tiles,
                    blocks_or_none(to, ctx.rank), to_tiles, BlocksOf{&from, nullptr},
                    BlocksOf{&to, nullptr});
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

Comm fetch_regions(const Layout& layout, Parts from, const std::vector<Shape>& wanted,
                   const CommTile& into, const CommOptions& options) {
  const auto ctx = context_for(layout, "fetch_regions");
  const ElementType element = from.element;
  return fetch_from(layout, ctx, tiles_of(layout, ctx.rank, std::move(from)), element, wanted, into,
                    options);
}

Comm fetch(const Layout& layout, Parts from, const Shape& wanted, const CommTile& into,
           const CommOptions& options) {
  const auto ctx = context_for(layout, "fetch");
  const ElementType element = from.element;
  // Only whether a process wants nothing is normalised: a null and an empty region both are.
  const Shape mine = wanted.is_null() || wanted.empty() ? Shape() : wanted;
  static_assert(std::is_trivially_copyable_v<Shape>, "regions travel as bytes");
  const std::vector<Shape> all = allgather(mine, ctx.comm);
  return fetch_from(layout, ctx, tiles_of(layout, ctx.rank, std::move(from)), element, all, into,
                    options);
}

namespace {

// The messages of a gather (to_root) or scatter on this process: on root, one per peer over the
// views of `whole` its blocks cover; elsewhere one to or from root over its own tiles.
Phase root_phase(const Layout& layout, const CommContext& ctx, int tag, ElementType element,
                 const std::vector<CommTile>& parts, int root, const TileData& whole,
                 bool to_root) {
  Phase phase;
  const std::vector<Shape>& mine = blocks_or_none(layout, ctx.rank);
  for (int peer = 0; peer < ctx.size; ++peer) {
    if (ctx.rank == root) {
      MessageBuilder b(element.mpi, element.size);
      for (const Shape& blk : blocks_or_none(layout, peer)) {
        if (!blk.empty()) b.add(whole.region(blk));
      }
      add_message(to_root ? phase.recvs : phase.sends, peer, tag, b);
    }
    if (peer == root) {
      MessageBuilder b(element.mpi, element.size);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (mine[i].empty()) continue;
        b.add(parts[i].tile.whole());
        stage(to_root ? phase.fetch : phase.publish, parts[i].device, mine[i]);
      }
      add_message(to_root ? phase.sends : phase.recvs, root, tag, b);
    }
  }
  return phase;
}

}  // namespace

Comm root_transfer(const Layout& layout, Parts parts, int root, const CommTile& whole, bool to_root,
                   const CommOptions& options) {
  const char* what = to_root ? "gather" : "scatter";
  const auto ctx = context_for(layout, what);
  const ElementType element = parts.element;
  const std::vector<CommTile> tiles = tiles_of(layout, ctx.rank, std::move(parts));
  if (root < 0 || root >= ctx.size) {
    throw Error(ErrorKind::invalid_argument, "root rank " + std::to_string(root) +
                                                 " is outside 0.." + std::to_string(ctx.size - 1));
  }
  collectively(ctx.comm, [&] {
    require_tiles_match(layout, ctx.rank, tiles, what);
    if (ctx.rank == root && (whole.tile.is_null() || !(whole.tile.shape == layout.shape()))) {
      throw Error(ErrorKind::shape, std::string(what) +
                                        ": the root's whole tile must have the layout's shape " +
                                        layout.shape().str());
    }
  });
  auto plan = std::make_shared<CommPlan>(plan_name(options.label, what), ctx.comm);
  keep(*plan, tiles);
  keep(*plan, whole);
  pin(*plan, tiles);
  const int tag = next_tag_base(ctx.env);
  plan->phases().push_back(root_phase(layout, ctx, tag, element, tiles, root, whole.tile, to_root));
  return Comm(plan);
}

namespace {

// Calls fn(element address) for every element of `tile`'s shape, row-major.
template <class F>
void for_each_element(const TileData& tile, F&& fn) {
  const Region r = tile.whole();
  if (r.data == nullptr) return;
  std::array<index_t, max_rank> pos{};
  const int last = r.rank() - 1;
  const auto l = static_cast<std::size_t>(last);
  for (;;) {
    index_t offset = 0;
    for (std::size_t k = 0; k < l; ++k) offset += pos[k] * r.steps[k];
    for (index_t j = 0; j < r.shape.extent(last); ++j) fn(r.byte_at(offset + j * r.steps[l]));
    int k = last - 1;
    for (; k >= 0; --k) {
      const auto u = static_cast<std::size_t>(k);
      if (++pos[u] < r.shape.extent(k)) break;
      pos[u] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace

namespace {

// A dry run (--hit-advise) records the program's reductions; they still run.
void trace_reduction(const Environment& env, std::size_t count, std::size_t element_size) {
  if (ProgramTrace* trace = env.trace()) {
    trace->reduction(double(count) * double(element_size), env.rank(), env.size());
  }
}

}  // namespace

void reduce_tile(const TileData& tile, ElementType element, ReduceOp op, int root) {
  if (tile.is_null() || tile.shape.empty()) return;
  const Environment& env = Environment::current();
  const MPI_Comm comm = env.comm();
  const auto count = static_cast<int>(tile.shape.size());
  trace_reduction(env, static_cast<std::size_t>(tile.shape.size()), element.size);
  if (tile.contiguous()) {
    reduce_in_place(tile.data, count, element.mpi, to_mpi(op), root, comm);
    return;
  }
  std::vector<char> packed(static_cast<std::size_t>(tile.shape.size()) * element.size);
  char* next = packed.data();
  for_each_element(tile, [&](void* e) {
    std::memcpy(next, e, element.size);
    next += element.size;
  });
  reduce_in_place(packed.data(), count, element.mpi, to_mpi(op), root, comm);
  next = packed.data();
  for_each_element(tile, [&](void* e) {
    std::memcpy(e, next, element.size);
    next += element.size;
  });
}

void reduce_values(void* values, std::size_t count, ElementType element, ReduceOp op) {
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(ErrorKind::invalid_argument, "allreduce: more than 2^31-1 values");
  }
  const Environment& env = Environment::current();
  trace_reduction(env, count, element.size);
  reduce_in_place(values, static_cast<int>(count), element.mpi, to_mpi(op), -1, env.comm());
}

}  // namespace hit::detail
