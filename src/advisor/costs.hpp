#pragma once
// What the predictions of src/advisor share: the per-process sums, the closing figures
// (imbalance, memory fit) and the cost of a broadcast along a line of processes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
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
  // One process's part of the step: added to its totals and to the step's maxima. `launch`:
  // the part of `c` that is launch overhead.
  void record(const Machine& machine, int proc, ProcessCost& cost, double flops, double c, double m,
              double launch = 0) {
    cost.flops += flops;
    cost.compute_s += c;
    cost.launch_s += launch;
    cost.comm_s += m;
    add(machine, proc, c, m);
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

// A process of `line` (ranks) on another node than `proc` when there is one, else another
// process of the line, else `proc`: the costliest link a broadcast over the line uses.
inline int farthest_in_line(const Machine& machine, int proc, const std::vector<int>& line) {
  int other = proc;
  for (int q : line) {
    if (q == proc) continue;
    if (machine.node_of(q) != machine.node_of(proc)) return q;
    other = q;
  }
  return other;
}

}  // namespace hit::advisor::detail
