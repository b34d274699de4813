#pragma once
// What every by-name layout builder resolves before its plug-in runs, in one place so that dense
// (hit::layout) and sparse (hit::sparse_layout) layouts bind the same devices: the device and
// node of every process, and the speed a binding declares.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_binding.hpp"

namespace hit::detail {

// The devices and nodes a layout plug-in gets for `procs` processes.
struct LayoutBinding {
  std::vector<DeviceBinding> devices;  // one per process, or empty (unknown: homogeneous)
  std::vector<int> nodes;              // one per process when the run's own binding was taken
};

// `given` (one binding per process: a plan for another run; Error(device) naming `spec_text`
// for another count) or, when empty and the run has at least `procs` processes, the run's own
// binding and nodes (the physical topology's: collective on first use).
[[nodiscard]] LayoutBinding layout_binding(Environment& env, const std::string& spec_text,
                                           int procs, std::vector<DeviceBinding> given);

// The relative speed a device binding declares: an emulated device's 1/slowdown, 1 otherwise
// (the default weight of the balancing layouts when no weights or models are given).
inline double binding_weight(const DeviceBinding& d) {
  const auto slowdown = d.params.find("slowdown");
  if (d.kind != DeviceKind::emu || slowdown == d.params.end()) return 1.0;
  const double s = std::atof(slowdown->second.c_str());
  return s > 0 ? 1.0 / s : 1.0;
}

}  // namespace hit::detail
