// The built-in topology plug-ins: the one place that names them (core never does).
#include "builtin.hpp"

namespace hit::detail {

void register_builtin_topologies(TopologyRegistry& registry) {
  register_array_topology(registry);
  register_mesh_topology(registry);
  register_mesh2d_topology(registry);
  register_square_topology(registry);
}

}  // namespace hit::detail
