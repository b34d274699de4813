#pragma once
// The pure part of hierarchical partitioning of the column-based matrix product (Clarke, Ilic,
// Lastovetsky, Sousa, Zhong, "Design and optimization of scientific applications for highly
// heterogeneous and hierarchical HPC platforms using functional computation performance models"):
// the methods, and the layout spec that reproduces a result. Measuring the devices and iterating
// INPA over the nodes and IDPA over each node's devices is the balance layer's
// (hit/balance/hierarchical.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/spec.hpp"

namespace hit::fpm {

enum class HierarchicalMethod {
  homogeneous,   // even areas and even columns; nothing measured
  single_cpm,    // one measurement of every device on the homogeneous split: constant speeds
  multiple_cpm,  // the INPA/IDPA iterations with constant models (the newest point)
  fpm,           // the INPA/IDPA iterations with partial piecewise models (the default)
};
[[nodiscard]] std::string_view to_string(HierarchicalMethod method) noexcept;
// "homogeneous", "single-cpm", "multiple-cpm", "fpm"; Error(invalid_argument) listing them else.
HierarchicalMethod parse_hierarchical_method(std::string_view name);

// The columns2d spec of the nodes' rectangles for target areas (in b×b blocks): a node asked for
// no area still gets a rectangle of at least one block (columns2d gives every process one), so it
// weighs one block.
[[nodiscard]] Spec hierarchical_node_spec(const std::vector<std::int64_t>& areas, int block);
// The `hierarchical` layout spec: the nodes' rectangles for `areas`, split among each node's
// devices in columns by `weights` (per rank; empty: even).
[[nodiscard]] Spec hierarchical_layout_spec(const std::vector<std::int64_t>& areas, int block,
                                            const std::vector<double>& weights);

}  // namespace hit::fpm
