#pragma once
// What a program does when it is dry-run rather than run (`--hit-advise`, docs/advisor.md): the
// steps the library sees it take, recorded instead of executed. A launch records the work it
// would do (its points times the kernel's declared flops per point), a communication the
// messages it would send and receive; nothing runs, nothing moves. Layout calls that resolve a
// setting (hit::layout_setting) take the candidate the advisor dry-runs, so the same program is
// priced on every layout it could be given.
//
// The trace lives with the Environment (Environment::trace()) only while a dry run lasts; the
// layers that record into it (layouts, comm, devices) ask for it where they act.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hit {

// One message of a recorded communication as the process that recorded it sees it.
struct TracedMessage {
  int peer = -1;         // rank in the run's communicator
  double bytes = 0;      // its size
  double runs = 1;       // contiguous pieces MPI gathers or scatters it from
  bool received = true;  // false: sent by this process
  // How many times this process waits for the message's time on the wire: 1 for a
  // point-to-point message it receives, 0 for one it sends (MPI sends it meanwhile), a
  // broadcast tree's rounds for its root and for the processes it reaches.
  double rounds = 1;
};

// One recorded launch of this process.
struct TracedLaunch {
  double flops = 0;            // the domain's points times the kernel's flops per point
  double problem_bytes = 0;    // the tiles it works on, as held (ghost cells included)
  double staged_bytes = 0;     // copied between the host and the device for it (tiles not resident)
  bool compute_bound = false;  // dense-product-like (else bound by memory bandwidth)
  bool irregular = false;      // reads through an index (a sparse product): priced as one
};

// A task of a task graph that a dry run did not run (the task runtime's, docs/runtime.md): the
// process that would run it, its work, and the tasks it waits for, earlier in the graph, each with
// the bytes that must travel from that task's process (0 for an order alone).
struct TracedTask {
  struct Wait {
    std::int64_t task = 0;
    double bytes = 0;
    int via = -1;  // the process the bytes pass through first (their tile's owner), or none
  };
  int proc = 0;
  double flops = 0;
  double problem_bytes = 0;  // its tiles
  std::vector<Wait> waits;
};

// The workers one process runs its tasks of a task graph on: on its host's cores and on its
// device (an accelerator's place; a host process has none).
struct TracedWorkers {
  int host = 0;
  int device = 0;
};

// An array the program laid out from a setting (what the advisor's candidates are drawn for):
// its shape and the topology it was laid on.
struct TracedArray {
  std::string setting;   // the setting's name ("layout of 'plate'")
  std::string shape;     // as Shape::str() prints it (a sparse matrix's rows and columns)
  std::string topology;  // the topology's name, dims and processes
  std::vector<int> dims;
  int procs = 0;
  // A sparse matrix's rows (sparse_layout): candidates are the sparse layout plug-ins', and two
  // that give every row the same owner (equal `owners`, a digest of them) are one.
  bool sparse = false;
  double nonzeros = 0;
  std::uint64_t owners = 0;
};

class ProgramTrace {
 public:
  struct Event {
    enum class Kind { launch, comm_start, comm_wait, tasks };
    Kind kind = Kind::launch;
    const void* comm = nullptr;  // the communication started or waited for
    TracedLaunch launch{};
    std::vector<TracedMessage> messages{};
    double staged_bytes = 0;  // of a start: regions of device-resident tiles copied for it
    // Of `tasks`: the whole graph a run over the processes would have run, the same on every
    // process (each runs its own tasks in it, highest bottom level first).
    std::shared_ptr<const std::vector<TracedTask>> graph{};
    std::vector<TracedWorkers> workers{};  // of `tasks`: per process
  };

  ProgramTrace() = default;
  // `candidate`: the layout spec every layout setting resolves to (with "--hit-advise" as its
  // source); nothing: the program's own.
  explicit ProgramTrace(std::optional<std::string> candidate) : candidate_(std::move(candidate)) {}

  const std::optional<std::string>& candidate() const noexcept { return candidate_; }
  static constexpr const char* source = "--hit-advise";

  void launch(const TracedLaunch& launch);
  void comm_start(const void* comm, std::vector<TracedMessage> messages, double staged_bytes);
  void comm_wait(const void* comm);
  // A reduction over the `procs` processes of the program's communicator (hit::allreduce,
  // hit::reduce), as process `rank` takes part: recursive doubling, the whole `bytes` received
  // from one partner per round. It runs in the dry run (the program needs its value) and is
  // recorded as a communication started and waited for at once.
  void reduction(double bytes, int rank, int procs);
  // A task graph run over the processes (the task runtime's ProcessFlow): recorded whole, as
  // every process submits it, and priced by simulating its schedule.
  void tasks(std::vector<TracedTask> graph, std::vector<TracedWorkers> workers);
  void array(TracedArray array);
  // The label of a layout setting the program resolved (hit::layout_setting).
  void setting(std::string label);

  const std::vector<Event>& events() const noexcept { return events_; }
  const std::vector<TracedArray>& arrays() const noexcept { return arrays_; }
  // Labels in first-use order, each once.
  const std::vector<std::string>& settings() const noexcept { return settings_; }

 private:
  std::optional<std::string> candidate_;
  std::vector<Event> events_;
  std::vector<TracedArray> arrays_;
  std::vector<std::string> settings_;
};

}  // namespace hit
