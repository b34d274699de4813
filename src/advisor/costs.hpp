#pragma once
// What the predictions of src/advisor share: the per-step sums, the closing figures (imbalance,
// memory fit) and the rounds of a broadcast tree.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "hit/advisor/prediction.hpp"
#include "hit/topology/device_params.hpp"

namespace hit::advisor::detail {

// One process's kernel of a step as a node's cores see it: `cpu` seconds of a core, done by
// `wall` seconds after it starts when it has the core whenever it wants one (an emulated device
// sleeps out the rest). With `cpu_clock` the device times its CPU work (`clock=cpu`): waiting for
// a core within its wall time costs it nothing; otherwise every wait is stretched with the rest.
struct CoreJob {
  double cpu = 0;
  double wall = 0;
  bool cpu_clock = false;
};

// When each job first has a core and when it ends.
struct CoreSpan {
  double start = 0;
  double end = 0;
};

// The most turns one schedule takes (shared_cores_spans): where the kernels are so many slices
// long that it would take more, the turns grow. Kernels that long share the cores fluidly, so
// longer turns change the schedule's end by a turn per kernel at most.
inline constexpr double max_core_turns = 1 << 20;

// When each of `jobs`, all wanting a core at once, starts and ends on `cores` cores shared
// round-robin in turns of at most `slice` seconds (the scheduler's time slice: a process keeps
// its core that long unless it sleeps), served in the order given. 0 cores: one per job.
inline std::vector<CoreSpan> shared_cores_spans(const std::vector<CoreJob>& jobs, int cores,
                                                double slice) {
  struct Turn {
    std::size_t job = 0;
    double ready = 0;  // when its previous turn ended
  };
  std::vector<double> left(jobs.size());
  std::vector<CoreSpan> spans(jobs.size(), CoreSpan{-1.0, 0.0});
  std::vector<Turn> queue;  // first in, first served
  double turns = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    left[j] = jobs[j].cpu;
    if (jobs[j].cpu > 0) {
      queue.push_back({j, 0.0});
      turns += slice > 0 ? std::ceil(jobs[j].cpu / slice) : 1.0;
    } else {
      spans[j] = {0.0, jobs[j].wall};  // a GPU's kernel needs no host core
    }
  }
  if (cores <= 0 || std::size_t(cores) >= queue.size()) {
    for (const Turn& t : queue) spans[t.job] = {0.0, std::max(jobs[t.job].cpu, jobs[t.job].wall)};
    return spans;
  }
  if (slice > 0 && turns > max_core_turns) slice *= turns / max_core_turns;
  // The cores' next free moments, earliest first.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int c = 0; c < cores; ++c) free_at.push(0.0);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const auto [j, ready] = queue[head];
    const double now = std::max(free_at.top(), ready);
    free_at.pop();
    CoreSpan& span = spans[j];
    if (span.start < 0) span.start = now;
    const double turn = slice > 0 ? std::min(slice, left[j]) : left[j];
    left[j] -= turn;
    free_at.push(now + turn);
    if (left[j] > 1e-12 * jobs[j].cpu) {
      queue.push_back({j, now + turn});
      continue;
    }
    const CoreJob& job = jobs[j];
    span.end = now + turn;
    if (job.wall > job.cpu) {
      span.end = job.cpu_clock ? std::max(span.end, span.start + job.wall)
                               : span.start + (span.end - span.start) * job.wall / job.cpu;
    }
  }
  return spans;
}

// Per-step maxima over the processes, summed over the steps by the caller.
struct StepMax {
  double compute = 0;
  double comm = 0;
  // Own compute of the processes of each shared device (device group -> seconds) this step.
  std::map<int, double> on_device;

  void add(double c, double m) {
    compute = std::max(compute, c);
    comm = std::max(comm, m);
  }
  // Process `proc`'s compute `c` (its turns on a shared device included) and communication `m`.
  // A device that several processes take turns on runs their kernels one after the other: the
  // step lasts at least the sum of their own times, which is less than sharers × the largest
  // where their shares differ.
  void add(const Machine& machine, int proc, double c, double m) {
    const double sharing = machine.sharing_factor(proc);
    if (sharing <= 1) {
      add(c, m);
      return;
    }
    double& device = on_device[machine.device_group(proc)];
    device += c / sharing;
    add(device, m);
  }

  // One process's part of a step whose compute depends on the others': `kernel` seconds with the
  // node's cores to itself (Machine::own_seconds, and any packing its CPU does), `launch`
  // seconds of launch overhead beyond it, `comm` seconds of messages, on a problem of
  // `problem_bytes`.
  struct Part {
    int proc = 0;
    double kernel = 0;
    double launch = 0;
    double comm = 0;
    double flops = 0;
    std::uint64_t problem_bytes = 0;
  };
  std::vector<Part> parts;

  // Adds `part`'s figures, its compute `c`, to its process (times `repeat`).
  static void account(std::vector<ProcessCost>& procs, const Part& part, double c, double repeat) {
    ProcessCost& cost = procs[static_cast<std::size_t>(part.proc)];
    cost.flops += part.flops * repeat;
    cost.compute_s += c * repeat;
    cost.launch_s += part.launch * repeat;
    cost.comm_s += part.comm * repeat;
  }

  // Closes the step: stretches each part by its node's contention for cores, adds the parts to
  // the maxima and to `procs` (times `repeat`, for a step that repeats unchanged).
  //
  // A node's processes compete for its cores only while they compute together. Each part lasts
  // what the node's scheduler makes of the step's kernels (shared_cores_spans): a host
  // kernel wants a core its whole time, an emulated device 1/slowdown of its own and sleeps out
  // the rest, and every launch's hand-off wants one too. Kernels longer than the scheduler's
  // slice share the cores fluidly (the step takes their CPU work over the cores, or the longest
  // kernel); shorter ones run to their end once they have a core, so three equal kernels on two
  // cores take two of their lengths, not one and a half. A process that waits for a slower one
  // most of the step (while that one sleeps out its slowdown) loses nothing. The ranks that take
  // turns on a device are one job, the sum of their own kernels.
  void close(const Machine& machine, std::vector<ProcessCost>& procs, double repeat = 1) {
    if (!machine.shares_cores()) {
      for (const Part& part : parts) {
        const double c = part.kernel + part.launch;
        account(procs, part, c, repeat);
        add(machine, part.proc, c, part.comm);
      }
      parts.clear();
      return;
    }
    struct Job {
      CoreJob cores;
      std::vector<std::size_t> parts;
    };
    std::map<int, std::vector<Job>> nodes;
    std::map<int, std::size_t> group_job;  // shared device group -> its job on its node
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Part& part = parts[i];
      const double sharing = machine.sharing_factor(part.proc);
      std::vector<Job>& jobs = nodes[machine.node_of(part.proc)];
      Job* job = nullptr;
      if (sharing > 1) {
        const auto [it, fresh] =
            group_job.try_emplace(machine.device_group(part.proc), jobs.size());
        if (fresh) jobs.emplace_back();
        job = &jobs[it->second];
      } else {
        job = &jobs.emplace_back();
      }
      job->cores.cpu += part.kernel / sharing * machine.core_share(part.proc, part.problem_bytes) +
                        part.launch / sharing;
      job->cores.wall += (part.kernel + part.launch) / sharing;
      job->cores.cpu_clock = machine.counts_cpu_time(part.proc);
      job->parts.push_back(i);
    }
    // A process's compute is its kernel's span from the moment it has a core (what its own
    // clock sees); the step lasts until the last kernel ends.
    for (const auto& [node, jobs] : nodes) {
      std::vector<CoreJob> wanted;
      for (const Job& job : jobs) wanted.push_back(job.cores);
      const std::vector<CoreSpan> spans =
          shared_cores_spans(wanted, machine.host_cores(), machine.scheduler_slice_seconds());
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const double wall = jobs[j].cores.wall;
        const double stretch = wall > 0 ? (spans[j].end - spans[j].start) / wall : 1.0;
        for (std::size_t i : jobs[j].parts) {
          account(procs, parts[i], (parts[i].kernel + parts[i].launch) * stretch, repeat);
          add(spans[j].end, parts[i].comm);
        }
      }
    }
    parts.clear();
  }
};

// Imbalance, memory per device and the largest allocation, once the processes are filled.
inline void finish(Prediction& p, const Machine& machine) {
  double largest = 0, sum = 0;
  int active = 0;
  std::map<int, std::uint64_t> per_device;
  for (std::size_t r = 0; r < p.procs.size(); ++r) {
    const ProcessCost& c = p.procs[r];
    p.max_bytes = std::max(p.max_bytes, c.bytes);
    per_device[machine.device_group(static_cast<int>(r))] += c.bytes;
    if (c.flops <= 0) continue;
    largest = std::max(largest, c.compute_s);
    sum += c.compute_s;
    ++active;
  }
  p.imbalance = active > 0 && sum > 0 ? largest / (sum / active) : 1.0;
  for (std::size_t r = 0; r < p.procs.size() && p.fits; ++r) {
    const int proc = static_cast<int>(r);
    const auto mem = machine.device_memory(proc);
    const std::uint64_t used = per_device[machine.device_group(proc)];
    if (mem && used > *mem) {
      p.fits = false;
      p.fit_note = fmt::format("{} of process {} holds {} for its {} process(es), over its {}",
                               machine.device(proc).str(), proc, human_bytes(double(used)),
                               machine.sharers(proc), human_bytes(double(*mem)));
    }
  }
}

// ⌈log2 n⌉: the rounds of a binomial-tree broadcast over n processes.
inline double tree_rounds(int n) {
  return n > 1 ? std::ceil(std::log2(double(n))) : 0.0;
}

}  // namespace hit::advisor::detail
