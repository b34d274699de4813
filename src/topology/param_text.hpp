#pragma once
// The text of device parameters, shared by the parsers of the `--devices` grammar (units.cpp,
// emulator_profiles.cpp, device_params.cpp, device_binding.cpp): the scanning of numbers and
// units, and the canonical text of a parameter's value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace hit::detail {

[[nodiscard]] std::string lower(std::string_view s);
// `s` without its whitespace (the grammar ignores it).
[[nodiscard]] std::string strip_spaces(std::string_view s);
// A non-negative decimal number with an optional fraction, the whole of `s`.
[[nodiscard]] bool parse_number(std::string_view s, double& out);
// A non-negative whole number, the whole of `s`.
[[nodiscard]] bool parse_count(std::string_view s, int& out);
// Splits "512MiB" into number and unit text.
[[nodiscard]] std::pair<std::string_view, std::string_view> split_unit(std::string_view s);
// A byte count as parse_bytes reads it, or nothing (for parsers with messages of their own).
[[nodiscard]] std::optional<std::uint64_t> try_parse_bytes(std::string_view text);
// The shortest text that reads back as `x` ("4", "1.5").
[[nodiscard]] std::string format_number(double x);

// Validates the value of parameter `key` and returns its canonical text, so equal devices print
// equally ("mem=0.5GiB" becomes "mem=512MiB"). Throws Error(parse) saying what is wrong with it.
[[nodiscard]] std::string canonical_param_value(const std::string& key, const std::string& value);

}  // namespace hit::detail
