#include "hit/fpm/hierarchical.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

// Six significant digits: weights are relative, and the spec stays readable. The rounded double
// is the one nearest the 6-digit decimal, so the spec prints exactly those digits.
std::vector<double> six_digits(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const double x : values) {
    if (x == 0 || !std::isfinite(x)) {
      out.push_back(x);
      continue;
    }
    const int exponent = 5 - static_cast<int>(std::floor(std::log10(std::fabs(x))));
    const double scale = std::pow(10.0, std::abs(exponent));
    out.push_back(exponent >= 0 ? std::round(x * scale) / scale : std::round(x / scale) * scale);
  }
  return out;
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

Spec hierarchical_node_spec(const std::vector<std::int64_t>& areas, int block) {
  std::vector<double> w;
  for (const std::int64_t a : areas) w.push_back(static_cast<double>(std::max<std::int64_t>(a, 1)));
  return Spec("columns2d").with("w", six_digits(w)).with("b", block);
}

Spec hierarchical_layout_spec(const std::vector<std::int64_t>& areas, int block,
                              const std::vector<double>& weights) {
  Spec spec = Spec("hierarchical")
                  .with("nodes", hierarchical_node_spec(areas, block))
                  .with("devices", Spec("dimBlocks").with("dim", 1));
  if (!weights.empty()) spec.set("w", std::span<const double>(six_digits(weights)));
  return spec;
}

}  // namespace hit::fpm
