#pragma once
// The host memory behind an emulated device, with freed blocks kept for the next allocation of
// the same size.
//
// A GPU's memory stays mapped between launches; host memory from aligned_alloc/free does not:
// glibc hands large blocks back to the kernel at once, so every launch of an emulated device paid
// a page fault per 4 KiB it staged (about half of a gemm launch's time, and most of its variation
// from one repetition to the next). Launches repeat the same allocations, so an exact-size match
// is the common case. The cache is bounded: live plus cached bytes never exceed twice the largest
// live total seen (the oldest cached blocks go first), so a run whose sizes keep changing does not
// grow without limit.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/host_memory.hpp"

namespace hit::detail {

class BlockCache {
 public:
  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache() { release(); }

  // `bytes` (rounded up to 64) of 64-byte aligned memory (huge pages when large,
  // allocate_host): a cached block of that size, or a new
  // one; nullptr when the host has no memory left.
  void* allocate(std::size_t bytes) {
    const std::size_t size = rounded(bytes);
    const std::lock_guard lock(mutex_);
    // The most recently freed block of the size: the one most likely still in the caches.
    for (auto it = cached_.rbegin(); it != cached_.rend(); ++it) {
      if (it->bytes == size) {
        void* p = it->data;
        cached_.erase(std::next(it).base());
        cached_bytes_ -= size;
        add_live(size);
        return p;
      }
    }
    const std::size_t limit = 2 * std::max(high_water_, live_ + size);
    while (!cached_.empty() && live_ + cached_bytes_ + size > limit) evict_oldest();
    void* p = allocate_host(size, 64);
    if (p == nullptr && !cached_.empty()) {
      while (!cached_.empty()) evict_oldest();
      p = allocate_host(size, 64);
    }
    if (p != nullptr) add_live(size);
    return p;
  }

  // Takes back a block from allocate(bytes); the caller guarantees no work still uses it.
  void deallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    const std::size_t size = rounded(bytes);
    const std::lock_guard lock(mutex_);
    live_ -= size;
    try {
      cached_.push_back(Block{p, size});
      cached_bytes_ += size;
    } catch (...) {
      std::free(p);  // no room to remember it: give it back
    }
  }

  // Frees every cached block (live ones stay with their owners).
  void release() noexcept {
    const std::lock_guard lock(mutex_);
    while (!cached_.empty()) evict_oldest();
  }

  std::size_t cached_bytes() const noexcept {
    const std::lock_guard lock(mutex_);
    return cached_bytes_;
  }

 private:
  struct Block {
    void* data;
    std::size_t bytes;
  };

  static std::size_t rounded(std::size_t bytes) {
    return (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  }

  void add_live(std::size_t size) {
    live_ += size;
    high_water_ = std::max(high_water_, live_);
  }

  void evict_oldest() noexcept {
    std::free(cached_.front().data);
    cached_bytes_ -= cached_.front().bytes;
    cached_.erase(cached_.begin());
  }

  mutable std::mutex mutex_;
  std::vector<Block> cached_;  // oldest first
  std::size_t cached_bytes_ = 0;
  std::size_t live_ = 0;
  std::size_t high_water_ = 0;
};

}  // namespace hit::detail
