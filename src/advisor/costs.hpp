#pragma once
// What the predictions of src/advisor share: the per-step sums, the closing figures (imbalance,
// memory fit) and the rounds of a broadcast tree.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "hit/advisor/prediction.hpp"
#include "hit/device_params.hpp"

namespace hit::advisor::detail {

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

  // Closes the step: stretches each part's kernel by its node's contention for cores, adds the
  // parts to the maxima and to `procs` (times `repeat`, for a step that repeats unchanged).
  //
  // A node's processes compete for its cores only while they compute together: the step takes
  // at least its longest kernel and at least the CPU work of all of them over the cores
  // (a host kernel's whole time, an emulated device's 1/slowdown of its own). Its host kernels
  // stretch by the second over the first when it is larger: a process that waits for a slower
  // one most of the step (while that one sleeps out its slowdown) loses nothing, as many equal
  // processes on fewer cores lose by cores / processes.
  void close(const Machine& machine, std::vector<ProcessCost>& procs, double repeat = 1) {
    std::map<int, double> work, longest, node_stretch;
    if (machine.shares_cores()) {
      std::map<int, std::pair<double, const Part*>> device;  // group -> own time, a part of it
      for (const Part& part : parts) {
        const double sharing = machine.sharing_factor(part.proc);
        if (sharing > 1) {
          auto& d = device[machine.device_group(part.proc)];
          d.first += part.kernel / sharing;
          d.second = &part;
          continue;
        }
        const int node = machine.node_of(part.proc);
        work[node] += part.kernel * machine.core_share(part.proc, part.problem_bytes);
        longest[node] = std::max(longest[node], part.kernel);
      }
      for (const auto& [group, d] : device) {
        const int node = machine.node_of(d.second->proc);
        work[node] += d.first * machine.core_share(d.second->proc, d.second->problem_bytes);
        longest[node] = std::max(longest[node], d.first);
      }
      for (const auto& [node, w] : work) {
        const double cores = double(machine.host_cores());
        node_stretch[node] = longest[node] > 0 ? std::max(1.0, w / (cores * longest[node])) : 1.0;
      }
    }
    for (const Part& part : parts) {
      const auto it = node_stretch.find(machine.node_of(part.proc));
      const double stretch = it == node_stretch.end()
                                 ? 1.0
                                 : machine.stretch_of(part.proc, it->second, part.problem_bytes);
      const double c = part.kernel * stretch + part.launch;
      ProcessCost& cost = procs[static_cast<std::size_t>(part.proc)];
      cost.flops += part.flops * repeat;
      cost.compute_s += c * repeat;
      cost.launch_s += part.launch * repeat;
      cost.comm_s += part.comm * repeat;
      add(machine, part.proc, c, part.comm);
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
