#include "hit/fpm/hierarchical.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

// Six significant digits: weights are relative, and the spec stays readable.
std::string join(const std::vector<double>& values) {
  return fmt::format("{:.6g}", fmt::join(values, ","));
}

}  // namespace

std::string_view to_string(HierarchicalMethod method) noexcept {
  switch (method) {
    case HierarchicalMethod::homogeneous:
      return "homogeneous";
    case HierarchicalMethod::single_cpm:
      return "single-cpm";
    case HierarchicalMethod::multiple_cpm:
      return "multiple-cpm";
    case HierarchicalMethod::fpm:
      return "fpm";
  }
  return "?";
}

HierarchicalMethod parse_hierarchical_method(std::string_view name) {
  for (const auto m : {HierarchicalMethod::homogeneous, HierarchicalMethod::single_cpm,
                       HierarchicalMethod::multiple_cpm, HierarchicalMethod::fpm}) {
    if (name == to_string(m)) return m;
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("hierarchical partitioning method '{}' (methods: homogeneous, "
                          "single-cpm, multiple-cpm, fpm)",
                          name));
}

std::string hierarchical_node_spec(const std::vector<std::int64_t>& areas, int block) {
  std::vector<double> w;
  for (const std::int64_t a : areas) w.push_back(static_cast<double>(std::max<std::int64_t>(a, 1)));
  return fmt::format("columns2d:w={},b={}", join(w), block);
}

std::string hierarchical_layout_spec(const std::vector<std::int64_t>& areas, int block,
                                     const std::vector<double>& weights) {
  std::string spec = fmt::format("hierarchical:nodes=({}),devices=(dimBlocks:dim=1)",
                                 hierarchical_node_spec(areas, block));
  if (!weights.empty()) spec += ",w=" + join(weights);
  return spec;
}

}  // namespace hit::fpm
