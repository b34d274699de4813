#include "hit/core/program_trace.hpp"

#include <algorithm>
#include <utility>

namespace hit {

void ProgramTrace::launch(const TracedLaunch& launch) {
  Event e;
  e.kind = Event::Kind::launch;
  e.launch = launch;
  events_.push_back(std::move(e));
}

void ProgramTrace::comm_start(const void* comm, std::vector<TracedMessage> messages,
                              double staged_bytes) {
  Event e;
  e.kind = Event::Kind::comm_start;
  e.comm = comm;
  e.messages = std::move(messages);
  e.staged_bytes = staged_bytes;
  events_.push_back(std::move(e));
}

void ProgramTrace::comm_wait(const void* comm) {
  Event e;
  e.kind = Event::Kind::comm_wait;
  e.comm = comm;
  events_.push_back(std::move(e));
}

void ProgramTrace::reduction(double bytes, int rank, int procs) {
  std::vector<TracedMessage> messages;
  for (int distance = 1; distance < procs; distance *= 2) {
    // Beyond the largest power of two the partner wraps around (MPICH folds those processes
    // into the others first: a round more for them, as here).
    const int partner = (rank ^ distance) < procs ? rank ^ distance : (rank + distance) % procs;
    messages.push_back({.peer = partner, .bytes = bytes});
  }
  // Its own key: the reduction is waited for before anything else is recorded.
  const void* key = &settings_;
  comm_start(key, std::move(messages), 0);
  comm_wait(key);
}

void ProgramTrace::tasks(std::vector<TracedTask> graph, std::vector<TracedWorkers> workers) {
  Event e;
  e.kind = Event::Kind::tasks;
  e.graph = std::make_shared<const std::vector<TracedTask>>(std::move(graph));
  e.workers = std::move(workers);
  events_.push_back(std::move(e));
}

void ProgramTrace::array(TracedArray array) {
  arrays_.push_back(std::move(array));
}

void ProgramTrace::setting(std::string label) {
  if (std::find(settings_.begin(), settings_.end(), label) == settings_.end()) {
    settings_.push_back(std::move(label));
  }
}

}  // namespace hit
