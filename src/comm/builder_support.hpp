#pragma once
// Internal to src/comm/: what every builder needs around its algorithm (the run's communicator,
// the checks that a tile matches its block, staging through device copies, the plan's name).

#include <memory>
#include <string>
#include <vector>

#include "hit/comm.hpp"
#include "hit/comm/detail/comm_peers.hpp"
#include "hit/comm/detail/comm_plan.hpp"
#include "hit/core/environment.hpp"

namespace hit::detail {

struct CommContext {
  Environment& env;
  MPI_Comm comm;
  int rank;
  int size;
};

// The run's Environment, refusing a layout with more processes than the run has.
CommContext context_for(const Layout& layout, const char* what);

// The plan's name: the options' label, else the builder's description.
inline std::string plan_name(const std::string& label, std::string description) {
  return label.empty() ? std::move(description) : label;
}

// The tile a rank passes must hold exactly its block of the layout.
void require_tile_matches(const Layout& layout, int rank, const TileData& tile, const char* what);
// The tiles a rank passes must hold exactly its blocks of the layout, in order.
void require_tiles_match(const Layout& layout, int rank, const std::vector<CommTile>& tiles,
                         const char* what);

// The tiles of a process's part: `one` tile stands for its block when it has one, else for none.
std::vector<CommTile> tiles_of(const Layout& layout, int rank, Parts&& parts);

// Regions of a tile that a phase sends or receives, staged through its device copy if it has one.
inline void stage(std::vector<Staging>& list, const std::shared_ptr<ResidentState>& device,
                  const Shape& region) {
  if (device && !region.is_null() && !region.empty()) list.push_back({device, region});
}

// The plan keeps the tiles alive (their owner handles).
void keep(CommPlan& plan, const CommTile& tile);
void keep(CommPlan& plan, const std::vector<CommTile>& tiles);
// The plan refuses to run once a resident tile's host buffer moved (a double-buffered shift).
void pin(CommPlan& plan, const CommTile& tile);
void pin(CommPlan& plan, const std::vector<CommTile>& tiles);

// The message `builder` collected, to or from `peer`, appended to `list` unless empty.
void add_message(std::vector<Message>& list, int peer, int tag, const MessageBuilder& builder);

}  // namespace hit::detail
