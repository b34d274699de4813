#pragma once
// Byte counts and bandwidths as text: what the `--devices` grammar writes (`mem=512MiB`,
// `bw=10GB/s`), what settings such as HIT_HOST_MEMORY take, and how messages show sizes.

#include <cstdint>
#include <string>
#include <string_view>

namespace hit {

// A byte count: `<number>[unit]`, the number may have a fraction, the unit is one of B, KB, MB, GB,
// TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), letters in any case; no unit = B.
// Throws Error(parse) naming the text and the units allowed; zero is allowed (callers that need a
// positive size check it).
[[nodiscard]] std::uint64_t parse_bytes(std::string_view text);
// Exact, short text for a byte count: the largest binary unit that divides it ("64MiB"), else the
// largest decimal one ("10GB"), else bytes ("1234B"). parse_bytes(format_bytes(b)) == b.
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
// Human text, rounded: "1.50 GiB".
[[nodiscard]] std::string human_bytes(double bytes);

// A transfer bandwidth in bytes per second: a byte count followed by "/s" ("10GB/s", "512MiB/s");
// "/s" may be left out. Must be positive. Throws Error(parse).
[[nodiscard]] double parse_bandwidth(std::string_view text);
[[nodiscard]] std::string format_bandwidth(double bytes_per_second);

}  // namespace hit
