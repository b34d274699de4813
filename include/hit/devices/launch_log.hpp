#pragma once
// LaunchRecord, what one hit::launch did (times, bytes, copies), and LaunchLog, the launches of a
// run (per Environment), as the FPM layer, the balancers and the reports read them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hit/shape.hpp"

namespace hit {

class Environment;

// One launch, as the FPM layer and reports use it. Times in seconds; lock times on the machine's
// monotonic clock (comparable between the processes of one machine).
struct LaunchRecord {
  std::string kernel;
  std::string device;              // label of the device
  std::string partition;           // spec of the partition
  index_t elements = 0;            // indices of the partition's domain
  double seconds = 0;              // the whole launch, lock wait excluded
  double wait_seconds = 0;         // waiting for the device lock
  double kernel_seconds = 0;       // execution on the device (with an emulated slowdown)
  double host_kernel_seconds = 0;  // on emu: the real cpu body's time (kernel_seconds / slowdown)
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t copies_in = 0;
  std::uint64_t copies_out = 0;
  std::uint64_t problem_bytes = 0;  // device memory the launch used
  std::size_t chunks = 0;           // out-of-core chunks (0: not out of core)
  double lock_acquired = 0;
  double lock_released = 0;
  // The kernel was still queued on the device when the launch returned (Completion::queued):
  // `seconds` is the time to queue it, and kernel_seconds is 0; its run shows in the device's
  // counters once the host has waited for it.
  bool queued = false;
};

// The launches of a run (per Environment). Keeps the most recent records (at most `capacity()`,
// at least half of it once that many were made) and totals per kernel over all of them.
class LaunchLog {
 public:
  explicit LaunchLog(Environment&) {}
  struct Totals {
    std::uint64_t launches = 0;
    double seconds = 0;
    double kernel_seconds = 0;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
  };
  void add(LaunchRecord record);
  const std::vector<LaunchRecord>& records() const noexcept { return records_; }
  const LaunchRecord& last() const;
  Totals totals(const std::string& kernel) const;
  const std::map<std::string, Totals>& all_totals() const noexcept { return totals_; }
  void clear();
  std::size_t capacity() const noexcept { return capacity_; }
  void set_capacity(std::size_t n) { capacity_ = n; }

 private:
  std::vector<LaunchRecord> records_;
  std::map<std::string, Totals> totals_;
  std::size_t capacity_ = 10000;
};

LaunchLog& launch_log(Environment& env);
LaunchLog& launch_log();  // Environment::current()

}  // namespace hit
