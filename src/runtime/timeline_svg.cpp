// A picture of one execution of a task graph (timeline_svg.hpp).

#include "hit/runtime/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

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
                       xml_escape(text.places[p].substr(0, 20)), key.second,
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

}  // namespace hit::runtime
