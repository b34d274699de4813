#pragma once
// Binding of ranks to devices (docs/devices.md §2): the parsed form of `--devices` / HIT_DEVICES.
//
// Grammar (whitespace ignored):
//   spec    := item ("," item)*
//   item    := kind [":" index] ["(" param ("," param)* ")"] ["*" count]
//   kind    := "cpu" | "cuda" | "emu"
//   param   := key "=" value        e.g. slowdown=4, mem=512MiB, bw=10GB/s, cores=2
// Items bind ranks in rank order; `*count` repeats an item for count consecutive ranks.
// An item without an index (`cpu*4`, `cuda`) is resolved when ranks are bound (PhysicalTopology):
// each such rank takes the next device of that kind on its node (docs/devices.md).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hit/topology/device_kind.hpp"

namespace hit {

struct DeviceBinding {
  DeviceKind kind = DeviceKind::cpu;
  static constexpr int any_index = -1;
  int index = 0;  // which device of that kind on the node; any_index: not given
  std::map<std::string, std::string> params;

  // Canonical text of one device, e.g. "emu:0(mem=64MiB,slowdown=4)" (no ":index" for any_index).
  [[nodiscard]] std::string str() const;
  friend bool operator==(const DeviceBinding&, const DeviceBinding&) = default;
};

// One binding per rank, in rank order. Throws Error(parse) with the grammar on malformed text, and
// Error(device) when the spec binds a number of ranks different from `procs` (unless it binds
// exactly one item without a count, which is then repeated for every rank).
[[nodiscard]] std::vector<DeviceBinding> parse_device_spec(std::string_view spec, int procs);

// The grammar, as shown in error messages and --help.
std::string_view device_spec_grammar();

}  // namespace hit
