// The timeline of a run as trace events (event_trace.hpp), in the JSON object format of Chrome's
// and Perfetto's trace viewers: "X" events with a start and a duration, "i" instants, and "M"
// metadata naming each process and each of its tracks.
#include "hit/core/event_trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"

namespace hit {

EventTrace::EventTrace(Environment& env) {
  if (const auto path = env.config().get("trace")) path_ = *path;
}

void EventTrace::span(std::string_view track, std::string_view category, std::string name,
                      double begin_s, double end_s, Args args) {
  if (!enabled()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(Event{std::string(track), std::string(category), std::move(name), begin_s,
                          std::max(end_s - begin_s, 0.0), std::move(args)});
}

void EventTrace::instant(std::string_view track, std::string_view category, std::string name,
                         double at_s, Args args) {
  if (!enabled()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(
      Event{std::string(track), std::string(category), std::move(name), at_s, -1, std::move(args)});
}

void EventTrace::begin(const void* key, std::string_view track, std::string_view category,
                       std::string name, Args args) {
  if (!enabled()) return;
  const double at = now();
  const std::lock_guard<std::mutex> lock(mutex_);
  open_[key] =
      Event{std::string(track), std::string(category), std::move(name), at, 0, std::move(args)};
}

void EventTrace::finish(const void* key) {
  if (!enabled()) return;
  const double at = now();
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = open_.find(key);
  if (it == open_.end()) return;
  Event e = std::move(it->second);
  open_.erase(it);
  e.duration_s = std::max(at - e.begin_s, 0.0);
  events_.push_back(std::move(e));
}

std::size_t EventTrace::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

void EventTrace::write(MPI_Comm comm, const std::string& process_name) const {
  if (!enabled()) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<Event> events;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    events = events_;
  }
  double origin = std::numeric_limits<double>::infinity();
  for (const Event& e : events) origin = std::min(origin, e.begin_s);
  allreduce_in_place(&origin, 1, MPI_DOUBLE, MPI_MIN, comm);
  if (!std::isfinite(origin)) origin = 0;

  // This process's events as JSON text, its tracks numbered in order of first use.
  std::string mine;
  const auto add = [&](const nlohmann::json& j) {
    if (!mine.empty()) mine += ",\n";
    mine += j.dump();
  };
  add({{"ph", "M"}, {"pid", rank}, {"name", "process_name"}, {"args", {{"name", process_name}}}});
  add({{"ph", "M"},
       {"pid", rank},
       {"name", "process_sort_index"},
       {"args", {{"sort_index", rank}}}});
  std::map<std::string, int> tracks;
  for (const Event& e : events) {
    auto [it, fresh] = tracks.emplace(e.track, static_cast<int>(tracks.size()));
    if (fresh) {
      add({{"ph", "M"},
           {"pid", rank},
           {"tid", it->second},
           {"name", "thread_name"},
           {"args", {{"name", e.track}}}});
    }
    nlohmann::json j = {{"name", e.name},
                        {"cat", e.category},
                        {"pid", rank},
                        {"tid", it->second},
                        {"ts", (e.begin_s - origin) * 1e6}};
    if (e.duration_s < 0) {
      j["ph"] = "i";
      j["s"] = "t";
    } else {
      j["ph"] = "X";
      j["dur"] = e.duration_s * 1e6;
    }
    if (!e.args.empty()) {
      nlohmann::json args = nlohmann::json::object();
      for (const auto& [k, v] : e.args) args[k] = v;
      j["args"] = std::move(args);
    }
    add(j);
  }

  const std::vector<std::string> all = gather(mine, 0, comm);
  collectively(comm, [&] {
    if (rank != 0) return;
    std::string text = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    for (const std::string& part : all) {
      if (part.empty()) continue;
      if (!first) text += ",\n";
      text += part;
      first = false;
    }
    text += "\n]}\n";
    write_file_atomically(path_, text);
  });
}

EventTrace& event_trace(Environment& env) {
  return env.extension<EventTrace>();
}

}  // namespace hit
