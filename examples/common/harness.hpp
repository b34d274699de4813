#pragma once
// The harness of the example programs: the flags they share, timed repetitions with per-rank
// compute, communication and host<->device traffic, the --check verdict, and one report (a human
// summary, or with --json one JSON object on one line). Header-only: examples/common is not a
// program. The algorithms themselves live in each example's own file.

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "app.hpp"
#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/file.hpp"
#include "hit/core/program_trace.hpp"
#include "hit/core/setting.hpp"
#include "hit/core/timer.hpp"
#include "hit/core/version.hpp"
#include "hit/device.hpp"
#include "hit/launch.hpp"
#include "hit/layout.hpp"
#include "hit/partition.hpp"
#include "hit/program.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::app {

// `from_environment` (a layout_setting() or partition_setting()), unless the program's own option
// `flag` gave `given`: the command line wins over HIT_* variables, which win over the code. The
// advisor's candidate (a dry run's setting) wins over all: it is what the dry run prices.
inline Setting given_or(Setting from_environment, const std::string& given,
                        const std::string& flag) {
  if (given.empty() || from_environment.source == ProgramTrace::source) return from_environment;
  from_environment.value = given;
  from_environment.source = flag;
  return from_environment;
}

// Error(invalid_argument) on every process unless every block of `lay` is contiguous (unit
// steps on every axis): the tiles of a tiled factorisation (`program`) are blocks' sub-boxes, and
// a cyclic layout's strided blocks are not tiles.
inline void require_contiguous_blocks(const Layout& lay, const std::string& program) {
  for (int p = 0; p < lay.topology().grid_size(); ++p) {
    for (const Shape& b : lay.blocks(p)) {
      for (int k = 0; k < b.rank(); ++k) {
        if (b[k].stride() == 1) continue;
        throw Error(ErrorKind::invalid_argument,
                    program + " needs a layout of contiguous blocks; '" + lay.spec() +
                        "' gives rank " + std::to_string(p) + " the strided block " + b.str());
      }
    }
  }
}

// The flags every example has (the command line hit-cannon and hit-jacobi share).
struct RunOptions {
  std::string type = "double";
  std::string devices;
  Setting partition = "single";  // the program's default, resolved by apply()
  std::string partition_given;   // --partition, when given
  int reps = 3;
  int warmup = 1;
  bool check = false;
  bool json = false;
  std::string svg;
  std::string trace;  // --trace, else HIT_TRACE (the EventTrace reads it)
  std::uint64_t seed = 1;

  // `partition_label`: the label of the partition override (HIT_PARTITION_<LABEL>).
  void add_to(CLI::App& cli, const std::string& check_help, const std::string& svg_help,
              const std::string& partition_label) {
    cli.add_option("--type", type, "element type")->check(CLI::IsMember({"double", "float"}));
    cli.add_option("--devices", devices, "device binding of the ranks (HIT_DEVICES)");
    cli.add_option("--partition", partition_given,
                   "partition spec of the local work on each device (else HIT_PARTITION_" +
                       partition_label + ", else " + partition.code + ")");
    cli.add_option("--reps", reps, "timed repetitions (the median is reported)")
        ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
    cli.add_option("--warmup", warmup, "untimed repetitions first")
        ->check(hit::cli::count(0, std::numeric_limits<int>::max()));
    cli.add_flag("--check", check, check_help + " (exit 1 when it fails)");
    cli.add_flag("--json", json, "print one JSON object on stdout");
    cli.add_option("--svg", svg, svg_help)->check(hit::cli::file_name());
    // Checked on the text: CLI11 would take "-1" as 2^64 - 1.
    cli.add_option("--seed", seed, "seed of the generated inputs")->check(hit::cli::count(0));
    cli.add_option("--trace", trace,
                   "write the run's timeline to this file, trace-event JSON for Perfetto or "
                   "chrome://tracing (else HIT_TRACE)")
        ->check(hit::cli::file_name());
  }
  // At the program's start: the devices into the run's configuration (the library binds them
  // when the physical topology is first asked for), and the partition of `label` resolved
  // (--partition, else HIT_PARTITION_<LABEL>, else the program's default).
  void apply(Environment& env, const std::string& label) {
    if (!devices.empty()) env.config().set("devices", devices);
    EventTrace& events = event_trace(env);
    if (!trace.empty()) events.enable(trace);
    collectively(env.comm(), [&] {
      if (env.rank() == 0 && events.enabled()) check_output_path(events.path(), "trace (--trace)");
    });
    partition =
        given_or(partition_setting(env, label, partition.code), partition_given, "--partition");
  }
};

// What one rank did during the timed repetitions, gathered on rank 0.
// The rate a program reports: "gflops" or "mcells_per_s", and its value.
struct Throughput {
  std::string name;
  double value = 0;
};

// What a program reports; the harness adds the fields every program has (docs/results.md).
struct Report {
  nlohmann::json fields;  // the app's sizes and specs
  std::string headline;   // the summary's first line
  Throughput throughput;
  std::string work_unit;           // what a rank's `work` counts: "flops", "cells", "pixels"
  std::vector<std::string> lines;  // the app's own summary lines after the headline
  CheckResult check;
};

// Trivially copyable: gathered as it is (hit::allgather).
struct RankStats {
  double compute_s = 0;
  double comm_s = 0;
  double work = 0;  // what the rank was given (flops, cells: the app says which)
  double h2d_bytes = 0;
  double d2h_bytes = 0;
  // Resident copies this rank gave up for other ranks on its device, and their bytes.
  double evictions = 0;
  double evicted_bytes = 0;
  double launches = 0;      // kernel launches of the whole run (warm-up included)
  double device_waits = 0;  // times the host waited for its device in the timed repetitions
};

// Inside a repetition: adds the seconds spent computing or communicating. Kernels of queued
// launches (hit::Completion::queued) compute while the host goes on: the time the host then waits
// for them, in a communication step that needs the device's data or at the end, is compute.
class Clock {
 public:
  explicit Clock(Device& dev) : dev_(dev) {}

  // Times a communication step.
  template <class F>
  void comm(F&& f) {
    if (!queued_) {
      Timer t;
      f();
      comm_s_ += t.seconds();
      return;
    }
    const DeviceCounters before = dev_.counters();
    Timer t;
    f();
    const double seconds = t.seconds();
    const DeviceCounters after = dev_.counters();
    const double waited = after.host_wait_seconds - before.host_wait_seconds;
    compute_s_ += waited;
    comm_s_ += seconds - waited;
    if (after.host_waits > before.host_waits) queued_ = false;
  }
  // A launch's own time (waiting for a shared device's lock excluded).
  void compute(const LaunchRecord& launched) {
    compute_s_ += launched.seconds;
    queued_ = queued_ || launched.queued;
  }
  // Waits for the kernels still queued on the device, as compute.
  void wait_for_device() {
    if (!queued_) return;
    Timer t;
    dev_.synchronize();
    compute_s_ += t.seconds();
    queued_ = false;
  }
  // Seconds of compute measured otherwise (a run of work packages: its launches together).
  void compute_seconds_add(double seconds) { compute_s_ += seconds; }
  double compute_seconds() const noexcept { return compute_s_; }
  double comm_seconds() const noexcept { return comm_s_; }

 private:
  Device& dev_;
  double compute_s_ = 0;
  double comm_s_ = 0;
  bool queued_ = false;  // kernels may still be queued on the device
};

class Harness {
 public:
  Harness(Environment& env, const RunOptions& options) : env_(env), options_(options) {}

  // Runs `warmup` untimed, then `reps` timed repetitions of `body(Clock&)`, each after an untimed
  // `prepare(rep)`. A repetition starts at a barrier and lasts until the slowest rank is done.
  // The device's transfer counters are read around the timed repetitions.
  template <class Prepare, class Body>
  void repeat(Prepare&& prepare, Body&& body) {
    Device& dev = device(env_);
    const int reps = options_.reps;
    for (int rep = 0; rep < options_.warmup + reps; ++rep) {
      prepare(rep);
      const DeviceCounters before = dev.counters();
      Clock clock(dev);
      barrier(env_.comm());
      const double start = MPI_Wtime();
      body(clock);
      clock.wait_for_device();
      barrier(env_.comm());
      const double slowest = allreduce(MPI_Wtime() - start, ReduceOp::max);
      if (rep < options_.warmup) continue;
      const DeviceCounters after = dev.counters();
      times_.push_back(slowest);
      mine_.compute_s += clock.compute_seconds() / reps;
      mine_.comm_s += clock.comm_seconds() / reps;
      mine_.h2d_bytes += static_cast<double>(after.bytes_in - before.bytes_in);
      mine_.d2h_bytes += static_cast<double>(after.bytes_out - before.bytes_out);
      mine_.evictions += static_cast<double>(after.evictions - before.evictions);
      mine_.evicted_bytes += static_cast<double>(after.evicted_bytes - before.evicted_bytes);
      mine_.device_waits += static_cast<double>(after.host_waits - before.host_waits);
    }
  }

  // The work this rank was given, in the app's unit.
  void set_work(double work) { mine_.work = work; }
  double median_time() const { return median(times_); }

  // Prints the report on rank 0: the app's fields joined with the common ones. Collective.
  // Returns the exit status.
  int report(Report report) {
    nlohmann::json& fields = report.fields;
    const std::string& headline = report.headline;
    const Throughput& throughput = report.throughput;
    const std::string& work_unit = report.work_unit;
    const std::vector<std::string>& lines = report.lines;
    const CheckResult& check = report.check;
    for (const auto& [kernel, totals] : launch_log(env_).all_totals()) {
      mine_.launches += static_cast<double>(totals.launches);
    }
    const auto all = allgather(mine_, env_.comm());
    const auto labels = gather_labels(device(env_).label(), env_.comm());
    // Times measured with more processes than cores are not a dedicated machine's: say so.
    const std::vector<std::string> warnings = PhysicalTopology::of(env_).oversubscribed_hosts();
    if (env_.rank() == 0) {
      const double t = median_time();
      const double imb = imbalance(all);
      fields["schema"] = "hitmap.result/1";
      fields["version"] = std::string(version());
      fields["host"] = PhysicalTopology::of(env_).my_node().host.hostname;
      fields["ranks"] = env_.size();
      fields["devices"] = labels;
      fields["type"] = options_.type;
      fields["reps"] = options_.reps;
      fields["time_s"] = t;
      fields["time_min_s"] = *std::min_element(times_.begin(), times_.end());
      fields["time_max_s"] = *std::max_element(times_.begin(), times_.end());
      fields[throughput.name] = throughput.value;
      fields["check"] = check.json();
      fields["per_rank"] = per_rank_json(all, work_unit);
      fields["imbalance"] = imb;
      fields["warnings"] = warnings;
      if (options_.json) {
        print_json(fields);
      } else {
        std::printf("%s\n", headline.c_str());
        for (const std::string& l : lines) std::printf("  %s\n", l.c_str());
        std::printf("  time %.4f s (median of %d, min %.4f, max %.4f), %.2f %s, imbalance %.3f\n",
                    t, options_.reps, fields["time_min_s"].get<double>(),
                    fields["time_max_s"].get<double>(), throughput.value,
                    throughput.name == "gflops" ? "GFLOP/s" : "Mcells/s", imb);
        for (const std::size_t r : ranks_shown(all)) {
          std::printf(
              "  rank %zu (%s): compute %.4f s, comm %.4f s, %.0f %s, h2d %.0f B, d2h %.0f B, "
              "evictions %.0f (%.0f B)\n",
              r, labels[r].c_str(), all[r].compute_s, all[r].comm_s, all[r].work, work_unit.c_str(),
              all[r].h2d_bytes, all[r].d2h_bytes, all[r].evictions, all[r].evicted_bytes);
        }
        if (all.size() > max_rank_lines) {
          std::printf(
              "  (%zu ranks: the first %zu and the slowest shown; --json lists every rank)\n",
              all.size(), max_rank_lines - 2);
        }
        for (const std::string& w : warnings) std::printf("  warning: %s\n", w.c_str());
        if (check.ran) std::printf("  check: %s\n", check.summary.c_str());
      }
    }
    event_trace(env_).write(env_.comm(),
                            "rank " + std::to_string(env_.rank()) + ": " + device(env_).label());
    return (check.ran && !check.passed) ? exit_check_failed : exit_ok;
  }

 private:
  // A summary stays readable at any process count: at most this many rank lines.
  static constexpr std::size_t max_rank_lines = 10;

  // All ranks, or the first max_rank_lines - 2 and the slowest in compute and in communication.
  static std::vector<std::size_t> ranks_shown(const std::vector<RankStats>& all) {
    std::vector<std::size_t> out;
    if (all.size() <= max_rank_lines) {
      for (std::size_t r = 0; r < all.size(); ++r) out.push_back(r);
      return out;
    }
    for (std::size_t r = 0; r < max_rank_lines - 2; ++r) out.push_back(r);
    const auto slowest = [&](auto seconds) {
      return static_cast<std::size_t>(std::max_element(all.begin(), all.end(),
                                                       [&](const RankStats& x, const RankStats& y) {
                                                         return seconds(x) < seconds(y);
                                                       }) -
                                      all.begin());
    };
    for (const std::size_t r : {slowest([](const RankStats& x) { return x.compute_s; }),
                                slowest([](const RankStats& x) { return x.comm_s; })}) {
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
    return out;
  }

  // max / mean of per-rank compute time over the ranks that were given work.
  static double imbalance(const std::vector<RankStats>& stats) {
    double sum = 0;
    double max = 0;
    int n = 0;
    for (const auto& s : stats) {
      if (s.work <= 0) continue;
      sum += s.compute_s;
      max = std::max(max, s.compute_s);
      ++n;
    }
    return (n == 0 || sum <= 0) ? 1.0 : max / (sum / n);
  }

  static nlohmann::json per_rank_json(const std::vector<RankStats>& stats,
                                      const std::string& work_unit) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t r = 0; r < stats.size(); ++r) {
      out.push_back({{"rank", r},
                     {"compute_s", stats[r].compute_s},
                     {"comm_s", stats[r].comm_s},
                     {"work", stats[r].work},
                     {"work_unit", work_unit},
                     {"h2d_bytes", static_cast<std::uint64_t>(stats[r].h2d_bytes)},
                     {"d2h_bytes", static_cast<std::uint64_t>(stats[r].d2h_bytes)},
                     {"evictions", static_cast<std::uint64_t>(stats[r].evictions)},
                     {"evicted_bytes", static_cast<std::uint64_t>(stats[r].evicted_bytes)},
                     {"launches", static_cast<std::uint64_t>(stats[r].launches)},
                     {"device_waits", static_cast<std::uint64_t>(stats[r].device_waits)}});
    }
    return out;
  }

  Environment& env_;
  const RunOptions& options_;
  std::vector<double> times_;
  RankStats mine_;
};

}  // namespace hit::app
