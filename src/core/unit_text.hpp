#pragma once
// The scanning of numbers and units that the parsers of byte counts, bandwidths and device
// parameters share (core/units.cpp, the topology layer's parameter parsers).

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

}  // namespace hit::detail
