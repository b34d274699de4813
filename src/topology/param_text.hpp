#pragma once
// The text of device parameters, shared by the parsers of the `--devices` grammar
// (emulator_profiles.cpp, device_params.cpp, device_binding.cpp): the canonical text of a
// parameter's value; the scanning of numbers and units is core/unit_text.hpp's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/unit_text.hpp"

namespace hit::detail {

// Validates the value of parameter `key` and returns its canonical text, so equal devices print
// equally ("mem=0.5GiB" becomes "mem=512MiB"). Throws Error(parse) saying what is wrong with it.
[[nodiscard]] std::string canonical_param_value(const std::string& key, const std::string& value);

}  // namespace hit::detail
