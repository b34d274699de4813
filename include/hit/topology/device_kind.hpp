#pragma once
// The kinds of device a rank can be bound to: `cpu` (a group of host cores), `cuda` (a GPU) and
// `emu` (an emulated accelerator with memory of its own, docs/devices.md). One enum serves the
// binding of ranks (DeviceBinding), partitions (PartitionDevice, Partition), device backends
// (Device) and kernels (one body per kind); its text is the kind's name as `--devices` specs,
// labels and JSON spell it.

#include <array>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string_view>

namespace hit {

enum class DeviceKind { cpu, cuda, emu };

// Every kind, in the order of the enum (for lists in messages, --help and hit-info).
constexpr std::array<DeviceKind, 3> device_kinds() noexcept {
  return {DeviceKind::cpu, DeviceKind::cuda, DeviceKind::emu};
}

// "cpu", "cuda" or "emu".
constexpr std::string_view to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::cpu:
      return "cpu";
    case DeviceKind::cuda:
      return "cuda";
    case DeviceKind::emu:
      return "emu";
  }
  return "?";
}

// The alignment, in bytes, of the rows of tiles staged into a device of this kind: 128 on cuda
// (coalesced rows), 64 (a cache line) on emu, none on cpu (nothing is staged). Partitions ask
// for it, and resident tiles are laid out with it.
constexpr std::size_t default_row_alignment(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::cuda:
      return 128;
    case DeviceKind::emu:
      return 64;
    case DeviceKind::cpu:
      return 0;
  }
  return 0;
}

// The kind whose name is exactly `name`, or nothing (for parsers with messages of their own).
[[nodiscard]] constexpr std::optional<DeviceKind> parse_device_kind(
    std::string_view name) noexcept {
  for (const DeviceKind kind : device_kinds()) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

// The kind named `name`; Error(device) naming the kinds there are otherwise.
[[nodiscard]] DeviceKind device_kind(std::string_view name);

// Writes the kind's name (so test frameworks and streams print "cuda", not a number).
std::ostream& operator<<(std::ostream& out, DeviceKind kind);

}  // namespace hit
