// The timeline of an execution: one bar per task in its worker's lane, placed by its times over
// the span, coloured by its kind with one legend entry per kind, its description escaped as the
// tooltip; names for every place are required.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/runtime/timeline_svg.hpp"

namespace {

using hit::runtime::ExecutionReport;
using hit::runtime::TaskId;
using hit::runtime::TaskRecord;
using hit::runtime::TimelineText;

// Three tasks: two host workers and a device. Task 0 takes the first half of the span on host
// worker 0, task 1 the second half on host worker 1, task 2 the whole span on the device.
ExecutionReport three_tasks() {
  ExecutionReport r;
  r.seconds = 2.0;
  r.records = {{.task = 0, .place = 0, .worker = 0, .start_s = 0.0, .end_s = 1.0},
               {.task = 1, .place = 0, .worker = 1, .start_s = 1.0, .end_s = 2.0},
               {.task = 2, .place = 1, .worker = 0, .start_s = 0.0, .end_s = 2.0}};
  r.places = {{.tasks = 2, .busy_s = 2.0}, {.tasks = 1, .busy_s = 2.0}};
  return r;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::vector<std::string> names = {"host cores", "emu:0"};

TimelineText text_for(const std::vector<std::string>& places) {
  return {.title = "three tasks",
          .places = places,
          .kind = [](TaskId t) { return t == 2 ? std::string("gemm") : std::string("trsm"); },
          .describe = [](TaskId t) { return "task <" + std::to_string(t) + "> & more"; }};
}

TEST(TimelineSvg, OneBarPerTaskInItsWorkersLaneAtItsTimes) {
  const std::string svg = hit::runtime::timeline_svg(three_tasks(), text_for(names));
  EXPECT_EQ(count(svg, "class=\"task\""), 3);
  // Lanes: host #0, host #1, device #0, each labelled once; the host's idle share is
  // 1 - 2 s / (2 s x 2 workers) = 50 %, the device's 0 %.
  EXPECT_EQ(count(svg, ">host cores #0 (idle 50 %)<"), 1);
  EXPECT_EQ(count(svg, ">host cores #1<"), 1);
  EXPECT_EQ(count(svg, ">emu:0 #0 (idle 0 %)<"), 1);
  // The bars' x and width: the axis is 720 wide from x = 200; task 1 starts half way.
  const std::regex bar("class=\"task\" x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\"");
  std::vector<std::vector<double>> bars;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it) {
    bars.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3])});
  }
  ASSERT_EQ(bars.size(), 3u);
  // In order of start: task 0 and task 2 at 0 (either first), then task 1.
  EXPECT_DOUBLE_EQ(bars[2][0], 560.0);
  EXPECT_DOUBLE_EQ(bars[2][2], 360.0);
  const double widths[] = {bars[0][2], bars[1][2]};
  EXPECT_DOUBLE_EQ(std::min(widths[0], widths[1]), 360.0);
  EXPECT_DOUBLE_EQ(std::max(widths[0], widths[1]), 720.0);
  // Three different lanes: three different heights.
  EXPECT_NE(bars[0][1], bars[1][1]);
  EXPECT_NE(bars[0][1], bars[2][1]);
  EXPECT_NE(bars[1][1], bars[2][1]);
}

TEST(TimelineSvg, KindsInTheLegendOnceAndDescriptionsEscaped) {
  const std::string svg = hit::runtime::timeline_svg(three_tasks(), text_for(names));
  EXPECT_EQ(count(svg, ">trsm</text>"), 1);
  EXPECT_EQ(count(svg, ">gemm</text>"), 1);
  EXPECT_EQ(count(svg, "task &lt;1&gt; &amp; more"), 1);
  EXPECT_EQ(count(svg, "task <1>"), 0);
  // Two kinds, two colours among the bars.
  const std::regex fill("class=\"task\"[^>]*fill=\"(#[0-9a-f]{6})\"");
  std::vector<std::string> fills;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fill); it != std::sregex_iterator();
       ++it)
    fills.push_back((*it)[1]);
  ASSERT_EQ(fills.size(), 3u);
  std::sort(fills.begin(), fills.end());
  fills.erase(std::unique(fills.begin(), fills.end()), fills.end());
  EXPECT_EQ(fills.size(), 2u);
}

TEST(TimelineSvg, EveryPlaceNeedsAName) {
  const std::vector<std::string> one = {"host cores"};
  try {
    (void)hit::runtime::timeline_svg(three_tasks(), text_for(one));
    ADD_FAILURE() << "one name for two places was taken";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("1 place names for the 2 places"), std::string::npos)
        << e.what();
  }
  ExecutionReport bad = three_tasks();
  bad.records[1].place = 5;
  EXPECT_THROW((void)hit::runtime::timeline_svg(bad, text_for(names)), hit::Error);
}

}  // namespace
