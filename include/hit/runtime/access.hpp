#pragma once
// What a task does to a tile: the vocabulary of the task runtime (docs/runtime.md).

#include <cstdint>

namespace hit::runtime {

// A tile of the runtime's arrays: its index in the TileDirectory (or any dense numbering the
// program chooses for a TaskGraph alone).
using TileId = std::int64_t;

// How a task uses a tile. A write without a read needs no copy of the old contents.
enum class Access : unsigned char { read = 1, write = 2, read_write = 3 };

constexpr bool reads(Access a) noexcept {
  return (static_cast<unsigned>(a) & 1U) != 0;
}
constexpr bool writes(Access a) noexcept {
  return (static_cast<unsigned>(a) & 2U) != 0;
}
// Both uses: a task listing one tile twice uses it as the union of the two.
constexpr Access combined(Access a, Access b) noexcept {
  return static_cast<Access>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

struct TileAccess {
  TileId tile = 0;
  Access mode = Access::read;
};

}  // namespace hit::runtime
