#include "hit/runtime/task_graph.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "hit/core/error.hpp"

namespace hit::runtime {

namespace {

// Each tile once, with the union of its uses, in the order first listed.
std::vector<TileAccess> merged(std::span<const TileAccess> accesses) {
  std::vector<TileAccess> out;
  for (const TileAccess& a : accesses) {
    if (a.tile < 0) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("task graph: tile {} is negative (tiles are numbered from 0)", a.tile));
    }
    const auto same =
        std::find_if(out.begin(), out.end(), [&](const TileAccess& b) { return b.tile == a.tile; });
    if (same == out.end()) {
      out.push_back(a);
    } else {
      same->mode = combined(same->mode, a.mode);
    }
  }
  return out;
}

}  // namespace

const TaskGraph::Task& TaskGraph::task(TaskId t) const {
  if (t < 0 || static_cast<std::size_t>(t) >= tasks_.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("task graph: no task {} (the graph has {})", t, tasks_.size()));
  }
  return tasks_[static_cast<std::size_t>(t)];
}

TaskId TaskGraph::add(std::span<const TileAccess> accesses, double cost) {
  if (!(cost >= 0) || !std::isfinite(cost)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("task graph: cost {} (must be a finite number >= 0)", cost));
  }
  Task task;
  task.accesses = merged(accesses);
  task.cost = cost;
  const auto id = static_cast<TaskId>(tasks_.size());
  // The edges come from the tiles' histories before this task: then the histories move on.
  for (const TileAccess& a : task.accesses) {
    // A writer after readers waits for them alone: they waited for the last writer already.
    const TileHistory& h = tiles_[a.tile];
    if (writes(a.mode) && !h.readers.empty()) {
      task.predecessors.insert(task.predecessors.end(), h.readers.begin(), h.readers.end());
    } else if (h.last_writer >= 0) {
      task.predecessors.push_back(h.last_writer);
    }
  }
  std::sort(task.predecessors.begin(), task.predecessors.end());
  task.predecessors.erase(std::unique(task.predecessors.begin(), task.predecessors.end()),
                          task.predecessors.end());
  for (const TaskId p : task.predecessors)
    tasks_[static_cast<std::size_t>(p)].successors.push_back(id);
  for (const TileAccess& a : task.accesses) {
    TileHistory& h = tiles_[a.tile];
    if (writes(a.mode)) {
      h.last_writer = id;
      h.readers.clear();
    } else {
      h.readers.push_back(id);
    }
  }
  tasks_.push_back(std::move(task));
  return id;
}

std::vector<double> TaskGraph::bottom_levels() const {
  std::vector<double> level(tasks_.size(), 0.0);
  // Successors come later in program order: one pass from the last task back.
  for (std::size_t i = tasks_.size(); i-- > 0;) {
    double after = 0;
    for (const TaskId s : tasks_[i].successors)
      after = std::max(after, level[static_cast<std::size_t>(s)]);
    level[i] = tasks_[i].cost + after;
  }
  return level;
}

double TaskGraph::critical_path() const {
  const std::vector<double> level = bottom_levels();
  return level.empty() ? 0.0 : *std::max_element(level.begin(), level.end());
}

}  // namespace hit::runtime
