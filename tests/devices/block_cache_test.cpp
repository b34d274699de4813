// The emulated device's host memory: freed blocks come back for the same size, the cache stays
// bounded by twice the largest live total, and the device's accounting ignores cached blocks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "devices/emu/block_cache.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

TEST(BlockCache, FreedBlockComesBackForTheSameSize) {
  hit::detail::BlockCache cache;
  void* a = cache.allocate(1000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  cache.deallocate(a, 1000);
  EXPECT_EQ(cache.cached_bytes(), 1024u);  // rounded up to 64
  void* b = cache.allocate(1000);
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  void* c = cache.allocate(1000);  // nothing cached: a new block
  EXPECT_NE(c, a);
  cache.deallocate(b, 1000);
  cache.deallocate(c, 1000);
  EXPECT_EQ(cache.cached_bytes(), 2048u);
  // The most recently freed block of a size comes first.
  EXPECT_EQ(cache.allocate(1000), c);
  cache.deallocate(c, 1000);
}

TEST(BlockCache, CachedBytesStayWithinTwiceTheLargestLiveTotal) {
  hit::detail::BlockCache cache;
  constexpr std::size_t kib = 1024;
  void* big = cache.allocate(64 * kib);
  cache.deallocate(big, 64 * kib);  // largest live total: 64 KiB
  // Ever-changing sizes (as in a dynamic partitioning loop) never hit the cache.
  for (std::size_t size = 1; size <= 40; ++size) {
    void* p = cache.allocate(size * kib);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, size * kib);
    cache.deallocate(p, size * kib);
    EXPECT_LE(cache.cached_bytes(), 2 * 64 * kib) << "after " << size << " KiB";
  }
  cache.release();
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(EmulatedDeviceMemory, ReusesFreedBlocksWithinItsCapacity) {
  hit::Environment& env = hit::Environment::current();
  const hit::DeviceBinding original = hit::PhysicalTopology::of(env).mine().device;
  hit::Device& dev = hit::rebind_device(env, hit::parse_device_spec("emu:0(mem=1MiB)", 1).front());
  constexpr std::size_t bytes = 768 * 1024;
  void* a = dev.allocate(bytes);
  EXPECT_EQ(dev.used(), bytes);
  std::memset(a, 7, bytes);
  dev.deallocate(a, bytes);
  EXPECT_EQ(dev.used(), 0u);  // a cached block is free device memory
  void* b = dev.allocate(bytes);
  EXPECT_EQ(b, a);
  EXPECT_THROW(dev.allocate(bytes), hit::Error);  // the capacity still holds
  dev.deallocate(b, bytes);
  void* c = dev.allocate(1 << 20);  // all of it, in another size
  EXPECT_EQ(dev.used(), 1u << 20);
  dev.deallocate(c, 1 << 20);
  hit::rebind_device(env, original);
}

}  // namespace
