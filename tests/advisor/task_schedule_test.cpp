// The price of a task graph a dry run recorded: its schedule simulated as the runtime runs it
// (one task at a time per process, the highest bottom level first, tiles from other processes
// after their messages).
#include <gtest/gtest.h>

#include <vector>

#include "advisor/task_schedule.hpp"
#include "hit/advisor/machine.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_binding.hpp"

namespace {

using hit::TracedTask;
using hit::advisor::Kernel;
using hit::advisor::Machine;
using hit::advisor::detail::simulate_tasks;
using hit::advisor::detail::TaskSchedule;

constexpr double flops = 1e8;
const std::vector<hit::TracedWorkers> one;  // one worker per process
constexpr double tile_bytes = 8.0 * 256 * 256;

Machine machine_of(const std::string& devices, int procs) {
  return Machine(hit::parse_device_spec(devices, procs), 0);
}

TracedTask task(int proc, std::vector<TracedTask::Wait> waits = {}, double work = flops) {
  TracedTask t;
  t.proc = proc;
  t.flops = work;
  t.problem_bytes = tile_bytes;
  t.waits = std::move(waits);
  return t;
}

// The schedule of `graph` on `workers` (per process; empty: one each).
TaskSchedule run_on(const std::vector<hit::TracedWorkers>& workers,
                    const std::vector<TracedTask>& graph, const Machine& m) {
  return simulate_tasks(graph, workers, m);
}

// One task's time on `proc` as the schedule counts it.
double seconds(const Machine& m, int proc, double work = flops) {
  return m.own_seconds(proc, Kernel::gemm, work, static_cast<std::uint64_t>(tile_bytes)) +
         m.launch_seconds(proc);
}

TEST(TaskSchedule, AProcessRunsItsTasksOneAfterTheOther) {
  const Machine m = machine_of("cpu*2", 2);
  const auto s = run_on(one, {task(0), task(0), task(0, {{1, 0, -1}})}, m);
  EXPECT_DOUBLE_EQ(s.makespan_s, 3 * seconds(m, 0));
  EXPECT_DOUBLE_EQ(s.flops[0], 3 * flops);
  EXPECT_DOUBLE_EQ(s.flops[1], 0);
  EXPECT_DOUBLE_EQ(s.kernel_s[0] + s.launch_s[0], 3 * seconds(m, 0));
  EXPECT_DOUBLE_EQ(s.comm_s[0], 0);
}

TEST(TaskSchedule, ProcessesRunTheirTasksTogether) {
  const Machine m = machine_of("emu:0(slowdown=3),cpu", 2);
  const auto s = run_on(one, {task(0), task(1), task(1)}, m);
  EXPECT_DOUBLE_EQ(s.makespan_s, std::max(seconds(m, 0), 2 * seconds(m, 1)));
  EXPECT_GT(seconds(m, 0), seconds(m, 1));  // the slowed device is slower
}

TEST(TaskSchedule, ATileFromAnotherProcessArrivesAfterItsMessage) {
  const Machine m = machine_of("cpu*3", 3);
  const double hop = m.message_seconds(0, 1, 1, tile_bytes);
  ASSERT_GT(hop, 0);
  const auto s = run_on(one, {task(0), task(1, {{0, tile_bytes, -1}})}, m);
  EXPECT_DOUBLE_EQ(s.makespan_s, seconds(m, 0) + hop + seconds(m, 1));
  EXPECT_DOUBLE_EQ(s.comm_s[1], hop);
  // Through its owner, process 2: two messages.
  const auto via = run_on(one, {task(0), task(1, {{0, tile_bytes, 2}})}, m);
  EXPECT_DOUBLE_EQ(via.makespan_s, seconds(m, 0) + m.message_seconds(0, 2, 1, tile_bytes) +
                                       m.message_seconds(2, 1, 1, tile_bytes) + seconds(m, 1));
  // An order between tasks of one process moves nothing.
  const auto local = run_on(one, {task(0), task(0, {{0, tile_bytes, -1}})}, m);
  EXPECT_DOUBLE_EQ(local.makespan_s, 2 * seconds(m, 0));
}

TEST(TaskSchedule, TheTaskOnTheLongerPathRunsFirst) {
  const Machine m = machine_of("cpu*2", 2);
  // Process 0 has two ready tasks; the second (submitted later) feeds a long task on process 1.
  // Run first, the long task starts at once; in submission order it would wait a task longer.
  const std::vector<TracedTask> graph = {task(0), task(0),
                                         task(1, {{1, tile_bytes, -1}}, 10 * flops)};
  const auto s = run_on(one, graph, m);
  const double hop = m.message_seconds(0, 1, 1, tile_bytes);
  EXPECT_DOUBLE_EQ(s.makespan_s, seconds(m, 0) + hop + seconds(m, 1, 10 * flops));
}

TEST(TaskSchedule, AProcessRunsAsManyTasksAtOnceAsItHasWorkers) {
  const Machine m = machine_of("cpu*2", 2);
  const std::vector<TracedTask> graph = {task(0), task(0), task(0)};
  EXPECT_DOUBLE_EQ(run_on({{3, 0}, {1, 0}}, graph, m).makespan_s, seconds(m, 0));
  EXPECT_DOUBLE_EQ(run_on({{2, 0}, {1, 0}}, graph, m).makespan_s, 2 * seconds(m, 0));
}

TEST(TaskSchedule, HostCoresBesideASlowDeviceTakeTheTasksTheyFinishFirst) {
  const Machine m = machine_of("emu:0(slowdown=8)", 1);
  const double device = seconds(m, 0);
  const double core = flops / m.host_flops(Kernel::gemm) +
                      hit::advisor::default_launch_seconds(hit::DeviceKind::cpu);
  ASSERT_GT(device, 2 * core);
  // Two tasks, the device and one core: the core takes the first (it finishes first), then the
  // second too, before the device would have finished either.
  const auto s = run_on({{1, 1}}, {task(0), task(0)}, m);
  EXPECT_DOUBLE_EQ(s.makespan_s, 2 * core);
  EXPECT_DOUBLE_EQ(s.flops[0], 2 * flops);
  // Without the core, the device alone.
  EXPECT_DOUBLE_EQ(run_on({{0, 1}}, {task(0), task(0)}, m).makespan_s, 2 * device);
}

TEST(TaskSchedule, ATaskOfAProcessTheMachineLacksIsAnError) {
  const Machine m = machine_of("cpu*2", 2);
  EXPECT_THROW(run_on(one, {task(2)}, m), hit::Error);
  EXPECT_THROW(run_on(one, {task(0, {{0, 0, -1}})}, m), hit::Error);  // waits for itself
  EXPECT_THROW(run_on({{1, 0}}, {task(0)}, m), hit::Error);           // workers of one process
}

}  // namespace
