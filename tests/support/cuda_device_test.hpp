#pragma once
// A test fixture that binds the rank to CUDA GPU 0 for the test and gives its own device back
// after; the test is skipped (with the node's reason) where there is no GPU.

#include <gtest/gtest.h>

#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/topology/device_binding.hpp"
#include "hit/topology/physical_topology.hpp"

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hit::Environment& env = hit::Environment::current();
    original_ = hit::PhysicalTopology::of(env).mine().device;
    const auto& node = hit::PhysicalTopology::of(env).my_node();
    if (node.gpus.empty()) GTEST_SKIP() << "no CUDA GPU here: " << node.gpu_note;
    hit::DeviceBinding gpu;
    gpu.kind = hit::DeviceKind::cuda;
    gpu.index = 0;
    device_ = &hit::rebind_device(env, gpu);
  }
  void TearDown() override {
    if (device_ != nullptr) hit::rebind_device(hit::Environment::current(), original_);
  }
  hit::Device& dev() { return *device_; }

 private:
  hit::DeviceBinding original_;
  hit::Device* device_ = nullptr;
};
