// The parameters each device kind accepts, and their typed values (hit/topology/device_params.hpp).

#include "hit/topology/device_params.hpp"

#include <fmt/format.h>

#include <charconv>

#include "hit/core/error.hpp"
#include "topology/param_text.hpp"

namespace hit {

using detail::parse_count;

namespace {
// fail=K, stall=K: a launch count, 0 or more.
std::uint64_t parse_launch_count(const std::string& key, const std::string& value) {
  std::uint64_t k = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, k);
  if (value.empty() || ec != std::errc() || ptr != end) {
    throw Error(
        ErrorKind::parse,
        fmt::format("{}={} is not a launch count (K: the K-th execution, from 0, {})", key,
                    excerpt(value),
                    key == "fail" ? "and every later one fail" : "takes 100 times as long"));
  }
  return k;
}
std::uint64_t parse_fail_after(const std::string& value) {
  return parse_launch_count("fail", value);
}
}  // namespace

const std::vector<ParamInfo>& device_params(DeviceKind kind) {
  static const ParamInfo cores{"cores", "host cores the rank uses (threads, BLAS, pinning)", ""};
  static const std::vector<ParamInfo> cpu = {cores};
  static const std::vector<ParamInfo> cuda = {
      {"mem",
       "a budget of GPU memory for the ranks of this run on the GPU together, e.g. 4GiB (below "
       "the GPU's own: to try time-sharing, or to leave room for other programs)",
       "the GPU's memory"},
      cores};
  static const std::vector<ParamInfo> emu = {
      {"mem", "memory capacity of the emulated device, e.g. 512MiB", "unlimited"},
      {"bw", "copy bandwidth between host and device, e.g. 10GB/s", "memcpy speed"},
      {"slowdown", "F, or a profile F0;F1@S1;... over the bytes a launch stages", "1"},
      {"change",
       "the slowdown multiplied by F from a launch count or a time on: F@W or F1@W1;F2@W2;..., "
       "W a count (200) or seconds (30s)",
       "none"},
      {"clock",
       "what the slowdown scales: wall (the host kernel's elapsed time) or cpu (its thread's CPU "
       "time: steady when the host is shared; for single-threaded bodies)",
       "wall"},
      {"fail",
       "an injected failure: the K-th kernel execution (counted from 0) and every later one throw "
       "a device failure (work packages reroute around it)",
       "never"},
      {"stall",
       "an injected stall: the K-th kernel execution (counted from 0), and only it, takes 100 "
       "times as long (work packages give its package to another device as well)",
       "never"},
      cores,
  };
  switch (kind) {
    case DeviceKind::cpu:
      return cpu;
    case DeviceKind::cuda:
      return cuda;
    case DeviceKind::emu:
      return emu;
  }
  static const std::vector<ParamInfo> none;
  return none;
}

DeviceParams DeviceParams::of(const DeviceBinding& b) {
  DeviceParams p;
  for (const auto& [key, value] : b.params) {
    if (key == "mem") {
      p.mem = parse_bytes(value);
    } else if (key == "bw") {
      p.bw = parse_bandwidth(value);
    } else if (key == "slowdown") {
      p.slowdown = SlowdownProfile::parse(value);
    } else if (key == "change") {
      p.change = SpeedChange::parse(value);
    } else if (key == "cores") {
      int n = 0;
      if (!parse_count(value, n) || n <= 0) {
        throw Error(ErrorKind::parse,
                    fmt::format("cores={} is not a positive number of cores", value));
      }
      p.cores = n;
    } else if (key == "clock") {
      if (value != "wall" && value != "cpu") {
        throw Error(ErrorKind::parse, fmt::format("clock={} is not wall or cpu", value));
      }
      p.cpu_clock = value == "cpu";
    } else if (key == "fail") {
      p.fail_after = parse_fail_after(value);
    } else if (key == "stall") {
      p.stall_at = parse_launch_count("stall", value);
    }
  }
  return p;
}

namespace detail {

std::string canonical_param_value(const std::string& key, const std::string& value) {
  if (key == "mem") {
    const auto bytes = parse_bytes(value);
    if (bytes == 0) throw Error(ErrorKind::parse, "a capacity must be positive");
    return format_bytes(bytes);
  }
  if (key == "bw") return format_bandwidth(parse_bandwidth(value));
  if (key == "slowdown") return SlowdownProfile::parse(value).str();
  if (key == "change") return SpeedChange::parse(value).str();
  if (key == "cores") {
    int n = 0;
    if (!parse_count(value, n) || n <= 0) {
      throw Error(ErrorKind::parse, "expected a positive number of cores");
    }
    return std::to_string(n);
  }
  if (key == "clock" && value != "wall" && value != "cpu") {
    throw Error(ErrorKind::parse, "expected wall or cpu");
  }
  if (key == "fail") return std::to_string(parse_fail_after(value));
  if (key == "stall") return std::to_string(parse_launch_count("stall", value));
  return value;
}

}  // namespace detail

}  // namespace hit
