// The names of device kinds (hit/topology/device_kind.hpp) for messages and streams.

#include "hit/topology/device_kind.hpp"

#include <fmt/format.h>

#include <ostream>

#include "hit/core/error.hpp"

namespace hit {

DeviceKind device_kind(std::string_view name) {
  if (const auto kind = parse_device_kind(name)) return *kind;
  throw Error(ErrorKind::device,
              fmt::format("unknown device kind '{}' (known kinds: cpu, cuda, emu)", name));
}

std::ostream& operator<<(std::ostream& out, DeviceKind kind) {
  return out << to_string(kind);
}

}  // namespace hit
