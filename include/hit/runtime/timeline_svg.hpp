#pragma once
// A picture of one execution of a task graph (docs/runtime.md, "Timeline"): one lane per worker
// of each place, one bar per task from its start to its end, coloured by the task's kind (a
// legend names the kinds), its description as the bar's tooltip, and each place's idle share of
// the span beside its name.

#include <functional>
#include <span>
#include <string>

#include "hit/runtime/executor.hpp"

namespace hit::runtime {

struct TimelineText {
  std::string title;
  std::span<const std::string> places;          // a name per place of the report
  std::function<std::string(TaskId)> kind;      // the colour key, e.g. "gemm"
  std::function<std::string(TaskId)> describe;  // the tooltip, e.g. "gemm (3,1) k=0"
};

// The SVG text. Error(invalid_argument) when `text.places` does not name every place of the
// report, or a record names a place the report lacks.
[[nodiscard]] std::string timeline_svg(const ExecutionReport& report, const TimelineText& text);

}  // namespace hit::runtime
