#pragma once
// Running a tiled factorisation's tasks (a runtime::ProcessFlow) on this process's device, as
// hit-cholesky --runtime and hit-qr do (docs/runtime.md). On host cores: one worker thread per
// core, one BLAS thread each. On an accelerator (emu, cuda): the device and the process's other
// cores, each task placed when it is ready where it would finish first, by the seconds per flop
// each place measured for the task's kind of kernel; on an accelerator with one core, every task
// on the device, each tile copied in once and back once (the tile directory keeps them there
// between tasks). Header-only: examples/common is not a program.

#include <cblas.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/file.hpp"
#include "hit/core/timer.hpp"
#include "hit/core/units.hpp"
#include "hit/device.hpp"
#include "hit/runtime/device_tiles.hpp"
#include "hit/runtime/executor.hpp"
#include "hit/runtime/process_flow.hpp"
#include "hit/runtime/tile_directory.hpp"
#include "hit/runtime/timeline_svg.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::app {

// OpenBLAS at one thread while the workers run (each worker is a core), as it was after.
class OneBlasThread {
 public:
  OneBlasThread() : before_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~OneBlasThread() { openblas_set_num_threads(before_); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int before_;
};

// What a program tells the runner of its tasks (local ids of the flow's graph, own tasks only).
struct TileTaskBodies {
  std::function<void(runtime::TaskId)> host;  // on the host copies of its tiles
  std::function<void(runtime::TaskId, runtime::DeviceTiles&)> device;  // on the device's copies
  std::function<int(runtime::TaskId)> kind;  // its kind of kernel, 0 .. kinds - 1
};

class TileTaskRunner {
 public:
  // `kinds` kinds of kernel, each timed apart on the host and on the device (env's); `context`
  // begins the errors (the program, or the option that asked for tasks).
  TileTaskRunner(Environment& env, int kinds, std::string context)
      : device_(hit::device(env)),
        context_(std::move(context)),
        sharers_(PhysicalTopology::of(env).mine().sharing),
        host_workers_(device_.kind() == DeviceKind::cpu ? std::max(device_.cores(), 1)
                                                        : std::max(device_.cores() - 1, 0)),
        workers_(host_workers_ + (device_.kind() == DeviceKind::cpu ? 0 : 1)),
        rates_(static_cast<std::size_t>(kinds)) {}

  int workers() const noexcept { return workers_; }
  int host_workers() const noexcept { return host_workers_; }
  Device& device() const noexcept { return device_; }

  // The bytes of the tiles task t uses (on the device together while it runs).
  static std::uint64_t task_bytes(const runtime::ProcessFlow& flow, runtime::TaskId t) {
    std::uint64_t bytes = 0;
    for (const runtime::TileAccess& a : flow.graph().accesses(t)) {
      bytes += flow.host_rows(a.tile).bytes();
    }
    return bytes;
  }

  // The kernel's body for a device kind (an emulated device runs the cpu body), or Error(device)
  // when it has none.
  template <class K>
  const typename K::Body& body_of(const K& kernel, DeviceKind kind) const {
    const typename K::Body* b = kernel.body(kind);
    if (!b && kind == DeviceKind::emu) b = kernel.body(DeviceKind::cpu);
    if (!b) {
      throw Error(ErrorKind::device, context_ + ": kernel '" + kernel.name() +
                                         "' has no body for " + std::string(to_string(kind)) +
                                         " devices");
    }
    return *b;
  }

  // The flops of this process's tasks in the flow (each task's cost is its kernel's flops;
  // messages cost nothing).
  static double flops(const runtime::ProcessFlow& flow) {
    const runtime::TaskGraph& g = flow.graph();
    double f = 0;
    for (std::size_t t = 0; t < g.size(); ++t) f += g.cost(static_cast<runtime::TaskId>(t));
    return f;
  }

  // The device memory this process's tiles may take: what is free, and no more than its part of
  // the device when several processes share it (each plans its tiles alone, at the same time as
  // the others: with the whole device each, they would overcommit it together).
  std::uint64_t device_budget() const {
    const std::uint64_t free = device_.capacity() - std::min(device_.used(), device_.capacity());
    return std::min(free, device_.capacity() / static_cast<std::uint64_t>(std::max(sharers_, 1)));
  }

  // The device's budget, or Error(out_of_memory) when this process's largest task does not fit
  // in it.
  std::uint64_t device_room(const runtime::ProcessFlow& flow) const {
    // Every tile valid on the host (the input), none on the device: a fresh directory per run.
    const std::uint64_t free = device_budget();
    std::uint64_t largest = 0;
    for (std::size_t t = 0; t < flow.graph().size(); ++t) {
      largest = std::max(largest, task_bytes(flow, static_cast<runtime::TaskId>(t)));
    }
    if (largest > free) {
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("{}: a task's tiles ({}) do not fit in the {} free on {}{}; use "
                              "smaller tiles (--b) or a device with more memory",
                              context_, human_bytes(static_cast<double>(largest)),
                              human_bytes(static_cast<double>(free)), device_.label(),
                              sharers_ > 1 ? fmt::format(" for each of the {} processes sharing it",
                                                         sharers_)
                                           : std::string()));
    }
    return free;
  }

  // Runs the flow's graph; returns this process's report. Collective over `comm` (the flow's
  // processes): a failure on any process, the one that started it (the others' tasks that read
  // its poisoned tiles were skipped), is every process's Error.
  runtime::ExecutionReport run(runtime::ProcessFlow& flow, MPI_Comm comm,
                               const TileTaskBodies& bodies) {
    runtime::ExecutionReport r;
    std::exception_ptr failure;
    // What one process can refuse before its graph runs is agreed first: its peers would wait
    // for its messages forever.
    try {
      if (device_.kind() != DeviceKind::cpu) device_room(flow);
    } catch (...) {
      failure = std::current_exception();
    }
    agree(comm, failure);
    try {
      if (device_.kind() != DeviceKind::cpu) {
        r = run_on_device(flow, bodies);
      } else {
        const std::vector<runtime::Place> places = {{runtime::host_memory, workers_}};
        const OneBlasThread one;
        r = flow.run(places, 0, [&](runtime::TaskId t, int) { bodies.host(t); });
      }
      failure = flow.failure();
    } catch (...) {
      // The flow's own failure first: what followed it (a write-back of a tile whose copy failed)
      // is its consequence.
      failure = flow.failure() ? flow.failure() : std::current_exception();
    }
    agree(comm, failure);
    span_s_ = r.seconds;
    places_.clear();
    busy_s_ = 0;
    for (std::size_t p = 0; p < r.places.size(); ++p) {
      if (static_cast<int>(p) == flow.message_place()) continue;
      places_.push_back(r.places[p]);
      busy_s_ += r.places[p].busy_s;
    }
    return r;
  }

  // The last run's places but the messages': what each ran.
  const std::vector<runtime::PlaceReport>& places() const noexcept { return places_; }
  // The tile directory's counters of the last run on an accelerator (zeros on host cores).
  const runtime::TransferCounters& transfers() const noexcept { return transfers_; }
  // The last run's span and its workers' seconds in task bodies (summed).
  double span_s() const noexcept { return span_s_; }
  double busy_s() const noexcept { return busy_s_; }
  // As run() places them: host workers first (none beside a device driven alone), then the
  // device, then the messages (served by the process's main thread).
  std::vector<std::string> place_names() const {
    std::vector<std::string> names;
    if (device_.kind() == DeviceKind::cpu || host_workers_ > 0) names.emplace_back("host cores");
    if (device_.kind() != DeviceKind::cpu) names.push_back(device_.label());
    names.emplace_back("messages");
    return names;
  }

 private:
  runtime::ExecutionReport run_on_device(runtime::ProcessFlow& flow, const TileTaskBodies& bodies) {
    const std::uint64_t free = device_room(flow);
    const runtime::TaskGraph& graph = flow.graph();
    // This process's tiles and the replicas of the others' it reads, all valid on the host first.
    runtime::TileDirectory directory({static_cast<std::size_t>(free)});
    // Copies in start when a task is placed and overlap the kernel before it (docs/runtime.md,
    // "Copies while the device computes").
    runtime::DeviceTiles copies(device_, 1, true);
    const std::function<void(int)> fence = [&](int) { copies.fence(); };
    for (std::size_t i = 0; i < flow.local_tiles(); ++i) {
      const runtime::HostRows& rows = flow.host_rows(static_cast<runtime::TileId>(i));
      directory.add(rows.bytes());
      copies.add(static_cast<runtime::TileId>(i), rows);
    }
    const runtime::TileMover apply = [&](const runtime::Transfer& x) { copies.apply(x); };
    runtime::ExecutionReport report;
    if (host_workers_ == 0) {
      const std::vector<runtime::Place> places = {{1, 1}};
      report = flow.run(places, 0, [&](runtime::TaskId t, int) { bodies.device(t, copies); },
                        {.directory = &directory, .move = &apply, .fence = &fence});
    } else {
      // The host's cores beside the device: place 0 the host workers, place 1 the device.
      const std::vector<runtime::Place> places = {{runtime::host_memory, host_workers_}, {1, 1}};
      const auto timed_body = [&](runtime::TaskId t, int place) {
        const Timer timer;
        if (place == 1) {
          bodies.device(t, copies);
        } else {
          bodies.host(t);
        }
        record(bodies.kind(t), place, timer.seconds(), graph.cost(t));
      };
      const runtime::TaskCost cost = [&](runtime::TaskId t, int place) {
        return graph.cost(t) * seconds_per_flop(bodies.kind(t), place);
      };
      const OneBlasThread one;
      report = flow.run(places, runtime::any_place, timed_body,
                        {.directory = &directory, .move = &apply, .cost = &cost, .fence = &fence});
    }
    for (const runtime::Transfer& x : directory.flush_all()) copies.apply(x);
    transfers_ = directory.counters();
    return report;
  }

  // Seconds per flop of a kernel kind on the host (0) or the device (1): the median of its last
  // measurements; unmeasured, the other's, else 1 ns (the first tasks then spread over both).
  double seconds_per_flop(int kind, int device) const {
    const std::lock_guard<std::mutex> lock(rates_mutex_);
    const auto& mine = rates_[static_cast<std::size_t>(kind)];
    for (const int side : {device, 1 - device}) {
      std::vector<double> r = mine[static_cast<std::size_t>(side)];
      if (r.empty()) continue;
      std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
      return r[r.size() / 2];
    }
    return 1e-9;
  }

  void record(int kind, int device, double seconds, double flops) {
    if (!(flops > 0)) return;
    constexpr std::size_t window = 9;  // a running median: one slow task does not move it
    const std::lock_guard<std::mutex> lock(rates_mutex_);
    auto& r = rates_[static_cast<std::size_t>(kind)][static_cast<std::size_t>(device)];
    r.push_back(seconds / flops);
    if (r.size() > window) r.erase(r.begin());
  }

  Device& device_;
  std::string context_;
  int sharers_;  // processes bound to the device, this one included
  int host_workers_;
  int workers_;
  runtime::TransferCounters transfers_;
  double span_s_ = 0;
  double busy_s_ = 0;
  std::vector<runtime::PlaceReport> places_;
  // Per kernel kind and host / device: the last seconds per flop measured (kept across runs).
  mutable std::mutex rates_mutex_;
  std::vector<std::array<std::vector<double>, 2>> rates_;
};

// The JSON `runtime` of a program's last run of tile tasks (docs/results.md): this process's tasks
// (`tasks`: its own, messages not counted) and messages, the runner's workers, span, busy
// seconds and transfers, and per place (host workers, then the device on an accelerator) the
// tasks it ran and its busy seconds.
inline nlohmann::json runtime_json(std::size_t tasks, const runtime::MessageCounters& m,
                                   const TileTaskRunner& runner) {
  const runtime::TransferCounters& x = runner.transfers();
  nlohmann::json places = nlohmann::json::array();
  for (const runtime::PlaceReport& p : runner.places()) {
    places.push_back({{"tasks", p.tasks}, {"busy_s", p.busy_s}, {"prefetched", p.prefetched}});
  }
  return {{"tasks", tasks},
          {"workers", runner.workers()},
          {"evictions", x.evictions},
          {"write_backs", x.write_backs},
          {"span_s", runner.span_s()},
          {"busy_s", runner.busy_s()},
          {"messages_sent", m.sent},
          {"messages_received", m.received},
          {"bytes_sent", m.bytes_sent},
          {"bytes_received", m.bytes_received},
          {"places", places}};
}

// The tasks of `report` into the run's trace (--trace): each task a span on its place's worker's
// track, named by its kernel (kind_name(t)); each message an instant when it ended. Nothing when
// the run is not traced.
template <class Tasks>
void trace_tasks(Environment& env, const Tasks& tasks, const runtime::ExecutionReport& report) {
  EventTrace& trace = event_trace(env);
  if (!trace.enabled()) return;
  const std::vector<std::string> names = tasks.place_names();
  const auto messages = static_cast<int>(names.size()) - 1;  // place_names() ends with them
  for (const runtime::TaskRecord& r : report.records) {
    const double begin = report.began_s + r.start_s;
    const double end = report.began_s + r.end_s;
    if (r.place >= messages) {
      trace.instant("messages", "message", tasks.kind_name(r.task), end);
      continue;
    }
    trace.span(names[static_cast<std::size_t>(r.place)] + ", worker " + std::to_string(r.worker),
               "task", tasks.kind_name(r.task), begin, end);
  }
}

// --svg of a run of tile tasks: every process's tasks and messages of `report` on one time axis,
// written by rank 0. `tasks` names its places (place_names()) and, per task of this process's
// graph, its kernel (kind_name(t)) and what it did (describe(t)). Collective.
template <class Tasks>
void write_timeline(Environment& env, const std::string& path, const std::string& title,
                    const Tasks& tasks, const runtime::ExecutionReport& report) {
  const std::vector<std::string> names = tasks.place_names();
  const runtime::TimelineText text{
      .title = title,
      .places = names,
      .kind = [&](runtime::TaskId t) { return tasks.kind_name(t); },
      .describe = [&](runtime::TaskId t) { return tasks.describe(t); }};
  const std::string svg = runtime::timeline_svg(env.comm(), report, text);
  collectively(env.comm(), [&] {
    if (env.rank() == 0) write_file_atomically(path, svg);
  });
}

}  // namespace hit::app
