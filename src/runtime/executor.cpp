#include "hit/runtime/executor.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "hit/core/error.hpp"

namespace hit::runtime {

namespace {

using Clock = std::chrono::steady_clock;

void check(const TaskGraph& graph, std::span<const Place> places, std::span<const int> place_of,
           const ExecuteOptions& options) {
  const TileDirectory* directory = options.directory;
  const bool placed_when_ready = options.cost != nullptr;
  const auto bad = [](const std::string& what) {
    return Error(ErrorKind::invalid_argument, "execute: " + what);
  };
  if (places.empty()) throw bad("no places to run tasks on");
  if ((options.directory == nullptr) != (options.move == nullptr)) {
    throw bad("a tile directory needs a tile mover, and a mover a directory");
  }
  if (options.messages && (options.messages->place < 0 ||
                           static_cast<std::size_t>(options.messages->place) >= places.size() ||
                           !options.messages->start || !options.messages->poll)) {
    throw bad(
        fmt::format("the message place {} is not one of the {} places, or it lacks start "
                    "or poll",
                    options.messages->place, places.size()));
  }
  if (!options.priority.empty() && options.priority.size() != graph.size()) {
    throw bad(fmt::format("{} priorities for {} tasks", options.priority.size(), graph.size()));
  }
  for (std::size_t p = 0; p < places.size(); ++p) {
    if (places[p].workers < 1) {
      throw bad(fmt::format("place {} has {} workers (must be >= 1)", p, places[p].workers));
    }
    if (directory && (places[p].memory < 0 || places[p].memory > directory->devices())) {
      throw bad(
          fmt::format("place {} uses memory {}, which the tile directory lacks (it has the "
                      "host's and {} device memories)",
                      p, places[p].memory, directory->devices()));
    }
  }
  if (place_of.size() != graph.size()) {
    throw bad(fmt::format("{} places for {} tasks", place_of.size(), graph.size()));
  }
  for (std::size_t t = 0; t < place_of.size(); ++t) {
    if (place_of[t] == any_place && placed_when_ready) continue;
    if (place_of[t] == any_place) {
      throw bad(
          fmt::format("task {} is to be placed when ready (any_place), which needs a TaskCost", t));
    }
    if (place_of[t] < 0 || static_cast<std::size_t>(place_of[t]) >= places.size()) {
      throw bad(fmt::format("task {} is placed on place {}, not one of the {}", t, place_of[t],
                            places.size()));
    }
  }
}

// The run's shared state; every member is guarded by `lock` (the bodies run outside it).
class Run {
 public:
  Run(const TaskGraph& graph, std::span<const Place> places, std::span<const int> place_of,
      const TaskBody& body, const ExecuteOptions& options)
      : graph_(graph),
        places_(places),
        place_of_(place_of.begin(), place_of.end()),
        body_(body),
        directory_(options.directory),
        move_(options.move),
        cost_(options.cost),
        messages_(options.messages),
        fence_(options.fence),
        priority_(options.priority.empty()
                      ? graph.bottom_levels()
                      : std::vector<double>(options.priority.begin(), options.priority.end())),
        pending_(graph.size()),
        ready_(places.size()),
        expected_(graph.size(), 0.0),
        backlog_(places.size(), 0.0),
        left_(static_cast<std::int64_t>(graph.size())),
        acquired_(graph.size(), 0),
        prefetched_(places.size(), 0) {
    report_.records.resize(graph.size());
    report_.places.resize(places.size());
    if (directory_) {
      for (std::size_t t = 0; t < graph.size(); ++t) {
        std::size_t bytes = 0;
        for (const TileAccess& a : graph.accesses(static_cast<TaskId>(t))) {
          bytes += directory_->bytes(a.tile);
        }
        largest_task_bytes_ = std::max(largest_task_bytes_, bytes);
      }
    }
    for (std::size_t t = 0; t < graph.size(); ++t) {
      pending_[t] = graph.predecessors(static_cast<TaskId>(t)).size();
      if (pending_[t] == 0) push_ready(static_cast<TaskId>(t));
    }
  }

  ExecutionReport go() {
    start_ = Clock::now();
    report_.began_s = std::chrono::duration<double>(start_.time_since_epoch()).count();
    std::vector<std::thread> workers;
    for (std::size_t p = 0; p < places_.size(); ++p) {
      if (messages_ && static_cast<int>(p) == messages_->place) continue;
      for (int w = 0; w < places_[p].workers; ++w) {
        workers.emplace_back([this, p, w] { work(static_cast<int>(p), w); });
      }
    }
    if (messages_) serve_messages();
    for (std::thread& t : workers) t.join();
    if (error_) std::rethrow_exception(error_);
    report_.seconds = since_start();
    return std::move(report_);
  }

 private:
  double since_start() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  // Higher bottom level first; among equals the earlier task (program order).
  bool before(TaskId a, TaskId b) const {
    const double pa = priority_[static_cast<std::size_t>(a)];
    const double pb = priority_[static_cast<std::size_t>(b)];
    return pa != pb ? pa > pb : a < b;
  }

  // The place that would finish `t` first: its backlog over its workers plus t's cost there.
  int earliest_finish(TaskId t) {
    int best = -1;
    double best_end = 0;
    double best_cost = 0;
    for (std::size_t p = 0; p < places_.size(); ++p) {
      const double c = (*cost_)(t, static_cast<int>(p));
      if (!(c > 0)) continue;
      const double end = backlog_[p] / places_[p].workers + c;
      if (best < 0 || end < best_end) {
        best = static_cast<int>(p);
        best_end = end;
        best_cost = c;
      }
    }
    if (best < 0) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("execute: task {} can run on none of the {} places (its cost is 0 "
                              "or less on each)",
                              t, places_.size()));
    }
    expected_[static_cast<std::size_t>(t)] = best_cost;
    return best;
  }

  void push_ready(TaskId t) {
    int& place = place_of_[static_cast<std::size_t>(t)];
    if (place == any_place) place = earliest_finish(t);
    backlog_[static_cast<std::size_t>(place)] += expected_[static_cast<std::size_t>(t)];
    auto& q = ready_[static_cast<std::size_t>(place)];
    q.push_back(t);
    std::push_heap(q.begin(), q.end(), [this](TaskId a, TaskId b) { return before(b, a); });
    if (messages_ && place == messages_->place) message_work_ = true;
    top_up(place);
  }

  // Under the lock: the workers learn of a change; the message thread only of one it acts on
  // (a message task ready, the run's end or an error), so that a process's every task end does
  // not wake it and take a core from the workers.
  void wake() {
    changed_.notify_all();
    if (messages_ && (message_work_ || left_ == 0 || error_)) messages_changed_.notify_one();
  }

  bool prefetches(int place) const {
    return directory_ && places_[static_cast<std::size_t>(place)].memory != host_memory &&
           !(messages_ && place == messages_->place);
  }

  // Under the lock: the tiles of a device place's next ready tasks acquired while they wait,
  // the highest priority first, up to prefetch_depth, while the device keeps room for its
  // workers' tasks whatever they are.
  void top_up(int place) {
    if (!prefetches(place)) return;
    const auto p = static_cast<std::size_t>(place);
    const Location memory = places_[p].memory;
    const std::size_t reserve = largest_task_bytes_ * static_cast<std::size_t>(places_[p].workers);
    while (prefetched_[p] < prefetch_depth) {
      TaskId best = -1;
      for (const TaskId t : ready_[p]) {
        if (!acquired_[static_cast<std::size_t>(t)] && (best < 0 || before(t, best))) best = t;
      }
      if (best < 0) return;
      std::size_t bytes = 0;
      for (const TileAccess& a : graph_.accesses(best)) bytes += directory_->bytes(a.tile);
      if (directory_->held_bytes(memory) + bytes + reserve > directory_->capacity_bytes(memory)) {
        return;
      }
      acquire_tiles(best, place);
      acquired_[static_cast<std::size_t>(best)] = 1;
      TaskRecord& r = report_.records[static_cast<std::size_t>(best)];
      r.acquired = events_++;
      r.prefetched = true;
      ++prefetched_[p];
    }
  }

  TaskId pop_ready(int place) {
    auto& q = ready_[static_cast<std::size_t>(place)];
    std::pop_heap(q.begin(), q.end(), [this](TaskId a, TaskId b) { return before(b, a); });
    const TaskId t = q.back();
    q.pop_back();
    return t;
  }

  // Under the lock: the task's tiles at the place's memory, copies made in order.
  void acquire_tiles(TaskId t, int place) {
    if (!directory_) return;
    const Location memory = places_[static_cast<std::size_t>(place)].memory;
    for (const TileAccess& a : graph_.accesses(t)) {
      for (const Transfer& x : directory_->acquire(a.tile, memory, a.mode)) (*move_)(x);
    }
  }

  void release_tiles(TaskId t, int place) {
    if (!directory_) return;
    const Location memory = places_[static_cast<std::size_t>(place)].memory;
    for (const TileAccess& a : graph_.accesses(t)) directory_->release(a.tile, memory);
  }

  void work(int place, int worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] {
        return error_ || left_ == 0 || !ready_[static_cast<std::size_t>(place)].empty();
      });
      if (error_ || left_ == 0) return;
      const TaskId t = pop_ready(place);
      TaskRecord& r = report_.records[static_cast<std::size_t>(t)];
      const bool prefetched = acquired_[static_cast<std::size_t>(t)] != 0;
      const std::int64_t acquired = r.acquired;
      r = TaskRecord{t, place, worker, 0, 0, events_++, 0, acquired, prefetched};
      ++running_;
      bool running = true;
      try {
        if (prefetched) {
          --prefetched_[static_cast<std::size_t>(place)];
          ++report_.places[static_cast<std::size_t>(place)].prefetched;
        } else {
          acquire_tiles(t, place);
          acquired_[static_cast<std::size_t>(t)] = 1;
          r.acquired = r.started;
        }
        if (fence_ && prefetches(place)) (*fence_)(place);
        top_up(place);
        lock.unlock();
        r.start_s = since_start();
        body_(t, place);
        r.end_s = since_start();
        lock.lock();
        --running_;
        running = false;
        release_tiles(t, place);
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        if (running) --running_;
        if (!error_) error_ = std::current_exception();
        wake();
        return;
      }
      if (!finish(t, place)) return;
    }
  }

  // Under the lock: task t has ended at `place`; its successors whose last predecessor it was
  // become ready. False when one of them can run nowhere (the run's error is then set).
  bool finish(TaskId t, int place) {
    TaskRecord& r = report_.records[static_cast<std::size_t>(t)];
    r.ended = events_++;
    PlaceReport& p = report_.places[static_cast<std::size_t>(place)];
    ++p.tasks;
    p.busy_s += r.end_s - r.start_s;
    try {
      for (const TaskId s : graph_.successors(t)) {
        if (--pending_[static_cast<std::size_t>(s)] == 0) push_ready(s);
      }
    } catch (...) {  // a task no place can run
      if (!error_) error_ = std::current_exception();
      wake();
      return false;
    }
    backlog_[static_cast<std::size_t>(place)] -= expected_[static_cast<std::size_t>(t)];
    --left_;
    wake();
    return true;
  }

  // The calling thread's loop over the message place: starts what is ready, polls for ends,
  // and sleeps briefly only while nothing changed. Messages in flight are served to their end
  // even after an error elsewhere: the other processes wait for them.
  void serve_messages() {
    const int place = messages_->place;
    std::vector<TaskId> starting;
    std::vector<TaskId> ended;
    std::int64_t in_flight = 0;
    Clock::time_point quiet_since = Clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      auto& ready = ready_[static_cast<std::size_t>(place)];
      const bool stopping = error_ != nullptr || left_ == 0;
      if (stopping && in_flight == 0) break;
      message_work_ = false;  // what is ready now is started below
      starting.clear();
      while (!stopping && !ready.empty()) {
        const TaskId t = pop_ready(place);
        TaskRecord& r = report_.records[static_cast<std::size_t>(t)];
        r = TaskRecord{t, place, 0, 0, 0, events_++, 0, 0, false};
        r.acquired = r.started;
        try {
          acquire_tiles(t, place);
        } catch (...) {
          if (!error_) error_ = std::current_exception();
          wake();
          break;
        }
        starting.push_back(t);
      }
      lock.unlock();
      for (const TaskId t : starting) {
        report_.records[static_cast<std::size_t>(t)].start_s = since_start();
        messages_->start(t);
      }
      in_flight += static_cast<std::int64_t>(starting.size());
      ended.clear();
      if (in_flight > 0) messages_->poll(ended);
      lock.lock();
      for (const TaskId t : ended) {
        report_.records[static_cast<std::size_t>(t)].end_s = since_start();
        release_tiles(t, place);
        --in_flight;
        if (!finish(t, place)) break;
      }
      if (!starting.empty() || !ended.empty()) {
        quiet_since = Clock::now();
      } else {
        // Nothing to start and nothing ended: wait for a message task to become ready (which
        // wakes this thread at once), or poll again after a pause that grows with the quiet time,
        // from 10 µs up to 200 µs while no worker computes and 1 ms while one does: where this
        // thread shares a core with the workers, polling must not take it from them (measured:
        // kernels 25 % slower with a 20 µs poll at 2 processes on 2 cores), and a process with
        // nothing to do but wait for a message learns of it within a fifth of a millisecond.
        const auto quiet =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - quiet_since);
        const auto longest = std::chrono::microseconds(running_ > 0 ? 1000 : 200);
        const auto pause = in_flight > 0
                               ? std::clamp(quiet / 8, std::chrono::microseconds(10), longest)
                               : std::chrono::microseconds(2000);
        if (!message_work_ && error_ == nullptr && left_ > 0) {
          messages_changed_.wait_for(lock, pause);
        }
      }
    }
  }

  const TaskGraph& graph_;
  std::span<const Place> places_;
  std::vector<int> place_of_;  // any_place until the task is ready, then where it runs
  const TaskBody& body_;
  TileDirectory* directory_;
  const TileMover* move_;
  const TaskCost* cost_;
  const Messages* messages_;
  const std::function<void(int)>* fence_;
  const std::vector<double> priority_;
  std::vector<std::size_t> pending_;        // per task: predecessors not ended
  std::vector<std::vector<TaskId>> ready_;  // per place: a heap by priority
  std::vector<double> expected_;            // per task placed when ready: its cost there
  std::vector<double> backlog_;             // per place: expected seconds queued and running
  std::int64_t left_;                       // tasks not ended
  int running_ = 0;                         // tasks in the workers' bodies
  std::vector<char> acquired_;              // per task: its tiles acquired (prefetched or run)
  std::vector<int> prefetched_;             // per place: tasks waiting with their tiles held
  std::size_t largest_task_bytes_ = 0;      // with a directory: the most one task holds
  std::int64_t events_ = 0;
  std::exception_ptr error_;
  ExecutionReport report_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::condition_variable messages_changed_;  // the message thread's (serve_messages)
  bool message_work_ = false;                 // a message task became ready since it last woke
};

}  // namespace

ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        const ExecuteOptions& options) {
  check(graph, places, place_of, options);
  return Run(graph, places, place_of, body, options).go();
}

ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body) {
  return execute(graph, places, place_of, body, ExecuteOptions{});
}

ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        TileDirectory& directory, const TileMover& move) {
  return execute(graph, places, place_of, body,
                 ExecuteOptions{.directory = &directory, .move = &move});
}

ExecutionReport execute(const TaskGraph& graph, std::span<const Place> places,
                        std::span<const int> place_of, const TaskBody& body,
                        TileDirectory& directory, const TileMover& move, const TaskCost& cost) {
  return execute(graph, places, place_of, body,
                 ExecuteOptions{.directory = &directory, .move = &move, .cost = &cost});
}

}  // namespace hit::runtime
