#include "task_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

#include "hit/core/error.hpp"

namespace hit::advisor::detail {

namespace {

using Id = std::int64_t;

// The seconds the tiles of `w` take from its task's process to `to`.
double travel(const Machine& machine, const TracedTask::Wait& w, int from, int to) {
  if (from == to || w.bytes <= 0) return 0;
  if (w.via < 0 || w.via == from || w.via == to)
    return machine.message_seconds(from, to, 1, w.bytes);
  return machine.message_seconds(from, w.via, 1, w.bytes) +
         machine.message_seconds(w.via, to, 1, w.bytes);
}

}  // namespace

namespace {

// The graph as the schedule needs it: each task's seconds on its process's device and on one of
// its host cores, the tasks waiting for it with the delay of their tiles, how many each waits
// for, and the runtime's priorities (flops on the longest path from a task to the end, its own
// included). Fills `out`'s per-process messages.
struct Timing {
  std::vector<double> on_device, on_host, kernel_on_device, kernel_on_host;
  std::vector<std::vector<std::pair<Id, double>>> successors;  // task, delay
  std::vector<int> waiting;
  std::vector<double> level;

  Timing(const std::vector<TracedTask>& graph, const Machine& machine, TaskSchedule& out)
      : on_device(graph.size()),
        on_host(graph.size()),
        kernel_on_device(graph.size()),
        kernel_on_host(graph.size()),
        successors(graph.size()),
        waiting(graph.size()),
        level(graph.size()) {
    const auto n = static_cast<Id>(graph.size());
    const double host_launch = default_launch_seconds(DeviceKind::cpu);
    for (Id t = 0; t < n; ++t) {
      const TracedTask& x = graph[static_cast<std::size_t>(t)];
      if (x.proc < 0 || x.proc >= machine.procs()) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("task {} runs on process {}, which a machine of {} lacks", t,
                                x.proc, machine.procs()));
      }
      const auto i = static_cast<std::size_t>(t);
      kernel_on_device[i] = machine.own_seconds(x.proc, Kernel::gemm, x.flops,
                                                static_cast<std::uint64_t>(x.problem_bytes));
      on_device[i] = kernel_on_device[i] + machine.launch_seconds(x.proc);
      kernel_on_host[i] = x.flops / machine.host_flops(Kernel::gemm);
      on_host[i] = kernel_on_host[i] + host_launch;
      for (const TracedTask::Wait& w : x.waits) {
        if (w.task < 0 || w.task >= t) {
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("task {} waits for task {}, not an earlier one", t, w.task));
        }
        const int from = graph[static_cast<std::size_t>(w.task)].proc;
        const double delay = travel(machine, w, from, x.proc);
        out.comm_s[static_cast<std::size_t>(x.proc)] += delay;
        successors[static_cast<std::size_t>(w.task)].emplace_back(t, delay);
        ++waiting[i];
      }
    }
    for (Id t = n - 1; t >= 0; --t) {
      double after = 0;
      for (const auto& [s, delay] : successors[static_cast<std::size_t>(t)]) {
        after = std::max(after, level[static_cast<std::size_t>(s)]);
      }
      level[static_cast<std::size_t>(t)] = graph[static_cast<std::size_t>(t)].flops + after;
    }
  }
};

using Timed = std::pair<double, Id>;
struct Later {
  bool operator()(const Timed& a, const Timed& b) const { return a > b; }
};
using TimedQueue = std::priority_queue<Timed, std::vector<Timed>, Later>;

// One worker of a process: free from `free_at` on; on the host's cores or the process's device.
struct Worker {
  double free_at = 0;
  bool host = false;
};

// A process's workers as its places named them: a host process's all at its own speed (none
// named: one), an accelerated one's device workers at the device's and the others at a host
// core's.
std::vector<Worker> workers_of(const Machine& machine, int proc, const TracedWorkers& named) {
  const bool accelerated =
      machine.devices()[static_cast<std::size_t>(proc)].kind != DeviceKind::cpu;
  if (!accelerated) {
    return std::vector<Worker>(static_cast<std::size_t>(std::max(named.host + named.device, 1)));
  }
  std::vector<Worker> out(static_cast<std::size_t>(std::max(named.device, 1)));
  out.resize(out.size() + static_cast<std::size_t>(std::max(named.host, 0)), Worker{0, true});
  return out;
}

// The runtime's schedule of the graph: per process, the tasks whose waits have all ended by the
// time their tiles are there (`arriving`), and those among them that are there by priority
// (`ready`, the earlier task on a tie). While a worker is idle, the first ready task goes to the
// worker that would finish it first (queued behind that worker's work if it is busy: a device
// many times faster than a core is worth waiting for). Events are a task's end (its id) or a
// process to look at again (-1 - process).
class Schedule {
 public:
  Schedule(const std::vector<TracedTask>& graph, const Timing& timing,
           std::vector<std::vector<Worker>> workers, TaskSchedule& out)
      : graph_(graph),
        timing_(timing),
        out_(out),
        waiting_(timing.waiting),
        there_(graph.size(), 0),
        workers_(std::move(workers)),
        arriving_(workers_.size()) {
    const auto lower = [this](Id a, Id b) {
      const double la = timing_.level[static_cast<std::size_t>(a)];
      const double lb = timing_.level[static_cast<std::size_t>(b)];
      return la != lb ? la < lb : a > b;
    };
    for (std::size_t p = 0; p < workers_.size(); ++p) ready_.emplace_back(lower);
  }

  // The last task's end; Error(internal) when a cycle leaves tasks that never ran.
  double run() {
    const auto n = static_cast<Id>(graph_.size());
    for (Id t = 0; t < n; ++t) {
      if (waiting_[static_cast<std::size_t>(t)] == 0) arriving_[proc(t)].emplace(0.0, t);
    }
    for (std::size_t p = 0; p < workers_.size(); ++p) try_start(p, 0);
    Id ended = 0;
    double end = 0;
    std::vector<std::size_t> touched;
    while (!events_.empty()) {
      const auto [now, what] = events_.top();
      events_.pop();
      if (what < 0) {
        try_start(static_cast<std::size_t>(-1 - what), now);
        continue;
      }
      ++ended;
      end = std::max(end, now);
      touched.assign(1, proc(what));
      for (const auto& [s, delay] : timing_.successors[static_cast<std::size_t>(what)]) {
        double& at = there_[static_cast<std::size_t>(s)];
        at = std::max(at, now + delay);
        if (--waiting_[static_cast<std::size_t>(s)] > 0) continue;
        arriving_[proc(s)].emplace(at, s);
        touched.push_back(proc(s));
      }
      for (const std::size_t p : touched) try_start(p, now);
    }
    if (ended != n) {
      throw Error(
          ErrorKind::internal,
          fmt::format("task schedule: {} of {} tasks ran (a cycle in the graph)", ended, n));
    }
    return end;
  }

 private:
  std::size_t proc(Id t) const {
    return static_cast<std::size_t>(graph_[static_cast<std::size_t>(t)].proc);
  }

  void try_start(std::size_t p, double now) {
    while (!arriving_[p].empty() && arriving_[p].top().first <= now) {
      ready_[p].push(arriving_[p].top().second);
      arriving_[p].pop();
    }
    std::vector<Worker>& workers = workers_[p];
    const auto idle = [&] {
      return std::any_of(workers.begin(), workers.end(),
                         [&](const Worker& w) { return w.free_at <= now; });
    };
    while (!ready_[p].empty() && idle()) {
      const Id t = ready_[p].top();
      ready_[p].pop();
      const auto i = static_cast<std::size_t>(t);
      const auto finish = [&](const Worker& w) {
        return std::max(w.free_at, now) + (w.host ? timing_.on_host[i] : timing_.on_device[i]);
      };
      Worker& w = *std::min_element(
          workers.begin(), workers.end(),
          [&](const Worker& a, const Worker& b) { return finish(a) < finish(b); });
      w.free_at = finish(w);
      out_.kernel_s[p] += w.host ? timing_.kernel_on_host[i] : timing_.kernel_on_device[i];
      out_.launch_s[p] += w.host ? timing_.on_host[i] - timing_.kernel_on_host[i]
                                 : timing_.on_device[i] - timing_.kernel_on_device[i];
      events_.emplace(w.free_at, t);
    }
    if (ready_[p].empty() && !arriving_[p].empty()) {
      events_.emplace(arriving_[p].top().first, -1 - Id(p));
    }
  }

  const std::vector<TracedTask>& graph_;
  const Timing& timing_;
  TaskSchedule& out_;
  std::vector<int> waiting_;
  std::vector<double> there_;  // when a task's last tile arrives
  std::vector<std::vector<Worker>> workers_;
  std::vector<TimedQueue> arriving_;
  std::vector<std::priority_queue<Id, std::vector<Id>, std::function<bool(Id, Id)>>> ready_;
  TimedQueue events_;
};

}  // namespace

TaskSchedule simulate_tasks(const std::vector<TracedTask>& graph,
                            const std::vector<TracedWorkers>& workers, const Machine& machine) {
  const auto procs = static_cast<std::size_t>(machine.procs());
  if (!workers.empty() && workers.size() != procs) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("the workers of {} processes for a machine of {}", workers.size(), procs));
  }
  TaskSchedule out;
  for (auto* v : {&out.kernel_s, &out.launch_s, &out.flops, &out.problem_bytes, &out.comm_s}) {
    v->assign(procs, 0.0);
  }
  for (const TracedTask& x : graph) {
    if (x.proc < 0 || static_cast<std::size_t>(x.proc) >= procs) continue;  // Timing refuses it
    out.flops[static_cast<std::size_t>(x.proc)] += x.flops;
    auto& largest = out.problem_bytes[static_cast<std::size_t>(x.proc)];
    largest = std::max(largest, x.problem_bytes);
  }
  const Timing timing(graph, machine, out);
  std::vector<std::vector<Worker>> places(procs);
  for (std::size_t p = 0; p < procs; ++p) {
    places[p] =
        workers_of(machine, static_cast<int>(p), workers.empty() ? TracedWorkers{} : workers[p]);
    out.workers.push_back(static_cast<int>(places[p].size()));
  }
  out.makespan_s = Schedule(graph, timing, std::move(places), out).run();
  return out;
}

}  // namespace hit::advisor::detail
