#pragma once
// The price of a task graph that a dry run recorded (the task runtime's, docs/runtime.md): its
// schedule simulated as the runtime runs it. Each process runs its own tasks on its workers, the
// ready task of the highest bottom level first (the runtime's priority, its flops on the longest
// path to the end) on the worker that would finish it first; a task starts once every task it
// waits for has ended and the tiles that travel from another process have arrived
// (Machine::message_seconds, through the tile's owner where neither process owns it). A task
// takes its kernel at its worker's speed for dense products (the process's device, or one host
// core) and one launch.

#include <vector>

#include "hit/advisor/machine.hpp"
#include "hit/core/program_trace.hpp"

namespace hit::advisor::detail {

struct TaskSchedule {
  double makespan_s = 0;  // the last task's end
  // Per process: its tasks' kernels and launches, their flops, the largest task's tiles, and the
  // seconds of the messages its tasks waited for (overlapped with the others' work).
  std::vector<double> kernel_s, launch_s, flops, problem_bytes, comm_s;
  std::vector<int> workers;  // per process: the tasks it runs at once
};

// Error(invalid_argument) for a task of a process the machine lacks, or a wait on a task that is
// not an earlier one.
// `workers`: per process as its places named them (empty: one worker each, at its device's speed).
TaskSchedule simulate_tasks(const std::vector<TracedTask>& graph,
                            const std::vector<TracedWorkers>& workers, const Machine& machine);

}  // namespace hit::advisor::detail
