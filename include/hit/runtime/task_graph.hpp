#pragma once
// Tasks submitted in program order, each naming the tiles it reads and writes; the dependencies
// are inferred as a sequential task flow infers them (docs/runtime.md):
//   read after write  — a reader waits for the tile's last writer;
//   write after read  — a writer waits for every reader since the last write;
//   write after write — a writer with no reader since the last write waits for that writer.
// Every edge points from an earlier task to a later one, so the graph is acyclic by construction
// and any execution that respects it computes what the program order computes.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <unordered_map>
#include <vector>

#include "hit/runtime/access.hpp"

namespace hit::runtime {

using TaskId = std::int64_t;

class TaskGraph {
 public:
  // Adds a task after every task added before; `cost` (any unit, >= 0, finite) weighs it on the
  // critical path. A tile listed twice counts once with both uses. Error(invalid_argument) for a
  // negative tile or a cost that is negative or not finite.
  TaskId add(std::span<const TileAccess> accesses, double cost = 1.0);
  TaskId add(std::initializer_list<TileAccess> accesses, double cost = 1.0) {
    return add(std::span<const TileAccess>(accesses.begin(), accesses.size()), cost);
  }

  std::size_t size() const noexcept { return tasks_.size(); }
  // The tasks `t` waits for and those that wait for it, each list ascending and without repeats.
  const std::vector<TaskId>& predecessors(TaskId t) const { return task(t).predecessors; }
  const std::vector<TaskId>& successors(TaskId t) const { return task(t).successors; }
  // The task's tiles, each once, in the order first listed.
  const std::vector<TileAccess>& accesses(TaskId t) const { return task(t).accesses; }
  double cost(TaskId t) const { return task(t).cost; }
  // Per task, the longest sum of costs along a path from its start to the end of the graph, its
  // own cost included: the priority that runs the critical path first (a panel before the
  // updates that can wait, so look-ahead is no special case).
  std::vector<double> bottom_levels() const;
  // The largest bottom level: no schedule on any number of workers ends sooner.
  double critical_path() const;

 private:
  struct Task {
    std::vector<TileAccess> accesses;
    std::vector<TaskId> predecessors;
    std::vector<TaskId> successors;
    double cost = 1.0;
  };
  struct TileHistory {
    TaskId last_writer = -1;
    std::vector<TaskId> readers;  // since the last write
  };
  const Task& task(TaskId t) const;

  std::vector<Task> tasks_;
  std::unordered_map<TileId, TileHistory> tiles_;
};

}  // namespace hit::runtime
