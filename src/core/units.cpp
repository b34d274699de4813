// Byte sizes and bandwidths as text (hit/core/units.hpp), and the scanning of numbers and units
// the parameter parsers share (core/unit_text.hpp).

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "core/unit_text.hpp"
#include "hit/core/error.hpp"
#include "hit/core/units.hpp"

namespace hit {
namespace {

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};

// Longest names first, so "MiB" is not read as "M" + "iB".
constexpr Unit byte_units[] = {
    {"kib", 1ULL << 10},   {"mib", 1ULL << 20},      {"gib", 1ULL << 30},
    {"tib", 1ULL << 40},   {"kb", 1000ULL},          {"mb", 1000000ULL},
    {"gb", 1000000000ULL}, {"tb", 1000000000000ULL}, {"b", 1ULL},
};
constexpr std::string_view byte_units_text = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";

__extension__ using uint128 = unsigned __int128;

}  // namespace

namespace detail {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string strip_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) out += c;
  }
  return out;
}

bool parse_number(std::string_view s, double& out) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  for (char c : s) {
    if ((std::isdigit(static_cast<unsigned char>(c)) == 0) && c != '.') return false;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_count(std::string_view s, int& out) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::pair<std::string_view, std::string_view> split_unit(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) ++i;
  return {s.substr(0, i), s.substr(i)};
}

std::optional<std::uint64_t> try_parse_bytes(std::string_view text) {
  const std::string t = strip_spaces(text);
  const auto [num, unit_text] = split_unit(t);
  double check = 0;
  if (!parse_number(num, check)) return std::nullopt;
  std::uint64_t factor = 1;
  if (!unit_text.empty()) {
    const std::string u = lower(unit_text);
    bool found = false;
    for (const Unit& unit : byte_units) {
      if (u == unit.name) {
        factor = unit.factor;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  // The integer part exactly (sizes beyond 2^53 bytes must not be rounded), the fraction in double.
  const auto dot = num.find('.');
  const std::string_view whole = num.substr(0, dot);
  uint128 bytes = 0;
  for (char c : whole) {
    bytes = bytes * 10 + static_cast<unsigned>(c - '0');
    if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  }
  bytes *= factor;
  if (dot != std::string_view::npos) {
    double fraction = 0;
    const std::string frac_text = "0" + std::string(num.substr(dot));
    if (frac_text.size() > 2) {
      std::from_chars(frac_text.data(), frac_text.data() + frac_text.size(), fraction);
    }
    bytes += static_cast<uint128>(std::llround(fraction * static_cast<double>(factor)));
  }
  if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string format_number(double x) {
  return fmt::format("{}", x);
}

}  // namespace detail

using detail::format_number;
using detail::lower;
using detail::parse_number;
using detail::split_unit;
using detail::strip_spaces;
using detail::try_parse_bytes;

std::uint64_t parse_bytes(std::string_view text) {
  if (auto b = try_parse_bytes(text)) return *b;
  throw Error(ErrorKind::parse, fmt::format("'{}' is not a byte size (expected <number>[unit] with "
                                            "unit one of {}, e.g. 512MiB)",
                                            text, byte_units_text));
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes == 0) return "0B";
  static constexpr Unit binary[] = {
      {"TiB", 1ULL << 40}, {"GiB", 1ULL << 30}, {"MiB", 1ULL << 20}, {"KiB", 1ULL << 10}};
  static constexpr Unit decimal[] = {
      {"TB", 1000000000000ULL}, {"GB", 1000000000ULL}, {"MB", 1000000ULL}, {"KB", 1000ULL}};
  for (const Unit& u : binary) {
    if (bytes % u.factor == 0) return fmt::format("{}{}", bytes / u.factor, u.name);
  }
  for (const Unit& u : decimal) {
    if (bytes % u.factor == 0) return fmt::format("{}{}", bytes / u.factor, u.name);
  }
  return fmt::format("{}B", bytes);
}

std::string human_bytes(double bytes) {
  static constexpr std::string_view names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t k = 0;
  while (bytes >= 1024.0 && k + 1 < std::size(names)) {
    bytes /= 1024.0;
    ++k;
  }
  if (k == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.2f} {}", bytes, names[k]);
}

double parse_bandwidth(std::string_view text) {
  std::string t = strip_spaces(text);
  const std::string l = lower(t);
  if (l.size() >= 2 && l.substr(l.size() - 2) == "/s") t.resize(t.size() - 2);
  const auto [num, unit_text] = split_unit(t);
  double value = 0;
  auto bytes = try_parse_bytes(t);
  if (!bytes || !parse_number(num, value) || value <= 0) {
    throw Error(ErrorKind::parse,
                fmt::format("'{}' is not a bandwidth (expected a positive <number><unit>/s with "
                            "unit one of {}, e.g. 10GB/s)",
                            text, byte_units_text));
  }
  std::uint64_t factor = 1;
  const std::string u = lower(unit_text);
  for (const Unit& unit : byte_units) {
    if (u == unit.name) factor = unit.factor;
  }
  return value * static_cast<double>(factor);
}

std::string format_bandwidth(double bytes_per_second) {
  const double rounded = std::round(bytes_per_second);
  if (rounded == bytes_per_second && rounded < 1.8e19) {
    const auto b = static_cast<std::uint64_t>(rounded);
    // Bandwidths read best in decimal units (as vendors quote them).
    static constexpr Unit decimal[] = {
        {"TB", 1000000000000ULL}, {"GB", 1000000000ULL}, {"MB", 1000000ULL}, {"KB", 1000ULL}};
    for (const Unit& u : decimal) {
      if (b % u.factor == 0 && b != 0) return fmt::format("{}{}/s", b / u.factor, u.name);
    }
    return format_bytes(b) + "/s";
  }
  return format_number(bytes_per_second) + "B/s";
}

}  // namespace hit
