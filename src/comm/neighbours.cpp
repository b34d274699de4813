// The builders whose peers are topology neighbours: shift, halo and bcast (hit/comm.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "builder_support.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {

namespace {

// A double-buffered shift sends from the host buffer of the moment and receives into the spare
// one (same layout: the datatype is relative to the base), then makes the spare the host side.
// Other double-buffered shifts of the same tile (Cannon's alignment and step) follow the same
// buffers.
void double_buffer(CommPlan& plan, const HostBuffers& buffers) {
  (void)buffers.spare();  // allocates the spare buffer now, as the plan is built
  plan.before_send([buffers](CommPlan& p) {
    Phase& ph = p.phases().front();
    ph.sends.front().base = buffers.host();
    ph.recvs.front().base = buffers.spare();
  });
  plan.after_receive([buffers](CommPlan&) { buffers.swap(); });
}

}  // namespace

Comm shift(const Layout& layout, const CommTile& ct, int axis, int offset,
           const ShiftOptions& options) {
  const auto ctx = context_for(layout, "shift");
  if (axis < 0 || axis >= layout.topology().axes()) {
    throw Error(ErrorKind::invalid_argument,
                "shift along axis " + std::to_string(axis) + " of a topology with " +
                    std::to_string(layout.topology().axes()) + " axes");
  }
  auto plan = std::make_shared<CommPlan>(
      plan_name(options.label,
                "shift(axis=" + std::to_string(axis) + ",offset=" + std::to_string(offset) + ")"),
      ctx.comm);
  keep(*plan, ct);
  const int tag = next_tag_base(ctx.env);
  collectively(ctx.comm, [&] {
    require_tile_matches(layout, ctx.rank, ct.tile, "shift");
    if (options.double_buffered && !ct.tile.is_null() && !ct.resident) {
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
  MessageBuilder builder(ct.element.mpi, ct.element.size);
  builder.add(ct.tile.padded_region());
  auto type = std::make_shared<Datatype>(builder.build());
  Phase phase;
  phase.sends.push_back({*dest, tag, type, builder.bytes(), builder.base(), builder.runs()});
  phase.recvs.push_back({*source, tag, type, builder.bytes(), builder.base(), builder.runs()});
  stage(phase.fetch, ct.device, ct.tile.padded);
  stage(phase.publish, ct.device, ct.tile.padded);
  if (options.double_buffered) {
    double_buffer(*plan, ct.buffers);
  } else {
    plan->set_pack_sends(true);  // sending and receiving the same buffer
    pin(*plan, ct);
  }
  plan->phases().push_back(std::move(phase));
  return Comm(plan);
}

namespace {

// Every rank agrees whether the tiles and the layout suit a halo before any builds messages: a
// layout whose neighbours topology arithmetic does not find may show it on one rank only. The
// faces of this rank (none when inactive).
std::vector<HaloFace> checked_faces(const Layout& layout, const CommContext& ctx,
                                    const TileData& tile, const HaloOptions& options, bool active) {
  std::vector<HaloFace> faces;
  collectively(ctx.comm, [&] {
    if (!active) return;
    require_tile_matches(layout, ctx.rank, tile, "halo");
    require_halo_block(layout, ctx.rank, tile.shape);
    if (tile.ghost < options.width) {
      throw Error(ErrorKind::invalid_argument, "halo of width " + std::to_string(options.width) +
                                                   " needs a tile with ghost borders of at least " +
                                                   std::to_string(options.width) +
                                                   ", the tile has " + std::to_string(tile.ghost));
    }
    // The same faces halo_traffic() reports (hit/comm/comm_traffic.hpp): neighbours by topology
    // arithmetic, O(log P).
    faces = halo_faces(layout, ctx.rank, options.width, options.corners, options.periodic);
  });
  return faces;
}

}  // namespace

Comm halo(const Layout& layout, const CommTile& ct, const HaloOptions& options) {
  const TileData& tile = ct.tile;
  const auto ctx = context_for(layout, "halo");
  auto plan = std::make_shared<CommPlan>(
      plan_name(options.label, "halo(width=" + std::to_string(options.width) + ")"), ctx.comm);
  keep(*plan, ct);
  const int tag = next_tag_base(ctx.env);
  require_halo_width(options.width);
  const bool active = ctx.rank < layout.procs() && layout.active(ctx.rank);
  const std::vector<HaloFace> faces = checked_faces(layout, ctx, tile, options, active);
  if (!active) return Comm(plan);
  pin(*plan, ct);
  const int axes = std::min(layout.topology().axes(), tile.shape.rank());
  Phase shared_phase;
  auto face = faces.begin();
  for (int k = 0; k < axes; ++k) {
    Phase axis_phase;
    Phase& phase = options.corners ? axis_phase : shared_phase;
    for (; face != faces.end() && face->axis == k; ++face) {
      // Tags tell the two directions apart.
      const int send_tag = tag + 2 * k + (face->dir > 0 ? 1 : 0);
      const int recv_tag = tag + 2 * k + (face->dir > 0 ? 0 : 1);
      MessageBuilder send(ct.element.mpi, ct.element.size);
      send.add(tile.region(face->send));
      MessageBuilder recv(ct.element.mpi, ct.element.size);
      recv.add(tile.region(face->recv));
      phase.sends.push_back({face->peer, send_tag, std::make_shared<Datatype>(send.build()),
                             send.bytes(), send.base(), send.runs()});
      phase.recvs.push_back({face->peer, recv_tag, std::make_shared<Datatype>(recv.build()),
                             recv.bytes(), recv.base(), recv.runs()});
      // Only the faces cross between a device copy and the host.
      stage(phase.fetch, ct.device, face->send);
      stage(phase.publish, ct.device, face->recv);
    }
    if (options.corners) plan->phases().push_back(std::move(axis_phase));
  }
  if (!options.corners) plan->phases().push_back(std::move(shared_phase));
  return Comm(plan);
}

namespace {

void check_bcast(const Layout& layout, int axis, int root) {
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
}

}  // namespace

Comm bcast(const Layout& layout, const CommTile& ct, int axis, int root,
           const CommOptions& options) {
  const auto ctx = context_for(layout, "bcast");
  const Topology& topo = layout.topology();
  check_bcast(layout, axis, root);
  int color = MPI_UNDEFINED;
  int key = 0;
  Region region;
  Staging staging;
  collectively(ctx.comm, [&] { require_tile_matches(layout, ctx.rank, ct.tile, "bcast"); });
  if (ctx.rank < layout.procs() && layout.active(ctx.rank)) {
    const Index c = topo.coords(ctx.rank);
    color = 0;
    for (int k = 0; k < topo.axes(); ++k) {
      if (k != axis)
        color = color * topo.dims()[static_cast<std::size_t>(k)] + static_cast<int>(c[k]);
    }
    key = static_cast<int>(c[axis]);
    region = ct.tile.padded_region();
    staging = {ct.device, ct.tile.padded};
  }
  auto plan = std::make_shared<BcastPlan>(
      plan_name(options.label,
                "bcast(axis=" + std::to_string(axis) + ",root=" + std::to_string(root) + ")"),
      ctx.comm, color, key, root, region, ct.element.mpi, ct.element.size, staging);
  keep(*plan, ct);
  pin(*plan, ct);
  return Comm(plan);
}

}  // namespace hit::detail
