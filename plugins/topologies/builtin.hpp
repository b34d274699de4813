#pragma once
// Registration functions of the built-in topology plug-ins, one per file of this folder.

#include "hit/topology.hpp"

namespace hit::detail {

void register_array_topology(TopologyRegistry& registry);
void register_mesh_topology(TopologyRegistry& registry);
void register_mesh2d_topology(TopologyRegistry& registry);
void register_square_topology(TopologyRegistry& registry);

}  // namespace hit::detail
