#pragma once
// Runs a TaskGraph as its tasks' data arrive: a task becomes ready when its predecessors have
// ended, and waits in its place's queue, the longest path to the end first (bottom levels).
// Places are groups of workers (threads) that use one memory: the host's cores, a device's
// streams. With a TileDirectory, a task's tiles are acquired at its place's memory before it
// runs (the mover makes the copies the directory lists) and released after it: each tile moves
// once per need, not once per task (docs/runtime.md).

#include <functional>
#include <span>
#include <vector>

#include "hit/runtime/task_graph.hpp"
#include "hit/runtime/tile_directory.hpp"

namespace hit::runtime {

struct Place {
  Location memory = host_memory;  // the memory the place's tasks read and write
  int workers = 1;                // tasks it runs at once
};

struct TaskRecord {
  TaskId task = 0;
  int place = 0;
  int worker = 0;      // within the place
  double start_s = 0;  // since the run began
  double end_s = 0;
  std::int64_t started = 0;  // the order of events: a task's start and end numbers, from one
  std::int64_t ended = 0;    // counter, so tests check dependencies without trusting clocks
  // The event at which its tiles were acquired (their copies started): at its start, or earlier
  // where the task was prefetched (a device place's next tasks, below).
  std::int64_t acquired = 0;
  bool prefetched = false;
};

struct PlaceReport {
  std::int64_t tasks = 0;
  double busy_s = 0;            // the workers' seconds in task bodies, summed
  std::int64_t prefetched = 0;  // tasks whose tiles were acquired while they waited
};

struct ExecutionReport {
  std::vector<TaskRecord> records;  // by task id
  std::vector<PlaceReport> places;
  double seconds = 0;
  // When the run began, in seconds of the steady clock since its epoch: one clock for the
  // processes of a node (CLOCK_MONOTONIC on Linux), so their runs can share a time axis.
  double began_s = 0;
};

// A task's work at its place: its id and the place.
using TaskBody = std::function<void(TaskId, int place)>;
// Makes one copy the directory listed (from one memory to another).
using TileMover = std::function<void(const Transfer&)>;
// The expected seconds of task t's body at place p; 0 or less: it cannot run there.
using TaskCost = std::function<double(TaskId, int place)>;
// A task placed when it becomes ready, by expected finish time (with a TaskCost).
inline constexpr int any_place = -1;
// Ready tasks of a device place whose tiles are acquired ahead of their start.
inline constexpr int prefetch_depth = 2;

// Runs every task of `graph` once, task t on place place_of[t], with the dependencies respected.
// A task that throws stops the run: no task starts after it, those running end, and the first
// error is rethrown. Error(invalid_argument) for a place_of of another size or naming no place,
// no places, a place without workers, or (with a directory) a memory the directory lacks.
ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body);
// The same, with every task's tiles acquired at its place's memory first. Copies are made one at
// a time, in the directory's order, by `move`. The directory must hold the tiles of the tasks
// running at once (Error(out_of_memory) otherwise, as from acquire()). At a place whose memory
// is a device's, the ready tasks next in its queue (up to prefetch_depth beyond those running)
// have their tiles acquired while they wait, so that a mover whose copies are asynchronous
// (DeviceTiles) moves them while the place computes; only where the tiles held there, the
// task's and the place's workers' worth of the largest task fit in the device's memory.
ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        TileDirectory& directory, const TileMover& move);
// The same, where a task whose place_of is any_place goes, when it becomes ready, to the place
// that would finish it first: the place's backlog (the expected seconds of the tasks queued and
// running there, over its workers) plus `cost(t, place)`, the earliest place among equals (as
// StarPU's dmda and HEFT place tasks; transfers are not priced yet). `cost` is called under the
// executor's lock; it may learn from the times the bodies measure.
ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        TileDirectory& directory, const TileMover& move, const TaskCost& cost);

// Tasks that end after they start, without a worker: messages between processes. The thread
// that called execute() serves the place `place`: it calls start(t) for each of its tasks once t
// is ready (its tiles acquired at the place's memory), and poll(ended) between, which appends the
// tasks that ended since the last call. Both run outside the executor's lock, on that thread
// only (MPI_THREAD_FUNNELED is enough); start must not wait for another process. The place's
// `workers` is not used. A task of that place must end once started even when the run fails (a
// process that stops early leaves the others waiting for its messages).
struct Messages {
  int place = -1;
  std::function<void(TaskId)> start;
  std::function<void(std::vector<TaskId>& ended)> poll;
};

// Everything the executor may be given beside the graph, the places and the bodies.
struct ExecuteOptions {
  TileDirectory* directory = nullptr;  // with `move`: tiles acquired as above
  const TileMover* move = nullptr;
  const TaskCost* cost = nullptr;  // needed where a place_of is any_place
  const Messages* messages = nullptr;
  // Called by a device place's worker once the task it is about to run has its tiles acquired,
  // before the next tasks' tiles are (prefetched): with asynchronous copies (DeviceTiles), the
  // point after which the task's kernel may start, and the later copies overlap it.
  const std::function<void(int place)>* fence = nullptr;
  // Per task, its priority in the ready queues (higher first), instead of its bottom level in
  // `graph`: a process's share of a larger graph ranks its tasks by the whole graph's levels.
  std::span<const double> priority = {};
};
// The general form of the three above. Error(invalid_argument) also for a message place that is
// not one of the places, or a priority list of another size than the graph.
ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        const ExecuteOptions& options);

}  // namespace hit::runtime
