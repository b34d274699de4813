// The runtime's device copies stay within the room the tile directory gave them: a copy made
// while another worker is still freeing the copies dropped for it waits for those frees, so that
// the process never holds more than its directory's capacity (beside processes sharing the
// device, more would be another process's memory).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "devices/exec_context.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/runtime/device_tiles.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

using hit::runtime::DeviceTiles;
using hit::runtime::HostRows;
using hit::runtime::Transfer;
using hit::runtime::TransferKind;

constexpr std::size_t tile_bytes = 64 * 1024;

class DeviceTilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hit::Environment& env = hit::Environment::current();
    original_ = hit::PhysicalTopology::of(env).mine().device;
    // Room for three tiles on the device; the directory of the test gives its tiles two.
    device_ = &hit::rebind_device(env, hit::parse_device_spec("emu:0(mem=192KiB)", 1).front());
    for (auto& h : host_) h.assign(tile_bytes, 1);
  }
  void TearDown() override { hit::rebind_device(hit::Environment::current(), original_); }

  HostRows rows(int t) {
    auto& h = host_[static_cast<std::size_t>(t)];
    return HostRows{h.data(), 1, tile_bytes, tile_bytes};
  }

  hit::DeviceBinding original_;
  hit::Device* device_ = nullptr;
  std::vector<std::uint8_t> host_[4];
};

TEST_F(DeviceTilesTest, ACopyWaitsForTheFreesInFlightThatMadeItsRoom) {
  {
    DeviceTiles copies(*device_, 1);
    for (int t = 0; t < 4; ++t) copies.add(t, rows(t));
    copies.data(0);
    copies.data(1);
    ASSERT_EQ(device_->used(), 2 * tile_bytes);
    // A kernel runs: freeing device memory waits for it.
    device_->execute(
        [](const hit::ExecContext&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
        },
        0, 0);
    // The directory drops both copies: room for two others.
    copies.apply(Transfer{0, 1, 1, tile_bytes, TransferKind::drop});
    copies.apply(Transfer{1, 1, 1, tile_bytes, TransferKind::drop});
    // One worker's copy starts the frees (and waits in them for the kernel); another's comes
    // while they are in flight.
    std::thread first([&] { copies.data(2); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    copies.data(3);
    const std::uint64_t used_after_second = device_->used();
    first.join();
    EXPECT_LE(used_after_second, 2 * tile_bytes)
        << "the second copy was made before the dropped ones were freed";
    EXPECT_EQ(device_->used(), 2 * tile_bytes);
  }
  EXPECT_EQ(device_->used(), 0u);
}

TEST_F(DeviceTilesTest, AFullDeviceWithNothingDroppedIsOutOfMemory) {
  DeviceTiles copies(*device_, 1);
  for (int t = 0; t < 4; ++t) copies.add(t, rows(t));
  copies.data(0);
  copies.data(1);
  copies.data(2);
  try {
    copies.data(3);
    FAIL() << "a fourth tile fit in room for three";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
  }
  // A drop makes room: the next copy frees it first.
  copies.apply(Transfer{1, 1, 1, tile_bytes, TransferKind::drop});
  EXPECT_NE(copies.data(3), nullptr);
  EXPECT_EQ(device_->used(), 3 * tile_bytes);
}

}  // namespace
