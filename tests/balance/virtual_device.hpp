#pragma once
// A simulated device for benchmark and dynamic-loop tests: its kernel reports a time computed from
// the size (no waiting), optionally with deterministic noise, periodic timing spikes and a memory
// limit. Deterministic, so tests of convergence do not depend on the machine's load.

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hit/balance/benchmark.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/model.hpp"

namespace hit::balance::test {

struct VirtualDevice {
  std::function<double(std::int64_t)> time;  // seconds for d units
  std::int64_t memory = fpm::unlimited;      // setup of more units is an out-of-memory error
  int spike_every = 0;                       // every k-th run is `spike` times slower (0: never)
  double spike = 10;
  double noise = 0;  // relative amplitude of a deterministic ±noise

  // What happened, for assertions.
  std::int64_t d = 0;
  int setups = 0, runs = 0, teardowns = 0;
};

// Times of the test devices: speed s (relative), a start-up cost, and a speed that decays with
// size (so the models must be functional, not constant).
inline double device_time(double speed, std::int64_t d) {
  const double x = static_cast<double>(d);
  return 1e-3 + x / (speed * 2e4) * (1 + x / 3e4);
}

inline BenchmarkKernel kernel_of(const std::shared_ptr<VirtualDevice>& dev,
                                 std::string name = "virtual") {
  BenchmarkKernel k;
  k.name = std::move(name);
  k.setup = [dev](std::int64_t d) {
    if (d > dev->memory) {
      throw Error(ErrorKind::out_of_memory, "virtual device: " + std::to_string(d) +
                                                " units exceed its memory of " +
                                                std::to_string(dev->memory));
    }
    dev->d = d;
    ++dev->setups;
  };
  k.timed_run = [dev] {
    ++dev->runs;
    double t = dev->time(dev->d);
    if (dev->noise > 0) t *= 1 + dev->noise * std::sin(1.7 * dev->runs);
    if (dev->spike_every > 0 && dev->runs % dev->spike_every == 0) t *= dev->spike;
    return t;
  };
  k.teardown = [dev] { ++dev->teardowns; };
  return k;
}

inline std::shared_ptr<VirtualDevice> device_with_speed(double speed) {
  auto dev = std::make_shared<VirtualDevice>();
  dev->time = [speed](std::int64_t d) { return device_time(speed, d); };
  return dev;
}

// A dense piecewise model of a test device's true time, for computing the true optimum.
inline fpm::Model true_model(double speed, std::int64_t n, std::int64_t capacity = fpm::unlimited) {
  std::vector<fpm::Point> pts;
  for (std::int64_t d = 1; d <= std::min(n, capacity); d += std::max<std::int64_t>(1, n / 2000)) {
    pts.push_back(fpm::Point{d, device_time(speed, d), 1, 0});
  }
  return fpm::Model(pts, fpm::ModelKind::piecewise, capacity);
}

}  // namespace hit::balance::test
