#pragma once
// A picture of one execution of a task graph (docs/runtime.md, "Timeline"): one lane per worker
// of each place, one bar per task from its start to its end, coloured by the task's kind (a
// legend names the kinds), its description as the bar's tooltip, and each place's idle share of
// the span beside its name.

#include <mpi.h>

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

// The same over the processes of `comm` (collective): every process's places become lanes of
// their own, named "rank r: <place>", on one time axis that starts when the first process's run
// began (ExecutionReport::began_s: processes of one node share the clock). The SVG text on rank
// 0, empty elsewhere. Errors as above, on the process whose text is wrong, agreed before the
// gathering.
[[nodiscard]] std::string timeline_svg(MPI_Comm comm, const ExecutionReport& report,
                                       const TimelineText& text);

}  // namespace hit::runtime
