// The built-in layout plug-ins: the one place that names them (core and src/layouts never do).
#include "builtin.hpp"

namespace hit::detail {

void register_builtin_layouts(LayoutRegistry& registry) {
  register_blocks_layout(registry);
  register_dim_blocks_layout(registry);
  register_cyclic_layout(registry);
  register_block_cyclic_layout(registry);
  register_weighted_layout(registry);
  register_blocks_lb_layout(registry);
  register_fpm_layout(registry);
  register_columns2d_layout(registry);
  register_hierarchical_layout(registry);
  register_hetero_block_cyclic_layout(registry);
}

}  // namespace hit::detail
