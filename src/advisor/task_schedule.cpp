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

// The graph as the schedule needs it: each task's seconds, the tasks waiting for it with the
// delay of their tiles, how many each waits for, and the runtime's priorities (flops on the
// longest path from a task to the end, its own included). Fills `out`'s per-process sums.
struct Timing {
  std::vector<double> seconds;
  std::vector<std::vector<std::pair<Id, double>>> successors;  // task, delay
  std::vector<int> waiting;
  std::vector<double> level;

  Timing(const std::vector<TracedTask>& graph, const Machine& machine, TaskSchedule& out)
      : seconds(graph.size()),
        successors(graph.size()),
        waiting(graph.size()),
        level(graph.size()) {
    const auto n = static_cast<Id>(graph.size());
    for (Id t = 0; t < n; ++t) {
      const TracedTask& x = graph[static_cast<std::size_t>(t)];
      if (x.proc < 0 || x.proc >= machine.procs()) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("task {} runs on process {}, which a machine of {} lacks", t,
                                x.proc, machine.procs()));
      }
      const auto p = static_cast<std::size_t>(x.proc);
      const double kernel = machine.own_seconds(x.proc, Kernel::gemm, x.flops,
                                                static_cast<std::uint64_t>(x.problem_bytes));
      const double launch = machine.launch_seconds(x.proc);
      seconds[static_cast<std::size_t>(t)] = kernel + launch;
      out.kernel_s[p] += kernel;
      out.launch_s[p] += launch;
      out.flops[p] += x.flops;
      out.problem_bytes[p] = std::max(out.problem_bytes[p], x.problem_bytes);
      for (const TracedTask::Wait& w : x.waits) {
        if (w.task < 0 || w.task >= t) {
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("task {} waits for task {}, not an earlier one", t, w.task));
        }
        const int from = graph[static_cast<std::size_t>(w.task)].proc;
        const double delay = travel(machine, w, from, x.proc);
        out.comm_s[p] += delay;
        successors[static_cast<std::size_t>(w.task)].emplace_back(t, delay);
        ++waiting[static_cast<std::size_t>(t)];
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

// The runtime's schedule of the graph: per process, the tasks whose waits have all ended by the
// time their tiles are there (`arriving`), and those among them that are there by priority
// (`ready`, the earlier task on a tie); events are a task's end (its id) or a process to look at
// again (-1 - process).
class Schedule {
 public:
  Schedule(const std::vector<TracedTask>& graph, const Timing& timing, int procs)
      : graph_(graph),
        timing_(timing),
        waiting_(timing.waiting),
        there_(graph.size(), 0),
        busy_(static_cast<std::size_t>(procs), 0),
        arriving_(static_cast<std::size_t>(procs)) {
    const auto lower = [this](Id a, Id b) {
      const double la = timing_.level[static_cast<std::size_t>(a)];
      const double lb = timing_.level[static_cast<std::size_t>(b)];
      return la != lb ? la < lb : a > b;
    };
    for (int p = 0; p < procs; ++p) ready_.emplace_back(lower);
  }

  // The last task's end; Error(internal) when a cycle leaves tasks that never ran.
  double run() {
    const auto n = static_cast<Id>(graph_.size());
    for (Id t = 0; t < n; ++t) {
      if (waiting_[static_cast<std::size_t>(t)] == 0) arriving_[proc(t)].emplace(0.0, t);
    }
    for (std::size_t p = 0; p < busy_.size(); ++p) try_start(p, 0);
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
      busy_[proc(what)] = 0;
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
    if (busy_[p]) return;
    while (!arriving_[p].empty() && arriving_[p].top().first <= now) {
      ready_[p].push(arriving_[p].top().second);
      arriving_[p].pop();
    }
    if (ready_[p].empty()) {
      if (!arriving_[p].empty()) events_.emplace(arriving_[p].top().first, -1 - Id(p));
      return;
    }
    const Id t = ready_[p].top();
    ready_[p].pop();
    busy_[p] = 1;
    events_.emplace(now + timing_.seconds[static_cast<std::size_t>(t)], t);
  }

  const std::vector<TracedTask>& graph_;
  const Timing& timing_;
  std::vector<int> waiting_;
  std::vector<double> there_;  // when a task's last tile arrives
  std::vector<char> busy_;
  std::vector<TimedQueue> arriving_;
  std::vector<std::priority_queue<Id, std::vector<Id>, std::function<bool(Id, Id)>>> ready_;
  TimedQueue events_;
};

}  // namespace

TaskSchedule simulate_tasks(const std::vector<TracedTask>& graph, const Machine& machine) {
  TaskSchedule out;
  for (auto* v : {&out.kernel_s, &out.launch_s, &out.flops, &out.problem_bytes, &out.comm_s}) {
    v->assign(static_cast<std::size_t>(machine.procs()), 0.0);
  }
  const Timing timing(graph, machine, out);
  out.makespan_s = Schedule(graph, timing, machine.procs()).run();
  return out;
}

}  // namespace hit::advisor::detail
