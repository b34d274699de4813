#pragma once
// Typed values of the device parameters of a binding (`mem=`, `bw=`, `slowdown=`, `cores=`); their
// units are hit/core/units.hpp's. The text forms are part of the `--devices` grammar (see
// device_binding.hpp and docs/devices.md).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/spec.hpp"
#include "hit/core/units.hpp"
#include "hit/topology/device_binding.hpp"

namespace hit {

// The slowdown of an emulated device as a step function of the problem size (the bytes a launch
// stages on the device): `F` (everywhere) or `F0;F1@S1;F2@S2…` (F0 below S1, F1 from S1 up to S2,
// …), with sizes as in parse_bytes, strictly increasing, and every factor >= 1 (an emulated device
// can only be slower than the host it runs on). A memory cliff is a step: `1;6@256MiB`.
class SlowdownProfile {
 public:
  struct Step {
    std::uint64_t from_bytes = 0;
    double factor = 1;
    friend bool operator==(const Step&, const Step&) = default;
  };

  SlowdownProfile() = default;  // factor 1 everywhere
  explicit SlowdownProfile(double factor);
  [[nodiscard]] static SlowdownProfile parse(
      std::string_view text);  // Error(parse) with the grammar

  [[nodiscard]] double at(std::uint64_t problem_bytes) const noexcept;
  const std::vector<Step>& steps() const noexcept { return steps_; }
  bool is_constant() const noexcept { return steps_.size() == 1; }
  std::string str() const;
  friend bool operator==(const SlowdownProfile&, const SlowdownProfile&) = default;

 private:
  std::vector<Step> steps_{Step{}};
};

// A change of an emulated device's speed during a run (another job arriving on a shared device,
// throttling): `F@W` or `F1@W1;F2@W2;…`. W is a launch count (`200`: from the 200th kernel
// execution of the device in this process on) or a time (`30s`, `1.5s`: seconds since this
// process created the device), all points of one kind, strictly increasing. From each point on,
// the slowdown is multiplied by its F (> 0; F < 1 speeds a slowed device up again, never beyond
// its host: the product stays >= 1). `4@100;1@300`: 4× slower from launch 100 to launch 299.
class SpeedChange {
 public:
  struct Step {
    double at = 0;  // launches or seconds
    double factor = 1;
    friend bool operator==(const Step&, const Step&) = default;
  };

  SpeedChange() = default;                                        // no change
  [[nodiscard]] static SpeedChange parse(std::string_view text);  // Error(parse) with the grammar

  bool empty() const noexcept { return steps_.empty(); }
  bool in_seconds() const noexcept { return seconds_; }
  const std::vector<Step>& steps() const noexcept { return steps_; }
  // The multiplier after `launches` executions (this one not counted), `seconds` after creation.
  [[nodiscard]] double factor(std::uint64_t launches, double seconds) const noexcept;
  std::string str() const;
  friend bool operator==(const SpeedChange&, const SpeedChange&) = default;

 private:
  std::vector<Step> steps_;
  bool seconds_ = false;
};

// The parameters of one binding, typed. Keys a kind does not accept never get here: the binding
// parser rejects them.
struct DeviceParams {
  std::optional<std::uint64_t> mem;  // emu: arena capacity; cuda: a budget for the run (bytes)
  std::optional<double> bw;          // emu: copy bandwidth in bytes/s (none: as fast as memcpy)
  SlowdownProfile slowdown;          // emu
  SpeedChange change;                // emu: the slowdown's multiplier over the run
  bool cpu_clock = false;            // emu: the slowdown scales the kernel thread's CPU time
  std::optional<int> cores;          // host cores the rank uses (threads, BLAS, pinning)
  // emu: an injected failure: the device's executions from this count on (0: the first) throw
  // Error(device_failed), and so do all later ones (a failed device stays failed).
  std::optional<std::uint64_t> fail_after;
  // emu: an injected stall: the device's execution of this count (0: the first), and only it,
  // takes 100 times as long (an unresponsive device; work packages give its package to another).
  std::optional<std::uint64_t> stall_at;

  [[nodiscard]] static DeviceParams of(const DeviceBinding& binding);
};

// The parameters each device kind accepts (for errors, --help and hit-info).
const std::vector<ParamInfo>& device_params(DeviceKind kind);

// Text for a whole binding list, runs of equal bindings compressed: "cuda:0*3,cuda:1".
[[nodiscard]] std::string format_device_spec(const std::vector<DeviceBinding>& bindings);

}  // namespace hit
