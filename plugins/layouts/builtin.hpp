#pragma once
// Registration functions of the built-in layout plug-ins (one per file of this folder) and the
// parameter helpers they share.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "layouts/layout_choice.hpp"  // binding_weight

namespace hit::detail {

void register_blocks_layout(LayoutRegistry& registry);
void register_dim_blocks_layout(LayoutRegistry& registry);
void register_cyclic_layout(LayoutRegistry& registry);
void register_block_cyclic_layout(LayoutRegistry& registry);
void register_weighted_layout(LayoutRegistry& registry);
void register_blocks_lb_layout(LayoutRegistry& registry);
void register_fpm_layout(LayoutRegistry& registry);  // fpm.cpp
void register_columns2d_layout(LayoutRegistry& registry);
void register_hierarchical_layout(LayoutRegistry& registry);
void register_hetero_block_cyclic_layout(LayoutRegistry& registry);

// The integer parameter `key` of the request's spec, in [0, limit); Error(plugin) naming the value
// and the allowed range otherwise.
inline int index_param(const LayoutRequest& request, const std::string& key, int fallback,
                       int limit, const std::string& what) {
  const auto value = request.spec.get_int(key, fallback);
  if (value < 0 || value >= limit) {
    throw Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': " + key + "=" +
                                       std::to_string(value) + " is not " + what + " (0 to " +
                                       std::to_string(limit - 1) + ")");
  }
  return static_cast<int>(value);
}

// The weights `w` of the request's spec: exactly `count` of them (one per process), not all 0 (each
// is already within the range the plug-in declares); Error(plugin) naming the spec otherwise.
inline std::vector<double> process_weights(const LayoutRequest& request, std::size_t count) {
  const std::vector<double> w = request.spec.get_doubles("w");
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin, fmt::format("layout '{}': {}", request.spec.str(), why));
  };
  if (w.size() != count) {
    throw fail(fmt::format("w has {} weights, expected {} (one per process)", w.size(), count));
  }
  if (std::none_of(w.begin(), w.end(), [](double x) { return x > 0; })) {
    throw fail("every weight of w is 0: some process must get work");
  }
  return w;
}

// The declaration of `w` as one weight per process: positive, or with `allow_zero` also 0 (a
// process without work).
inline ParamInfo process_weights_param(std::string description, bool allow_zero) {
  ParamInfo w = ParamInfo::reals("w", std::move(description)).named("weight");
  if (allow_zero) return std::move(w).at_least(0).range_in_words("a non-negative number");
  return std::move(w).above(0).range_in_words("a positive number");
}

// The declaration of `kind`, the interpolation of performance models (fpm::parse_model_kind's
// names, with their aliases).
inline ParamInfo model_kind_param() {
  return ParamInfo::choice("kind", "model interpolation",
                           {"piecewise", "akima", "constant", "pwl", "cpm"}, "piecewise");
}

// The node of each of the `q` processes: from `ranks_per_node=K` (consecutive ranks, K a node),
// else the run's nodes; nullopt when neither is known (a plan for another run). A K outside
// [1, q] is an Error(plugin) naming the spec (the range depends on the run, so the declaration
// cannot hold it).
inline std::optional<std::vector<int>> process_nodes(const LayoutRequest& request, int q) {
  std::vector<int> node_of(static_cast<std::size_t>(q), 0);
  if (request.spec.has("ranks_per_node")) {
    const std::int64_t k = request.spec.get_int("ranks_per_node", 1);
    if (k < 1 || k > q) {
      throw Error(
          ErrorKind::plugin,
          fmt::format("layout '{}': ranks_per_node={} is not between 1 and the {} processes",
                      request.spec.str(), k, q));
    }
    for (int p = 0; p < q; ++p) node_of[static_cast<std::size_t>(p)] = static_cast<int>(p / k);
    return node_of;
  }
  if (request.nodes.size() < static_cast<std::size_t>(q)) return std::nullopt;
  std::copy_n(request.nodes.begin(), q, node_of.begin());
  return node_of;
}

}  // namespace hit::detail
