#pragma once
// fmt formatting of DeviceKind for the library's own sources: fmt::format("{}", kind) writes its
// name ("cuda"). Private, as fmt is a private dependency (the public header offers to_string and
// operator<<).

#include <fmt/format.h>

#include <string_view>

#include "hit/topology/device_kind.hpp"

template <>
struct fmt::formatter<hit::DeviceKind> : fmt::formatter<std::string_view> {
  auto format(hit::DeviceKind kind, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(hit::to_string(kind), ctx);
  }
};
