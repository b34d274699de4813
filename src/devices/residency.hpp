#pragma once
// The residency policy of a device shared by several ranks (internal to the devices layer; the
// policy is described in docs/devices.md, "Several ranks on one device").
//
// Every rank keeps its resident tiles on the device while all the ranks' copies fit. When a launch
// cannot find room, its rank first gives up its own idle copies (least recently used first), then
// asks the others: it gives up every copy it holds, adds what the launch needs to the device page's
// wanted bytes, releases the device lock and waits until that much is free. A rank gives up idle
// copies while others want room at two moments only, both its own: when it leaves a launch, and
// while it waits in the library's communication (hit::wait_all). A copy newer on the device is
// written back to its host tile first; its owner stages it again at its next launch. Nobody waits
// while holding the device lock or device memory it could give, so nothing can deadlock through
// the device; a rank that never reaches a launch or a library wait again (blocked in a plain MPI
// call of the program) is waited for at most `HIT_DEVICE_YIELD_TIMEOUT` seconds.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/staging.hpp"
#include "hit/launch.hpp"

namespace hit::detail {

// The resident copies of this process (an Environment extension).
class ResidentRegistry {
 public:
  explicit ResidentRegistry(Environment& env);
  ~ResidentRegistry();
  ResidentRegistry(const ResidentRegistry&) = delete;
  ResidentRegistry& operator=(const ResidentRegistry&) = delete;

  void add(ResidentState& s);
  void remove(ResidentState& s) noexcept;
  // Marks `s` as used by the launch starting now.
  void touch(ResidentState& s) noexcept { s.last_use = ++clock_; }

  // Bytes of device copies held, and of those no launch uses now.
  std::uint64_t held_bytes() const noexcept;
  std::uint64_t idle_bytes() const noexcept;
  // Under the device lock: gives up idle copies on `share`'s device, least recently used first,
  // until `free_goal` bytes are free there or none is left. Returns the bytes given up.
  std::uint64_t evict_idle(DeviceShare& share, std::uint64_t free_goal);
  // Under the device lock: gives up every copy on `share`'s device, those in use included.
  void evict_all(DeviceShare& share);
  // Tells the other ranks on `share`'s device what this process holds.
  void publish(DeviceShare& share) const noexcept;
  // Gives up idle copies when other ranks wait for room (not under the device lock; takes it).
  void yield_if_wanted();

 private:
  Environment& env_;
  DeviceShare& share_;  // of this rank's device (kept when a test rebinds the device)
  std::vector<ResidentState*> states_;
  std::uint64_t clock_ = 0;
  bool hooked_ = false;
};

// Gives up the device copy of `s` (under the device lock): written back first when the device
// side is newer, then freed; the next launch stages the tile again. Nothing when it holds none.
void evict(ResidentState& s);

// The device memory of one launch's resident arguments, for the duration of the launch: marks
// them in use, stages evicted ones again (place()), and finds room when the launch ran out of
// memory (make_room()), waiting for the other ranks where it must.
class LaunchResidency {
 public:
  // `args`: the launch's arguments (those without a device copy of their own are skipped).
  LaunchResidency(Environment& env, Device& dev, DeviceShare& share,
                  const std::vector<LaunchArg>& args);
  ~LaunchResidency();
  LaunchResidency(const LaunchResidency&) = delete;
  LaunchResidency& operator=(const LaunchResidency&) = delete;

  // Allocates the device copies of arguments that have none (they are sent by the launch).
  void place(AllocationTally& tally);
  // After an out-of-memory error of this attempt (under the lock): makes room for a retry, or
  // throws the out-of-memory error that says what would help. `kernel` names the launch. True
  // when it gave the lock to the others meanwhile (the launch holds it again from now on).
  // `out_of_core`: the launch's partition is outOfCore (its advice then leaves that out).
  bool make_room(DeviceLockGuard& lock, const AllocationTally& tally, const std::string& kernel,
                 bool out_of_core);
  // After the launch (under the lock): gives up idle copies when other ranks wait for room.
  void yield_if_wanted();

 private:
  std::uint64_t resident_bytes() const noexcept;  // the arguments' copies, placed or not
  std::uint64_t placed_bytes() const noexcept;    // of those, what the device holds now
  Environment& env_;
  Device& dev_;
  DeviceShare& share_;
  // A launch has a few arguments: no allocation for them on every launch.
  static constexpr std::size_t inline_args = 8;
  std::array<ResidentState*, inline_args> inline_{};
  std::vector<ResidentState*> more_;
  std::size_t count_ = 0;
  ResidentState* const* begin() const noexcept {
    return count_ <= inline_args ? inline_.data() : more_.data();
  }
  ResidentState* const* end() const noexcept { return begin() + count_; }
  ResidentRegistry& registry();
  std::uint64_t room_for_ = 0;  // the need a retry was last promised room for
};

// The layout of a resident tile's device copy.
DeviceLayout resident_layout(const ResidentState& s);

// Bytes free on the device for this run (its capacity less what all ranks on it hold).
std::uint64_t free_bytes(const Device& dev);

}  // namespace hit::detail
