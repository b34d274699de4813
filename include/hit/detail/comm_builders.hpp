#pragma once
// Internal: the template definitions of the builders declared in hit/comm.hpp, which includes
// this file at its end. Not part of the API.

#include <string>
#include <utility>
#include <vector>

#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/mpi_type.hpp"
#include "hit/detail/comm_peers.hpp"

namespace hit::detail {

// The tile a builder got, as the plan sees it: the host tile its messages point into, the device
// copy to stage through (null for a host tile), and an owner handle the plan keeps alive.
template <class T>
struct CommTile {
  Tile<T> tile;
  std::shared_ptr<const void> owner;
  Resident<T> resident;  // the null Resident for a host tile
  const std::shared_ptr<ResidentState>& device() const noexcept { return resident_state(resident); }
};
template <class T>
CommTile<T> comm_tile(Tile<T>& t) {
  return {t, std::make_shared<Tile<T>>(t), Resident<T>()};
}
template <class T>
CommTile<T> comm_tile(Resident<T>& r) {
  return {r.host(), std::make_shared<Resident<T>>(r), r};
}

template <class T>
void pin(CommPlan& plan, const CommTile<T>& t) {
  if (t.device()) plan.pin_buffer(t.device(), t.device()->host.data);
}

// Regions of a tile that a phase sends or receives, staged through its device copy if it has one.
inline void stage(std::vector<Staging>& list, const std::shared_ptr<ResidentState>& device,
                  const Shape& region) {
  if (device && !region.is_null() && !region.empty()) list.push_back({device, region});
}

template <class T>
Region region_of(const Tile<T>& tile) {
  Region r;
  if (tile.is_null() || tile.empty()) return r;
  r.data = tile.data();
  r.rank = tile.shape().rank();
  for (int k = 0; k < r.rank; ++k) {
    r.extents[static_cast<std::size_t>(k)] = tile.shape().extent(k);
    r.steps[static_cast<std::size_t>(k)] = tile.step(k);
  }
  return r;
}

struct CommContext {
  MPI_Comm comm;
  int rank;
  int size;
};

inline CommContext context_for(Environment& env, const Layout& layout, const char* what) {
  if (layout.procs() > env.size()) {
    throw Error(ErrorKind::topology,
                std::string(what) + ": the layout has " + std::to_string(layout.procs()) +
                    " processes but the run has only " + std::to_string(env.size()));
  }
  return {env.comm(), env.rank(), env.size()};
}

// The tile a rank passes must hold exactly its block of the layout.
template <class T>
void require_tile_matches(const Layout& layout, int rank, const Tile<T>& tile, const char* what) {
  const Shape block = rank < layout.procs() ? layout.block(rank) : Shape();
  if (block.is_null() || block.empty()) return;
  if (tile.is_null() || !(tile.shape() == block)) {
    throw Error(ErrorKind::shape,
                std::string(what) + ": rank " + std::to_string(rank) + " passes a tile of shape " +
                    (tile.is_null() ? std::string("(null)") : tile.shape().str()) +
                    " but its block of the layout is " + block.str());
  }
}

template <class T>
void require_tiles_match(const Layout& layout, int rank, const std::vector<Tile<T>>& tiles,
                         const char* what) {
  static const std::vector<Shape> none;
  const std::vector<Shape>& blocks = rank < layout.procs() ? layout.blocks(rank) : none;
  bool ok = blocks.size() == tiles.size();
  for (std::size_t i = 0; ok && i < blocks.size(); ++i) ok = tiles[i].shape() == blocks[i];
  if (!ok) {
    std::string got;
    for (const auto& t : tiles) got += t.is_null() ? "(null)" : t.shape().str();
    std::string want;
    for (const auto& b : blocks) want += b.str();
    throw Error(ErrorKind::shape, std::string(what) + ": rank " + std::to_string(rank) +
                                      " passes tiles " + (got.empty() ? "(none)" : got) +
                                      " but its blocks of the layout are " +
                                      (want.empty() ? "(none)" : want));
  }
}

// Messages of a redistribution-like plan: element `e` of the global array goes from the tile of
// `from` holding it to the tile of `to` holding it. Regions are ordered (from-block outer,
// to-block inner) identically on both sides of each message. `from_dev`/`to_dev`: the device copy
// of each tile (empty: host tiles). Only the peers intersection_peers finds are visited (in
// ascending order, as a scan of every rank would meet them), not every rank of the run.
template <class T>
void add_intersections(Phase& phase, int tag, const std::vector<Shape>& my_from,
                       std::vector<Tile<T>>& from_tiles, const std::vector<Shape>& my_to,
                       std::vector<Tile<T>>& to_tiles, const BlocksOf& from, const BlocksOf& to,
                       const std::vector<std::shared_ptr<ResidentState>>& from_dev = {},
                       const std::vector<std::shared_ptr<ResidentState>>& to_dev = {}) {
  for (const int peer : intersection_peers(my_from, my_to, from, to)) {
    MessageBuilder send(mpi_type<T>(), sizeof(T));
    const auto& peer_to = to(peer);
    for (std::size_t i = 0; i < my_from.size(); ++i) {
      for (const Shape& b : peer_to) {
        const Shape r = my_from[i].intersect(b);
        if (r.is_null() || r.empty()) continue;
        send.add(region_of(from_tiles[i].select(r)));
        if (i < from_dev.size()) stage(phase.fetch, from_dev[i], r);
      }
    }
    if (!send.empty()) {
      phase.sends.push_back(
          {peer, tag, std::make_shared<Datatype>(send.build()), send.bytes(), send.base()});
    }
    MessageBuilder recv(mpi_type<T>(), sizeof(T));
    for (const Shape& a : from(peer)) {
      for (std::size_t j = 0; j < my_to.size(); ++j) {
        const Shape r = a.intersect(my_to[j]);
        if (r.is_null() || r.empty()) continue;
        recv.add(region_of(to_tiles[j].select(r)));
        if (j < to_dev.size()) stage(phase.publish, to_dev[j], r);
      }
    }
    if (!recv.empty()) {
      phase.recvs.push_back(
          {peer, tag, std::make_shared<Datatype>(recv.build()), recv.bytes(), recv.base()});
    }
  }
}

template <class T>
Comm redistribute_tiles(Environment& env, const Layout& from, std::vector<Tile<T>>& from_tiles,
                        const Layout& to, std::vector<Tile<T>>& to_tiles,
                        const std::vector<std::shared_ptr<ResidentState>>& from_dev,
                        const std::vector<std::shared_ptr<ResidentState>>& to_dev);

inline void pin_all(CommPlan& plan, const std::vector<std::shared_ptr<ResidentState>>& devices) {
  for (const auto& d : devices) {
    if (d) plan.pin_buffer(d, d->host.data);
  }
}

template <class T>
void keep_tiles(CommPlan& plan, const std::vector<Tile<T>>& tiles) {
  plan.keep(std::make_shared<std::vector<Tile<T>>>(tiles));
}

// Gather (to_root) or scatter between the layout's tiles and one whole tile on root.
template <class T>
Comm root_transfer(Environment& env, const Layout& layout, std::vector<Tile<T>>& parts, int root,
                   Tile<T>& whole, bool to_root,
                   const std::vector<std::shared_ptr<ResidentState>>& part_dev = {}) {
  const auto ctx = context_for(env, layout, to_root ? "gather" : "scatter");
  if (root < 0 || root >= ctx.size) {
    throw Error(ErrorKind::invalid_argument, "root rank " + std::to_string(root) +
                                                 " is outside 0.." + std::to_string(ctx.size - 1));
  }
  collectively(ctx.comm, [&] {
    require_tiles_match(layout, ctx.rank, parts, to_root ? "gather" : "scatter");
    if (ctx.rank == root && (whole.is_null() || !(whole.shape() == layout.shape()))) {
      throw Error(ErrorKind::shape, std::string(to_root ? "gather" : "scatter") +
                                        ": the root's whole tile must have the layout's shape " +
                                        layout.shape().str());
    }
  });
  auto plan = std::make_shared<CommPlan>(to_root ? "gather" : "scatter", ctx.comm);
  keep_tiles(*plan, parts);
  keep_tiles(*plan, std::vector<Tile<T>>{whole});
  pin_all(*plan, part_dev);
  const int tag = next_tag_base(env);
  Phase phase;
  const std::vector<Shape>& mine = blocks_or_none(layout, ctx.rank);
  // Tiles on the side of the whole array: on root, one view per block of each peer.
  for (int peer = 0; peer < ctx.size; ++peer) {
    if (ctx.rank == root) {
      MessageBuilder b(mpi_type<T>(), sizeof(T));
      for (const Shape& blk : blocks_or_none(layout, peer)) {
        if (!blk.empty()) b.add(region_of(whole.select(blk)));
      }
      if (!b.empty()) {
        auto& list = to_root ? phase.recvs : phase.sends;
        list.push_back({peer, tag, std::make_shared<Datatype>(b.build()), b.bytes(), b.base()});
      }
    }
    if (peer == root) {
      MessageBuilder b(mpi_type<T>(), sizeof(T));
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (mine[i].empty()) continue;
        b.add(region_of(parts[i]));
        if (i < part_dev.size()) stage(to_root ? phase.fetch : phase.publish, part_dev[i], mine[i]);
      }
      if (!b.empty()) {
        auto& list = to_root ? phase.sends : phase.recvs;
        list.push_back({root, tag, std::make_shared<Datatype>(b.build()), b.bytes(), b.base()});
      }
    }
  }
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

// One tile as the list of a process's tiles (empty on a process without a block).
template <class T>
void single_part(const Layout& layout, int rank, CommTile<T>& part, std::vector<Tile<T>>& tiles,
                 std::vector<std::shared_ptr<ResidentState>>& devices) {
  if (blocks_or_none(layout, rank).empty()) return;
  tiles.push_back(part.tile);
  devices.push_back(part.device());
}

template <class T>
Comm redistribute_tiles(Environment& env, const Layout& from, std::vector<Tile<T>>& from_tiles,
                        const Layout& to, std::vector<Tile<T>>& to_tiles,
                        const std::vector<std::shared_ptr<ResidentState>>& from_dev,
                        const std::vector<std::shared_ptr<ResidentState>>& to_dev) {
  if (!(from.shape() == to.shape())) {
    throw Error(ErrorKind::shape, "redistribute between layouts of different global shapes: " +
                                      from.shape().str() + " and " + to.shape().str());
  }
  const auto ctx = context_for(env, from, "redistribute");
  (void)context_for(env, to, "redistribute");
  collectively(ctx.comm, [&] {
    require_tiles_match(from, ctx.rank, from_tiles, "redistribute (source)");
    require_tiles_match(to, ctx.rank, to_tiles, "redistribute (target)");
  });
  auto plan = std::make_shared<CommPlan>("redistribute(" + from.spec() + " -> " + to.spec() + ")",
                                         ctx.comm);
  keep_tiles(*plan, from_tiles);
  keep_tiles(*plan, to_tiles);
  pin_all(*plan, from_dev);
  pin_all(*plan, to_dev);
  const int tag = next_tag_base(env);
  Phase phase;
  add_intersections(phase, tag, blocks_or_none(from, ctx.rank), from_tiles,
                    blocks_or_none(to, ctx.rank), to_tiles, BlocksOf{&from, nullptr},
                    BlocksOf{&to, nullptr}, from_dev, to_dev);
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

// root_transfer for the one tile (Tile or Resident) of a process with at most one block.
template <class A>
Comm root_transfer_one(Environment& env, const Layout& layout, A& part, int root,
                       Tile<tile_element_t<A>>& whole, bool to_root) {
  using T = tile_element_t<A>;
  CommTile<T> p = comm_tile(part);
  std::vector<Tile<T>> tiles;
  std::vector<std::shared_ptr<ResidentState>> devices;
  single_part(layout, env.rank(), p, tiles, devices);
  return root_transfer(env, layout, tiles, root, whole, to_root, devices);
}

template <class T>
void reduce_tile(Tile<T>& tile, ReduceOp op, int root, MPI_Comm comm) {
  if (tile.is_null() || tile.empty()) return;
  if (tile.contiguous()) {
    reduce_in_place(tile.data(), static_cast<int>(tile.size()), mpi_type<T>(), to_mpi(op), root,
                    comm);
    return;
  }
  std::vector<T> packed = tile.to_vector();
  reduce_in_place(packed.data(), static_cast<int>(packed.size()), mpi_type<T>(), to_mpi(op), root,
                  comm);
  std::size_t i = 0;
  tile.for_each([&](const Index&, T& v) { v = packed[i++]; });
}

}  // namespace hit::detail

namespace hit {

template <LocalTile A>
Comm shift(Environment& env, const Layout& layout, A& tile_arg, int axis, int offset,
           ShiftOptions options) {
  using T = tile_element_t<A>;
  detail::CommTile<T> ct = detail::comm_tile(tile_arg);
  const auto ctx = detail::context_for(env, layout, "shift");
  if (axis < 0 || axis >= layout.topology().axes()) {
    throw Error(ErrorKind::invalid_argument,
                "shift along axis " + std::to_string(axis) + " of a topology with " +
                    std::to_string(layout.topology().axes()) + " axes");
  }
  auto plan = std::make_shared<detail::CommPlan>(
      "shift(axis=" + std::to_string(axis) + ",offset=" + std::to_string(offset) + ")", ctx.comm);
  plan->keep(ct.owner);
  const int tag = detail::next_tag_base(env);
  collectively(ctx.comm, [&] {
    detail::require_tile_matches(layout, ctx.rank, ct.tile, "shift");
    if (options.double_buffered && !ct.tile.is_null() && ct.resident.is_null()) {
      throw Error(ErrorKind::invalid_argument,
                  "a double-buffered shift swaps the buffers of a hit::Resident tile; rank " +
                      std::to_string(ctx.rank) + " passes a plain hit::Tile");
    }
  });
  if (ctx.rank >= layout.procs() || !layout.active(ctx.rank)) return Comm(plan);
  const auto dest = layout.neighbor(ctx.rank, axis, offset, true);
  const auto source = layout.neighbor(ctx.rank, axis, -offset, true);
  if (!dest || !source || *dest == ctx.rank) return Comm(plan);
  // The whole padded buffer travels: blocks of different sizes then fit every receiver.
  const Tile<T> sent = ct.tile.padded();
  detail::MessageBuilder builder(mpi_type<T>(), sizeof(T));
  builder.add(detail::region_of(sent));
  auto type = std::make_shared<detail::Datatype>(builder.build());
  detail::Phase phase;
  phase.sends.push_back({*dest, tag, type, builder.bytes(), builder.base()});
  phase.recvs.push_back({*source, tag, type, builder.bytes(), builder.base()});
  detail::stage(phase.fetch, ct.device(), sent.shape());
  detail::stage(phase.publish, ct.device(), sent.shape());
  if (options.double_buffered) {
    // Send from the host buffer of the moment, receive into the spare one (same layout: the
    // datatype is relative to the base), then make the spare the host side. Other double-buffered
    // shifts of the same tile (Cannon's alignment and step) follow the same buffers.
    Resident<T> resident = ct.resident;
    resident.spare();
    plan->before_send([resident](detail::CommPlan& p) mutable {
      detail::Phase& ph = p.phases().front();
      ph.sends.front().base = detail::region_of(resident.host().padded()).data;
      ph.recvs.front().base = detail::region_of(resident.spare().padded()).data;
    });
    plan->after_receive([resident](detail::CommPlan&) mutable { resident.swap_host_buffers(); });
  } else {
    plan->set_pack_sends(true);  // sending and receiving the same buffer
    detail::pin(*plan, ct);
  }
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

template <LocalTile A>
Comm halo(Environment& env, const Layout& layout, A& tile_arg, index_t width, bool corners,
          bool periodic) {
  using T = tile_element_t<A>;
  detail::CommTile<T> ct = detail::comm_tile(tile_arg);
  Tile<T>& tile = ct.tile;
  const auto ctx = detail::context_for(env, layout, "halo");
  auto plan =
      std::make_shared<detail::CommPlan>("halo(width=" + std::to_string(width) + ")", ctx.comm);
  plan->keep(ct.owner);
  const int tag = detail::next_tag_base(env);
  detail::require_halo_width(width);
  const bool active = ctx.rank < layout.procs() && layout.active(ctx.rank);
  collectively(ctx.comm, [&] {
    if (!active) return;
    detail::require_tile_matches(layout, ctx.rank, tile, "halo");
    detail::require_halo_block(layout, ctx.rank, tile.shape());
    if (tile.ghost() < width) {
      throw Error(ErrorKind::invalid_argument, "halo of width " + std::to_string(width) +
                                                   " needs a tile with ghost borders of at least " +
                                                   std::to_string(width) + ", the tile has " +
                                                   std::to_string(tile.ghost()));
    }
  });
  if (!active) return Comm(plan);
  detail::pin(*plan, ct);
  // The same faces halo_traffic() reports (hit/comm_traffic.hpp): neighbours by topology
  // arithmetic, O(log P).
  const std::vector<detail::HaloFace> faces =
      detail::halo_faces(layout, ctx.rank, width, corners, periodic);
  const int axes = std::min(layout.topology().axes(), tile.shape().rank());
  detail::Phase shared_phase;
  auto face = faces.begin();
  for (int k = 0; k < axes; ++k) {
    detail::Phase axis_phase;
    detail::Phase& phase = corners ? axis_phase : shared_phase;
    for (; face != faces.end() && face->axis == k; ++face) {
      // Tags tell the two directions apart.
      const int send_tag = tag + 2 * k + (face->dir > 0 ? 1 : 0);
      const int recv_tag = tag + 2 * k + (face->dir > 0 ? 0 : 1);
      detail::MessageBuilder send(mpi_type<T>(), sizeof(T));
      send.add(detail::region_of(tile.select(face->send)));
      detail::MessageBuilder recv(mpi_type<T>(), sizeof(T));
      recv.add(detail::region_of(tile.select(face->recv)));
      phase.sends.push_back({face->peer, send_tag, std::make_shared<detail::Datatype>(send.build()),
                             send.bytes(), send.base()});
      phase.recvs.push_back({face->peer, recv_tag, std::make_shared<detail::Datatype>(recv.build()),
                             recv.bytes(), recv.base()});
      // Only the faces cross between a device copy and the host.
      detail::stage(phase.fetch, ct.device(), face->send);
      detail::stage(phase.publish, ct.device(), face->recv);
    }
    if (corners) plan->phases().push_back(std::move(axis_phase));
  }
  if (!corners) plan->phases().push_back(std::move(shared_phase));
  return Comm(plan);
}

template <LocalTile A>
Comm bcast(Environment& env, const Layout& layout, A& tile_arg, int axis, int root) {
  using T = tile_element_t<A>;
  detail::CommTile<T> ct = detail::comm_tile(tile_arg);
  const auto ctx = detail::context_for(env, layout, "bcast");
  const Topology& topo = layout.topology();
  if (axis < 0 || axis >= topo.axes()) {
    throw Error(ErrorKind::invalid_argument, "bcast along axis " + std::to_string(axis) +
                                                 " of a topology with " +
                                                 std::to_string(topo.axes()) + " axes");
  }
  if (root < 0 || root >= layout.active_extent(axis)) {
    throw Error(ErrorKind::invalid_argument, "bcast root coordinate " + std::to_string(root) +
                                                 " is outside 0.." +
                                                 std::to_string(layout.active_extent(axis) - 1) +
                                                 " on axis " + std::to_string(axis));
  }
  int color = MPI_UNDEFINED;
  int key = 0;
  detail::Region region;
  detail::Staging staging;
  collectively(ctx.comm, [&] { detail::require_tile_matches(layout, ctx.rank, ct.tile, "bcast"); });
  if (ctx.rank < layout.procs() && layout.active(ctx.rank)) {
    const Index c = topo.coords(ctx.rank);
    color = 0;
    for (int k = 0; k < topo.axes(); ++k) {
      if (k != axis)
        color = color * topo.dims()[static_cast<std::size_t>(k)] + static_cast<int>(c[k]);
    }
    key = static_cast<int>(c[axis]);
    region = detail::region_of(ct.tile.padded());
    staging = {ct.device(), ct.tile.padded_shape()};
  }
  auto plan = std::make_shared<detail::BcastPlan>(
      "bcast(axis=" + std::to_string(axis) + ",root=" + std::to_string(root) + ")", ctx.comm, color,
      key, root, region, mpi_type<T>(), sizeof(T), staging);
  plan->keep(ct.owner);
  detail::pin(*plan, ct);
  return Comm(plan);
}

template <class T>
Comm redistribute(Environment& env, const Layout& from, std::vector<Tile<T>>& from_tiles,
                  const Layout& to, std::vector<Tile<T>>& to_tiles) {
  return detail::redistribute_tiles(env, from, from_tiles, to, to_tiles, {}, {});
}

template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm
redistribute(Environment& env, const Layout& from, A& from_tile, const Layout& to, B& to_tile) {
  using T = tile_element_t<A>;
  detail::CommTile<T> a = detail::comm_tile(from_tile);
  detail::CommTile<T> b = detail::comm_tile(to_tile);
  std::vector<Tile<T>> at, bt;
  std::vector<std::shared_ptr<detail::ResidentState>> ad, bd;
  detail::single_part(from, env.rank(), a, at, ad);
  detail::single_part(to, env.rank(), b, bt, bd);
  Comm c = detail::redistribute_tiles(env, from, at, to, bt, ad, bd);
  return c;
}

namespace detail {

// fetch_regions from this process's blocks (`from_tiles`, one per block of the layout, with their
// device copies when Resident) into `b`.
template <class T>
Comm fetch_regions_from(Environment& env, const Layout& layout, std::vector<Tile<T>>& from_tiles,
                        const std::vector<std::shared_ptr<ResidentState>>& from_dev,
                        const std::vector<Shape>& wanted, CommTile<T>& b) {
  const auto ctx = context_for(env, layout, "fetch_regions");
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
    if (!mine.is_null() && !mine.empty() &&
        (b.tile.is_null() || b.tile.rank() != mine.rank() ||
         !b.tile.allocated_shape().includes(mine))) {
      throw Error(ErrorKind::shape,
                  "fetch_regions: rank " + std::to_string(ctx.rank) + " wants " + mine.str() +
                      " into a tile of shape " +
                      (b.tile.is_null() ? std::string("(null)") : b.tile.shape().str()));
    }
  });
  std::vector<std::vector<Shape>> lists(static_cast<std::size_t>(ctx.size));
  for (std::size_t r = 0; r < lists.size(); ++r) {
    if (!wanted[r].is_null() && !wanted[r].empty()) lists[r].push_back(wanted[r]);
  }
  std::vector<Tile<T>> to_tiles;
  std::vector<std::shared_ptr<ResidentState>> to_dev;
  const std::vector<Shape>& my_to = lists[static_cast<std::size_t>(ctx.rank)];
  if (!my_to.empty()) {
    to_tiles.push_back(b.tile);
    to_dev.push_back(b.device());
  }
  auto plan = std::make_shared<CommPlan>("fetch_regions(" + layout.spec() + ")", ctx.comm);
  keep_tiles(*plan, from_tiles);
  plan->keep(b.owner);
  pin_all(*plan, from_dev);
  pin(*plan, b);
  const int tag = next_tag_base(env);
  Phase phase;
  add_intersections(phase, tag, blocks_or_none(layout, ctx.rank), from_tiles, my_to, to_tiles,
                    BlocksOf{&layout, nullptr}, BlocksOf{nullptr, &lists}, from_dev, to_dev);
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

}  // namespace detail

template <LocalTile A, LocalTile B>
requires std::same_as<tile_element_t<A>, tile_element_t<B>> Comm fetch_regions(
    Environment& env, const Layout& layout, A& tile, const std::vector<Shape>& wanted, B& into) {
  using T = tile_element_t<A>;
  detail::CommTile<T> a = detail::comm_tile(tile);
  detail::CommTile<T> b = detail::comm_tile(into);
  std::vector<Tile<T>> from_tiles;
  std::vector<std::shared_ptr<detail::ResidentState>> from_dev;
  const int rank = env.rank();
  if (rank < layout.procs()) detail::single_part(layout, rank, a, from_tiles, from_dev);
  return detail::fetch_regions_from(env, layout, from_tiles, from_dev, wanted, b);
}

template <class T, LocalTile B>
requires std::same_as<T, tile_element_t<B>> Comm fetch_regions(Environment& env,
                                                               const Layout& layout,
                                                               std::vector<Tile<T>>& tiles,
                                                               const std::vector<Shape>& wanted,
                                                               B& into) {
  detail::CommTile<T> b = detail::comm_tile(into);
  return detail::fetch_regions_from(env, layout, tiles, {}, wanted, b);
}

template <class T>
Comm gather(Environment& env, const Layout& layout, std::vector<Tile<T>>& parts, int root,
            Tile<T>& whole) {
  return detail::root_transfer(env, layout, parts, root, whole, true);
}
template <LocalTile A>
Comm gather(Environment& env, const Layout& layout, A& part, int root,
            Tile<tile_element_t<A>>& whole) {
  return detail::root_transfer_one(env, layout, part, root, whole, true);
}
template <class T>
Comm scatter(Environment& env, const Layout& layout, std::vector<Tile<T>>& parts, int root,
             Tile<T>& whole) {
  return detail::root_transfer(env, layout, parts, root, whole, false);
}
template <LocalTile A>
Comm scatter(Environment& env, const Layout& layout, A& part, int root,
             Tile<tile_element_t<A>>& whole) {
  return detail::root_transfer_one(env, layout, part, root, whole, false);
}

template <class T>
void allreduce(Environment& env, Tile<T>& tile, ReduceOp op) {
  detail::reduce_tile(tile, op, -1, env.comm());
}
template <class T>
void reduce(Environment& env, Tile<T>& tile, ReduceOp op, int root) {
  detail::reduce_tile(tile, op, root, env.comm());
}
template <class T>
requires std::is_arithmetic_v<T> T allreduce(Environment& env, T value, ReduceOp op) {
  detail::reduce_in_place(&value, 1, mpi_type<T>(), to_mpi(op), -1, env.comm());
  return value;
}

}  // namespace hit
