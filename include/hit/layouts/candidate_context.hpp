#pragma once
// What a layout plug-in derives the specs it offers the advisor from (LayoutPlugin::candidates,
// SparseLayoutPlugin::candidates; docs/advisor.md): the grid the layout would be laid on and what
// the advisor knows of the machine that would run it. A plug-in loaded from HIT_PLUGIN_PATH is
// ranked with the settings it names here, as the built-in ones are.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hit/topology.hpp"

namespace hit {

struct CandidateContext {
  Topology topology;
  // Each process's speed at the program's kernel relative to the fastest (1), taken at an even
  // share of the problem.
  std::vector<double> speeds;
  // The performance-model files behind the speeds, one per process; empty: none were given.
  std::vector<std::string> model_files;
  // Processes per node of the machine, 0 when it does not say (then all are one node).
  int ranks_per_node = 0;
  bool hosts = false;         // some process computes on host cores
  bool accelerators = false;  // and some on an accelerator

  bool even_speeds() const {
    return std::all_of(speeds.begin(), speeds.end(), [&](double x) { return x == speeds.front(); });
  }
  // The speeds as layout weights, to `digits` significant digits (weights are relative: a
  // readable spec loses nothing a prediction could tell apart); equal speeds as one weight of 1
  // per coordinate of the topology's first axis.
  std::vector<double> weights(int digits = 4) const {
    if (even_speeds()) return std::vector<double>(static_cast<std::size_t>(topology.dim(0)), 1.0);
    std::vector<double> out = speeds;
    for (double& x : out) x = round_to_digits(x, digits);
    return out;
  }
  // x to `digits` significant digits, as the double nearest that decimal (so it prints as it).
  static double round_to_digits(double x, int digits) {
    if (x == 0 || !std::isfinite(x)) return x;
    const int e = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x))));
    if (e >= 0) {
      const double scale = std::pow(10.0, e);
      return std::round(x * scale) / scale;
    }
    const double scale = std::pow(10.0, -e);
    return std::round(x / scale) * scale;
  }
};

}  // namespace hit
