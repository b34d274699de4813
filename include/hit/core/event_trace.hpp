#pragma once
// The timeline of a run, for Perfetto and chrome://tracing (docs/traces.md): what each process
// did and when, as trace events on named tracks (the host thread, the device, the messages in
// flight, a task runtime's places, the work packages). Off unless a path is given (`--trace FILE`
// on every example program, else HIT_TRACE); recording an event is then a lock and a push, and
// nothing at all when off. write() gathers every process's events into one JSON file.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hit {

class Environment;

class EventTrace {
 public:
  // A number shown with the event ("bytes_in": 4096).
  using Args = std::vector<std::pair<std::string, double>>;

  // Reads HIT_TRACE through the environment's configuration.
  explicit EventTrace(Environment& env);

  bool enabled() const noexcept { return !path_.empty(); }
  const std::string& path() const noexcept { return path_; }
  // Records from now on, for write() to `path` (the command line's --trace).
  void enable(std::string path) { path_ = std::move(path); }

  // Seconds on the machine's monotonic clock, which the processes of one node share.
  static double now() noexcept {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // An event from `begin_s` to `end_s` (now()'s clock) on `track`; `category` groups events of
  // one kind (launch, wait, comm, task, package, eviction, balance).
  void span(std::string_view track, std::string_view category, std::string name, double begin_s,
            double end_s, Args args = {});
  // An event without duration.
  void instant(std::string_view track, std::string_view category, std::string name, double at_s,
               Args args = {});
  // A span started now and ended by finish(key) (a communication from start() to wait()).
  void begin(const void* key, std::string_view track, std::string_view category, std::string name,
             Args args = {});
  void finish(const void* key);

  // Events recorded so far on this process.
  std::size_t size() const;

  // Collective over `comm`: every process's events gathered on rank 0, which writes them to
  // path() as one trace-event JSON object (a process per rank named `process_name`, a thread per
  // track), under a temporary name renamed on success. Times start at the earliest event of any
  // process. Every failure is agreed (hit::Error on every rank). Nothing when not enabled.
  void write(MPI_Comm comm, const std::string& process_name) const;

 private:
  struct Event {
    std::string track;
    std::string category;
    std::string name;
    double begin_s = 0;
    double duration_s = -1;  // < 0: an instant
    Args args;
  };
  std::string path_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  std::map<const void*, Event> open_;
};

// The trace of `env`'s run (an Environment extension).
EventTrace& event_trace(Environment& env);

}  // namespace hit
