#pragma once
// Staging between host tiles and device memory (internal to the devices layer): how a region is
// laid out on a device, the copies of regions in both directions (through bounce buffers where
// rows are strided), the device memory of one launch, and the device lock's guard.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "hit/device.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::detail {

// How a staged region is laid out in device memory: dense rows of `pitch` elements, each axis
// allocated to `alloc` elements (the region's extent, padded to the partition's blocks and the
// rows to the device's alignment). `region` has no address until placed (at()).
struct DeviceLayout {
  Region region;
  std::array<index_t, max_rank> alloc{};
  index_t pitch = 0;
  std::size_t bytes() const {
    if (region.rank() == 0) return 0;
    return static_cast<std::size_t>(region.steps[0] * alloc[0]) * region.element_size;
  }
  // The region laid out from `data` (the allocation's first byte).
  Region at(void* data) const { return region.placed_at(data); }
};

index_t round_up(index_t a, index_t m);

DeviceLayout device_layout(const Shape& region, std::size_t element_size, const Partition& p,
                           std::size_t row_alignment);

// A host bounce buffer: a dense copy of `region` (its data is `bytes`). A copy out through it
// is scattered into `target` (the elements of `sub`) once the device has synchronised.
struct PackedHost {
  std::vector<unsigned char> bytes;
  Region region;
  bool scatter = false;
  Region target;
  Shape sub;
};

using Packed = std::vector<std::unique_ptr<PackedHost>>;

// Element-wise copy of the elements of `sub` from one host region to another.
void copy_elements(const Region& to, const Region& from, const Shape& sub);

// Copies region `sub` (array indices inside both) between host and device, on `stream`.
// Unit-step rows on both sides go directly (2-D copies; one per region when the outer axes
// allow). Otherwise through a dense host buffer (kept in `packed`): strided host rows are packed
// before a copy in; a copy out brings the device box around `sub` into the buffer, and the
// elements of `sub` are scattered to the host after the device synchronises (finish()).
void copy_region(Device& dev, bool to_device, const Region& host, const Region& device,
                 const Shape& sub, int stream, Packed& packed);

// After the device synchronised: scatter what came back through bounce buffers.
void finish(const Packed& packed);

// What an OUT or INOUT tile brings back: where it meets the domain (the kernel computes the
// domain), or all of it when it is not indexed like the domain.
Shape copy_back_region(const Shape& own, const Shape& domain);

// What one launch allocates on its device, counted as it goes, so that a launch that ran out of
// memory knows how much it needs.
struct AllocationTally {
  std::uint64_t allocated = 0;  // by this attempt so far (freed again when it failed)
  std::uint64_t asked = 0;      // by the allocation that failed
  // An allocation was under way: an out-of-memory error came from the device, not from a
  // partition that found its own budget too small (which no room from others can cure).
  bool allocating = false;
};

// Device memory of one launch, freed when it goes (after the device has finished with it).
class Buffers {
 public:
  explicit Buffers(Device& dev, AllocationTally* tally = nullptr) : dev_(dev), tally_(tally) {}
  ~Buffers() {
    if (held_.empty()) return;
    try {
      dev_.synchronize();
    } catch (...) {
    }
    for (auto& [p, n] : held_) dev_.deallocate(p, n);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* get(std::size_t bytes) {
    if (tally_ != nullptr) {
      tally_->asked = bytes;
      tally_->allocating = true;
    }
    void* p = dev_.allocate(bytes);
    held_.emplace_back(p, bytes);
    if (tally_ != nullptr) {
      tally_->allocated += bytes;
      tally_->asked = 0;
      tally_->allocating = false;
    }
    return p;
  }
  std::uint64_t bytes() const {
    std::uint64_t n = 0;
    for (const auto& [p, b] : held_) n += b;
    return n;
  }

 private:
  Device& dev_;
  AllocationTally* tally_;
  std::vector<std::pair<void*, std::size_t>> held_;
};

// Waits for everything queued on the device (errors ignored: the caller is already failing or
// synchronises itself), so locals that queued work uses are destroyed after it ran.
class Drain {
 public:
  explicit Drain(Device& dev) : dev_(dev) {}
  ~Drain() {
    if (dismissed_) return;
    try {
      dev_.synchronize();
    } catch (...) {
    }
  }
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;
  // The queued work owns what it uses: nothing to wait for.
  void dismiss() noexcept { dismissed_ = true; }

 private:
  Device& dev_;
  bool dismissed_ = false;
};

// Holds the device lock of the ranks sharing a device (DeviceShare) for its lifetime.
class DeviceLockGuard {
 public:
  explicit DeviceLockGuard(DeviceShare& share) : share_(share) { share_.lock(); }
  ~DeviceLockGuard() { unlock(); }
  DeviceLockGuard(const DeviceLockGuard&) = delete;
  DeviceLockGuard& operator=(const DeviceLockGuard&) = delete;
  // Gives the device to the others for a while (a launch that waits for room), and takes it back.
  void unlock() noexcept {
    if (held_) share_.unlock();
    held_ = false;
  }
  void lock() {
    if (!held_) share_.lock();
    held_ = true;
  }

 private:
  DeviceShare& share_;
  bool held_ = true;
};

}  // namespace hit::detail
