// A picture of one execution of a task graph (timeline_svg.hpp).

#include "hit/runtime/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"

namespace hit::runtime {

namespace {

constexpr const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                   "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6"};

}  // namespace

std::string timeline_svg(const ExecutionReport& report, const TimelineText& text) {
  if (text.places.size() != report.places.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("timeline: {} place names for the {} places of the run",
                            text.places.size(), report.places.size()));
  }
  // The lanes: every (place, worker) that ran a task, in place order, then worker order.
  std::map<std::pair<int, int>, std::size_t> lanes;
  std::map<std::string, std::size_t> kinds;  // colour index by first appearance
  std::vector<TaskId> order;
  for (const TaskRecord& r : report.records) {
    if (r.place < 0 || static_cast<std::size_t>(r.place) >= report.places.size()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("timeline: task {} ran on place {}, of {}", r.task, r.place,
                              report.places.size()));
    }
    lanes.emplace(std::make_pair(r.place, r.worker), 0);
    order.push_back(r.task);
  }
  std::size_t lane_count = 0;
  for (auto& [key, index] : lanes) index = lane_count++;
  std::sort(order.begin(), order.end(), [&](TaskId a, TaskId b) {
    return report.records[a].start_s < report.records[b].start_s;
  });
  for (const TaskId t : order) kinds.emplace(text.kind ? text.kind(t) : "task", kinds.size());

  const double span = std::max(report.seconds, 1e-9);
  const double lane_h = 22;
  const double left = 200;
  const double width = 720;
  const double top = 50;
  const double legend_y = top + lane_h * static_cast<double>(lane_count) + 30;
  const double height = legend_y + 30;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"10\" y=\"20\">{}</text>\n"
      "<text x=\"{:.0f}\" y=\"38\">0 .. {:.4f} s, {} tasks</text>\n",
      left + width + 20, height, xml_escape(text.title), left, report.seconds,
      report.records.size());
  // Lane labels: the place's name, its worker, and the place's idle share of its workers' span.
  for (const auto& [key, index] : lanes) {
    const auto p = static_cast<std::size_t>(key.first);
    int workers = 0;
    for (const auto& [other, unused] : lanes) workers += other.first == key.first ? 1 : 0;
    const double idle =
        1.0 - report.places[p].busy_s / (span * static_cast<double>(std::max(workers, 1)));
    const double y = top + lane_h * static_cast<double>(index);
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\">{} #{}{}</text>\n", y + 15,
                       xml_escape(text.places[p].substr(0, 28)), key.second,
                       key.second == 0 ? fmt::format(" (idle {:.0f} %)", 100 * std::max(idle, 0.0))
                                       : std::string());
    svg += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.1f}\" fill=\"#f4f4f4\"/>\n",
        left, y + 2, width, lane_h - 4);
  }
  for (const TaskId t : order) {
    const TaskRecord& r = report.records[t];
    const std::size_t lane = lanes.at({r.place, r.worker});
    const double x0 = left + width * std::clamp(r.start_s / span, 0.0, 1.0);
    const double x1 = left + width * std::clamp(r.end_s / span, 0.0, 1.0);
    const std::size_t colour = kinds.at(text.kind ? text.kind(t) : "task") % std::size(colours);
    svg += fmt::format(
        "<rect class=\"task\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
        "fill=\"{}\" stroke=\"white\" stroke-width=\"0.3\"><title>{} ({:.3f}-{:.3f} ms)</title>"
        "</rect>\n",
        x0, top + lane_h * static_cast<double>(lane) + 3, std::max(x1 - x0, 0.3), lane_h - 6,
        colours[colour], xml_escape(text.describe ? text.describe(t) : fmt::format("task {}", t)),
        1e3 * r.start_s, 1e3 * r.end_s);
  }
  double x = left;
  for (const auto& [name, index] : kinds) {
    svg += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
        x, legend_y - 10, colours[index % std::size(colours)], x + 16, legend_y, xml_escape(name));
    x += 30 + 7.0 * static_cast<double>(name.size());
  }
  svg += "</svg>\n";
  return svg;
}

namespace {

// One line per field: what travels from each process to rank 0. Descriptions and names hold no
// newline (they are one-line texts); a tab cannot confuse the reader, which splits at the first
// fields only.
std::string record_text(const ExecutionReport& report, const TimelineText& text) {
  std::string out;
  for (std::size_t p = 0; p < report.places.size(); ++p) {
    out += fmt::format("P\t{:.9g}\t{}\t{}\n", report.places[p].busy_s, report.places[p].tasks,
                       text.places[p]);
  }
  for (const TaskRecord& r : report.records) {
    out += fmt::format("T\t{}\t{}\t{:.9f}\t{:.9f}\t{}\t{}\n", r.place, r.worker,
                       report.began_s + r.start_s, report.began_s + r.end_s,
                       text.kind ? text.kind(r.task) : "task",
                       text.describe ? text.describe(r.task) : fmt::format("task {}", r.task));
  }
  out += fmt::format("S\t{:.9f}\t{:.9f}\n", report.began_s, report.began_s + report.seconds);
  return out;
}

std::vector<std::string> fields(const std::string& line, std::size_t count) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (out.size() + 1 < count) {
    const std::size_t tab = line.find('\t', at);
    if (tab == std::string::npos) break;
    out.push_back(line.substr(at, tab - at));
    at = tab + 1;
  }
  out.push_back(line.substr(at));
  return out;
}

}  // namespace

std::string timeline_svg(MPI_Comm comm, const ExecutionReport& report, const TimelineText& text) {
  std::string mine;
  collectively(comm, [&] {
    if (text.places.size() != report.places.size()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("timeline: {} place names for the {} places of the run",
                              text.places.size(), report.places.size()));
    }
    mine = record_text(report, text);
  });
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  std::size_t total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
  }
  std::string all(rank == 0 ? total : 0, '\0');
  check_mpi(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                        MPI_CHAR, 0, comm),
            "MPI_Gatherv");
  if (rank != 0) return {};

  // Rank 0: one report of every process's places and tasks, times from the earliest start.
  struct Task {
    std::string kind;
    std::string description;
  };
  ExecutionReport merged;
  std::vector<std::string> names;
  std::vector<Task> tasks;
  std::vector<TaskRecord> records;
  double first = 0;
  double last = 0;
  bool any = false;
  for (int r = 0; r < size; ++r) {
    const std::size_t base = merged.places.size();
    std::istringstream in(
        all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                   static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("P\t", 0) == 0) {
        const std::vector<std::string> f = fields(line, 4);
        merged.places.push_back({std::stoll(f[2]), std::stod(f[1])});
        names.push_back(size > 1 ? fmt::format("rank {}: {}", r, f[3]) : f[3]);
      } else if (line.rfind("T\t", 0) == 0) {
        const std::vector<std::string> f = fields(line, 7);
        TaskRecord t;
        t.task = static_cast<TaskId>(tasks.size());
        t.place = static_cast<int>(base) + std::stoi(f[1]);
        t.worker = std::stoi(f[2]);
        t.start_s = std::stod(f[3]);
        t.end_s = std::stod(f[4]);
        records.push_back(t);
        tasks.push_back({f[5], f[6]});
      } else if (line.rfind("S\t", 0) == 0) {
        const std::vector<std::string> f = fields(line, 3);
        first = any ? std::min(first, std::stod(f[1])) : std::stod(f[1]);
        last = any ? std::max(last, std::stod(f[2])) : std::stod(f[2]);
        any = true;
      }
    }
  }
  for (TaskRecord& t : records) {
    t.start_s -= first;
    t.end_s -= first;
  }
  merged.records = std::move(records);
  merged.seconds = last - first;
  const TimelineText all_text{
      .title = text.title,
      .places = names,
      .kind = [&](TaskId t) { return tasks[static_cast<std::size_t>(t)].kind; },
      .describe = [&](TaskId t) { return tasks[static_cast<std::size_t>(t)].description; }};
  return timeline_svg(merged, all_text);
}

}  // namespace hit::runtime
