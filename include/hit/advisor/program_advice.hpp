#pragma once
// The advisor for any program (docs/advisor.md, "Any program"): a program started with
// `--hit-advise` (or HIT_ADVISE=1) is dry-run on every candidate layout for the processes and
// devices it was started with, and prints their ranking instead of running. A dry run executes
// the program's own code with the library recording its steps instead of doing them
// (hit/core/program_trace.hpp): its layouts (every one made from hit::layout_setting takes the
// candidate), the messages of its comm plans and its launches with their kernels' declared
// cost (Kernel::cost). The price of a run is read from those steps alone; no formula of the
// program is written anywhere.

#include <string_view>
#include <vector>

#include "hit/advisor/candidates.hpp"
#include "hit/advisor/machine.hpp"
#include "hit/advisor/prediction.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/program.hpp"
#include "hit/core/program_trace.hpp"
#include "hit/topology.hpp"

namespace hit::advisor {

// One step of one process of a dry run: its launches before its communication started (`pre`),
// those while it was in flight (`post`), and the communication it waited for at the step's end.
// Plain numbers, so the steps of every process can be gathered.
struct TraceStep {
  double pre_kernel_s = 0;
  double pre_launch_s = 0;  // launch overhead beyond the kernels
  double pre_flops = 0;
  double post_kernel_s = 0;
  double post_launch_s = 0;
  double post_flops = 0;
  double comm_s = 0;         // messages, their packing and the staging of resident regions
  double problem_bytes = 0;  // the largest launch's tiles
  // A task graph's step (the task runtime): its simulated schedule's length, which the step lasts
  // at least; its tasks count as `post` launches, its messages as the communication they overlap.
  double span_s = 0;
};

// Process `proc`'s trace priced on `machine`, step by step: a step ends where the last
// communication started in it is waited for (Comm::run is a start and a wait), and the launches
// that come after its start overlap with it. A task graph is a step of its own, its schedule
// simulated (every process simulates the whole graph alike).
std::vector<TraceStep> trace_steps(const ProgramTrace& trace, const Machine& machine, int proc);

// The run the steps of every process describe (`steps[p]`: process p's, aligned by index): a
// step lasts until its last process is done with its launches before the communication and then
// the longer of those that overlap it and the communication, the launches stretched by the
// machine's contention for cores and shared devices (as the application predictions price
// theirs), and no shorter than the turns of a shared device's processes.
Prediction predict_steps(const std::vector<std::vector<TraceStep>>& steps, const Machine& machine);

// The machine a program was started on: its processes' device bindings and nodes (the
// physical topology's), the host and GPU speeds assumed, no models. Collective on first use.
Machine run_machine(Environment& env);

// The candidates for a program that lays its arrays out on `topo`: every layout plug-in's
// candidates on it, with the speeds of `kernel` (the topology is the program's code; the layout
// is what a setting changes).
std::vector<CandidateSpec> program_candidates(Environment& env, const Machine& machine,
                                              Kernel kernel, const Topology& topo,
                                              const CandidateOptions& options);

// Ranks the candidates as Advice says.
void rank(Advice& advice);

// What run_program calls in place of `body` when advice is asked (hit/program.hpp). Collective.
// Prints on rank 0 a table (HIT_ADVISE=1, --hit-advise) or JSON (HIT_ADVISE=json,
// --hit-advise=json); returns the exit status.
int advise_program(Environment& env, std::string_view program, int argc, char** argv,
                   const ProgramBody& body);

}  // namespace hit::advisor
