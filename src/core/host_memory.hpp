#pragma once
// Host memory for large arrays: aligned, and on Linux backed by transparent huge pages where the
// system allows them (madvise mode).
//
// A tile or an emulated device's memory is written soon after it is allocated, and with 4 KiB
// pages that first touch costs a page fault per 4 KiB: about 0.2 s for the 250 MB that a
// rebalanced Jacobi block (two copies, on the host and on its device) takes on this machine,
// most of what a move into new memory cost. With 2 MiB pages it is a fault per 2 MiB (0.08 s for
// the same). Small allocations keep ordinary pages: a huge page would waste most of itself.

#include <cstddef>

namespace hit::detail {

// Allocations of at least this many bytes are aligned to a huge page and advised to use them.
inline constexpr std::size_t huge_page_threshold = std::size_t{4} << 20;
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// `bytes` of host memory aligned to `alignment` (a power of two, at most a huge page), huge-page
// backed when large; nullptr when the host has none left. Free it with std::free.
[[nodiscard]] void* allocate_host(std::size_t bytes, std::size_t alignment) noexcept;

}  // namespace hit::detail
