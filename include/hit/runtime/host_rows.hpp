#pragma once
// A tile's copy in host memory, as the runtime moves it: rows of bytes, a pitch apart.

#include <cstddef>

namespace hit::runtime {

// `rows` rows of `row_bytes` bytes, `pitch_bytes` apart.
struct HostRows {
  void* data = nullptr;
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  std::size_t pitch_bytes = 0;
  std::size_t bytes() const noexcept { return rows * row_bytes; }
};

}  // namespace hit::runtime
