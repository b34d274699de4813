// What every comm builder needs around its algorithm (see builder_support.hpp), and the geometry
// of a type-free tile (hit/comm/detail/comm_tile.hpp).
#include "builder_support.hpp"

#include <string>

#include "hit/core/error.hpp"

namespace hit::detail {

// As Tile::select(sub) followed by the region of the view.
Region TileData::region(const Shape& sub) const {
  if (is_null() && sub.is_null()) return {};
  const Shape reach = allocated_shape();
  if (sub.rank() != shape.rank() || !reach.includes(sub)) throw_bad_selection(sub, shape, reach);
  if (sub.empty()) return {};
  return select(sub);
}

Region TileData::whole() const {
  if (is_null() || shape.empty()) return {};
  return *this;
}
Region TileData::padded_region() const {
  if (is_null() || padded.empty()) return {};
  return select(padded);
}

CommContext context_for(const Layout& layout, const char* what) {
  Environment& env = Environment::current();
  if (layout.procs() > env.size()) {
    throw Error(ErrorKind::topology,
                std::string(what) + ": the layout has " + std::to_string(layout.procs()) +
                    " processes but the run has only " + std::to_string(env.size()));
  }
  return {env, env.comm(), env.rank(), env.size()};
}

void require_tile_matches(const Layout& layout, int rank, const TileData& tile, const char* what) {
  const Shape block = rank < layout.procs() ? layout.block(rank) : Shape();
  if (block.is_null() || block.empty()) return;
  if (tile.is_null() || !(tile.shape == block)) {
    throw Error(ErrorKind::shape, std::string(what) + ": rank " + std::to_string(rank) +
                                      " passes a tile of shape " +
                                      (tile.is_null() ? std::string("(null)") : tile.shape.str()) +
                                      " but its block of the layout is " + block.str());
  }
}

void require_tiles_match(const Layout& layout, int rank, const std::vector<CommTile>& tiles,
                         const char* what) {
  const std::vector<Shape>& blocks = blocks_or_none(layout, rank);
  bool ok = blocks.size() == tiles.size();
  for (std::size_t i = 0; ok && i < blocks.size(); ++i) ok = tiles[i].tile.shape == blocks[i];
  if (ok) return;
  std::string got;
  for (const auto& t : tiles) got += t.tile.is_null() ? "(null)" : t.tile.shape.str();
  std::string want;
  for (const auto& b : blocks) want += b.str();
  throw Error(ErrorKind::shape, std::string(what) + ": rank " + std::to_string(rank) +
                                    " passes tiles " + (got.empty() ? "(none)" : got) +
                                    " but its blocks of the layout are " +
                                    (want.empty() ? "(none)" : want));
}

std::vector<CommTile> tiles_of(const Layout& layout, int rank, Parts&& parts) {
  if (parts.one && blocks_or_none(layout, rank).empty()) return {};
  return std::move(parts.tiles);
}

void keep(CommPlan& plan, const CommTile& tile) {
  if (tile.owner) plan.keep(tile.owner);
}
void keep(CommPlan& plan, const std::vector<CommTile>& tiles) {
  for (const CommTile& t : tiles) keep(plan, t);
}
void pin(CommPlan& plan, const CommTile& tile) {
  if (tile.device) plan.pin_buffer(tile.device, tile.device->host.data);
}
void pin(CommPlan& plan, const std::vector<CommTile>& tiles) {
  for (const CommTile& t : tiles) pin(plan, t);
}

void add_message(std::vector<Message>& list, int peer, int tag, const MessageBuilder& builder) {
  if (builder.empty()) return;
  list.push_back({peer, tag, std::make_shared<Datatype>(builder.build()), builder.bytes(),
                  builder.base(), builder.runs()});
}

}  // namespace hit::detail
