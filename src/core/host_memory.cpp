#include "core/host_memory.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hit::detail {

void* allocate_host(std::size_t bytes, std::size_t alignment) noexcept {
  const bool huge = bytes >= huge_page_threshold;
  const std::size_t align = huge ? huge_page_bytes : alignment;
  // aligned_alloc wants a multiple of the alignment.
  const std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: where huge pages are off (or the kernel refuses), the memory is what it was.
  if (p != nullptr && huge) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace hit::detail
