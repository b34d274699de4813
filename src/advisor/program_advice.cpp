// The advisor of any program: dry runs on the candidates, their steps priced and ranked
// (docs/advisor.md, "Any program").
#include "hit/advisor/program_advice.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "costs.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/timer.hpp"
#include "hit/core/units.hpp"
#include "hit/layout.hpp"
#include "hit/topology/physical_topology.hpp"
#include "task_schedule.hpp"

namespace hit::advisor {

std::vector<TraceStep> trace_steps(const ProgramTrace& trace, const Machine& machine, int proc) {
  std::vector<TraceStep> steps;
  TraceStep step;
  bool touched = false;
  std::map<const void*, double> in_flight;  // started communication -> its cost
  for (const ProgramTrace::Event& e : trace.events()) {
    switch (e.kind) {
      case ProgramTrace::Event::Kind::launch: {
        const TracedLaunch& l = e.launch;
        const Kernel kind =
            l.irregular ? Kernel::spmv : (l.compute_bound ? Kernel::gemm : Kernel::stencil);
        const auto bytes = static_cast<std::uint64_t>(l.problem_bytes);
        const double kernel = machine.own_seconds(proc, kind, l.flops, bytes) +
                              machine.staging_seconds(proc, l.staged_bytes);
        const double launch = machine.launch_seconds(proc);
        if (in_flight.empty()) {
          step.pre_kernel_s += kernel;
          step.pre_launch_s += launch;
          step.pre_flops += l.flops;
        } else {
          step.post_kernel_s += kernel;
          step.post_launch_s += launch;
          step.post_flops += l.flops;
        }
        step.problem_bytes = std::max(step.problem_bytes, l.problem_bytes);
        touched = true;
        break;
      }
      case ProgramTrace::Event::Kind::comm_start: {
        double cost = machine.staging_seconds(proc, e.staged_bytes);
        for (const TracedMessage& m : e.messages) {
          if (m.rounds > 0 && m.peer >= 0) {
            cost += m.rounds * (m.received ? machine.message_seconds(m.peer, proc, 1, m.bytes)
                                           : machine.message_seconds(proc, m.peer, 1, m.bytes));
          }
          cost += machine.gather_seconds(proc, m.runs, m.bytes);
        }
        in_flight[e.comm] += cost;
        touched = true;
        break;
      }
      case ProgramTrace::Event::Kind::tasks: {
        // The graph runs on its own: what came before it is a step of its own.
        if (touched && in_flight.empty()) {
          steps.push_back(step);
          step = {};
          touched = false;
        }
        const detail::TaskSchedule s = detail::simulate_tasks(*e.graph, e.workers, machine);
        const auto p = static_cast<std::size_t>(proc);
        // A process's compute is its workers' busy time over their number (what its run would
        // last with none idle); the schedule's length says how long it lasts.
        const double workers = std::max(s.workers[p], 1);
        TraceStep graph;
        graph.post_kernel_s = s.kernel_s[p] / workers;
        graph.post_launch_s = s.launch_s[p] / workers;
        graph.post_flops = s.flops[p];
        graph.comm_s = s.comm_s[p];
        graph.problem_bytes = s.problem_bytes[p];
        graph.span_s = s.makespan_s;
        steps.push_back(graph);
        break;
      }
      case ProgramTrace::Event::Kind::comm_wait: {
        const auto it = in_flight.find(e.comm);
        if (it == in_flight.end()) break;  // waited for twice, or never started
        step.comm_s += it->second;
        in_flight.erase(it);
        if (in_flight.empty()) {
          steps.push_back(step);
          step = {};
          touched = false;
        }
        break;
      }
    }
  }
  // Communication started and never waited for still costs its time before the end.
  for (const auto& [comm, cost] : in_flight) step.comm_s += cost;
  if (touched) steps.push_back(step);
  return steps;
}

Prediction predict_steps(const std::vector<std::vector<TraceStep>>& steps, const Machine& machine) {
  if (static_cast<int>(steps.size()) != machine.procs()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("the steps of {} processes for a machine of {}", steps.size(),
                            machine.procs()));
  }
  Prediction out;
  out.procs.resize(steps.size());
  std::size_t count = 0;
  for (const auto& s : steps) count = std::max(count, s.size());
  std::vector<double> before(steps.size());
  for (std::size_t i = 0; i < count; ++i) {
    detail::StepMax step;
    for (std::size_t p = 0; p < steps.size(); ++p) {
      before[p] = out.procs[p].compute_s;
      if (i >= steps[p].size()) continue;
      const TraceStep& s = steps[p][i];
      const auto bytes = static_cast<std::uint64_t>(s.problem_bytes);
      step.parts.push_back({.proc = static_cast<int>(p),
                            .kernel = s.pre_kernel_s + s.post_kernel_s,
                            .launch = s.pre_launch_s + s.post_launch_s,
                            .comm = s.comm_s,
                            .flops = s.pre_flops + s.post_flops,
                            .problem_bytes = bytes});
      out.procs[p].bytes = std::max(out.procs[p].bytes, bytes);
    }
    // The contention for cores and shared devices stretches each process's launches alike.
    step.close(machine, out.procs);
    // Each process: its launches before the communication, then the longer of the others and
    // the communication; the step ends with the last of them, and no sooner than the processes
    // of a shared device take their turns.
    double end = step.compute;
    for (std::size_t p = 0; p < steps.size(); ++p) {
      if (i >= steps[p].size()) continue;
      const TraceStep& s = steps[p][i];
      const double raw = s.pre_kernel_s + s.pre_launch_s + s.post_kernel_s + s.post_launch_s;
      const double stretch = raw > 0 ? (out.procs[p].compute_s - before[p]) / raw : 1.0;
      end = std::max(end, stretch * (s.pre_kernel_s + s.pre_launch_s) +
                              std::max(stretch * (s.post_kernel_s + s.post_launch_s), s.comm_s));
      end = std::max(end, s.span_s);
    }
    out.compute_s += step.compute;
    out.comm_s += step.comm;
    out.predicted_s += end;
  }
  detail::finish(out, machine);
  return out;
}

Machine run_machine(Environment& env) {
  const PhysicalTopology& physical = PhysicalTopology::of(env);
  std::vector<DeviceBinding> devices = physical.bindings();
  devices.resize(static_cast<std::size_t>(env.size()));
  // Nodes of consecutive ranks, as many on each, are what the machine model describes; any
  // other placement is priced as one node.
  const auto node = [&](int p) { return physical.ranks()[static_cast<std::size_t>(p)].node; };
  int per_node = 1;
  while (per_node < env.size() && node(per_node) == node(0)) ++per_node;
  for (int p = 1; p < env.size(); ++p) {
    const bool starts_node = p % per_node == 0;
    if ((node(p) != node(p - 1)) != starts_node) return Machine(std::move(devices), 0);
  }
  return Machine(std::move(devices), per_node);
}

namespace {

// The program's standard output closed for the length of a dry run: what it prints of results
// that were never computed is not the advice.
class QuietStdout {
 public:
  QuietStdout() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null >= 0) ::dup2(null, STDOUT_FILENO);
    if (null >= 0) ::close(null);
  }
  ~QuietStdout() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      ::dup2(saved_, STDOUT_FILENO);
      ::close(saved_);
    }
  }
  QuietStdout(const QuietStdout&) = delete;
  QuietStdout& operator=(const QuietStdout&) = delete;

 private:
  int saved_ = -1;
};

// The Environment's trace for the length of a dry run.
class TraceScope {
 public:
  TraceScope(Environment& env, ProgramTrace& trace) : env_(env), before_(env.set_trace(&trace)) {}
  ~TraceScope() { env_.set_trace(before_); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Environment& env_;
  ProgramTrace* before_;
};

// The program's body, dry-run on `candidate` (nothing: as written), its steps recorded. A
// failure here is announced in the stretch, as a run would announce it, and rethrown.
ProgramTrace run_dry(Environment& env, int argc, char** argv, const ProgramBody& body,
                     std::optional<std::string> candidate) {
  ProgramTrace trace(std::move(candidate));
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  const QuietStdout quiet;
  const TraceScope scope(env, trace);
  try {
    // The exit status of a run whose kernels did not run (a --check that finds them wrong) says
    // nothing of the layout.
    (void)body(env, argc, args.data());
  } catch (const std::exception& e) {
    // The others stop waiting for this process in the program's collectives.
    env.announce_failure(e);
    throw;
  }
  return trace;
}

// Every process's steps, on every process.
std::vector<std::vector<TraceStep>> all_steps(Environment& env,
                                              const std::vector<TraceStep>& mine) {
  constexpr int doubles = 9;
  static_assert(sizeof(TraceStep) == doubles * sizeof(double), "a step travels as nine doubles");
  int count = static_cast<int>(mine.size());
  allreduce_in_place(&count, 1, MPI_INT, MPI_MAX, env.comm());
  std::vector<TraceStep> padded = mine;
  padded.resize(static_cast<std::size_t>(count));
  std::vector<TraceStep> every(padded.size() * static_cast<std::size_t>(env.size()));
  allgather(padded.data(), count * doubles, MPI_DOUBLE, every.data(), env.comm());
  std::vector<std::vector<TraceStep>> out(static_cast<std::size_t>(env.size()));
  for (std::size_t p = 0; p < out.size(); ++p) {
    const auto first = every.begin() + static_cast<std::ptrdiff_t>(p * padded.size());
    out[p].assign(first, first + count);
    // A process with fewer steps ends earlier: its padding costs nothing.
    const TraceStep zero{};
    while (!out[p].empty() && std::memcmp(&out[p].back(), &zero, sizeof(TraceStep)) == 0) {
      out[p].pop_back();
    }
  }
  return out;
}

// A communicator of the advisor's own, duplicated from the run's: its agreements never match a
// collective of the program that a process may still be in.
class AgreementComm {
 public:
  explicit AgreementComm(MPI_Comm run) { check_mpi(MPI_Comm_dup(run, &comm_), "MPI_Comm_dup"); }
  ~AgreementComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Comm_free(&comm_);
  }
  AgreementComm(const AgreementComm&) = delete;
  AgreementComm& operator=(const AgreementComm&) = delete;
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// How long a process that failed in a dry run waits for the others to end theirs before it
// takes its failure for its own: its announcement releases them from the program's waits, but a
// process in a blocking MPI call of the program's own would wait forever.
constexpr double agreement_patience_s = 30;

// Where a dry run failed on this process: its rank when the failure was its own, size + rank
// when it was agreed or announced by another process (its message names that one), 2 size when
// it did not fail.
int failure_rank(const Environment& env, const std::exception_ptr& failure) {
  if (!failure) return 2 * env.size();
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return e.everywhere() ? env.size() + env.rank() : env.rank();
  } catch (...) {
    return env.rank();
  }
}

// One dry run in a stretch of its own (Environment::Isolation), its outcome agreed: the trace,
// or the message of the lowest process whose failure was its own (else of the lowest that
// failed), the same on every process. A process whose failure the others do not reach in time
// rethrows it, and the run ends as a run ends on a failure one process saw.
struct DryRun {
  ProgramTrace trace;
  std::optional<std::string> failure;
};

DryRun dry_run(Environment& env, MPI_Comm agreement, int argc, char** argv, const ProgramBody& body,
               std::optional<std::string> candidate) {
  DryRun out;
  Environment::Isolation isolated(env);
  std::exception_ptr failure;
  try {
    out.trace = run_dry(env, argc, argv, body, std::move(candidate));
  } catch (const std::exception&) {
    failure = std::current_exception();
  }
  isolated.end();
  // Every process's failure and the announcements it sent and took in the stretch.
  const std::array<int, 3> mine = {failure_rank(env, failure), isolated.announced() ? 1 : 0,
                                   isolated.notices_taken()};
  std::vector<int> all(3 * static_cast<std::size_t>(env.size()));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(mine.data(), 3, MPI_INT, all.data(), 3, MPI_INT, agreement, &request),
            "MPI_Iallgather");
  const Timer waited;
  for (int done = 0;;) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) break;
    if (failure && waited.seconds() > agreement_patience_s) {
      // The request stays with MPI: the run ends with this failure.
      std::rethrow_exception(failure);
    }
    env.check_announcements();
    ::usleep(200);
  }
  int lowest = 2 * env.size();
  int addressed = 0;  // announcements sent to this process
  for (int p = 0; p < env.size(); ++p) {
    lowest = std::min(lowest, all[3 * static_cast<std::size_t>(p)]);
    if (p != env.rank()) addressed += all[3 * static_cast<std::size_t>(p) + 1];
  }
  isolated.settle(addressed - isolated.notices_taken(), lowest != 2 * env.size());
  if (lowest == 2 * env.size()) return out;
  lowest %= env.size();
  std::string message;
  if (env.rank() == lowest) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  broadcast(message, lowest, agreement);
  out.failure = std::move(message);
  return out;
}

Prediction price(Environment& env, const ProgramTrace& trace, const Machine& machine) {
  return predict_steps(all_steps(env, trace_steps(trace, machine, env.rank())), machine);
}

// Whether the output is JSON: "json"; a table for "1", "true", "yes" or "table".
bool json_output(const Environment& env) {
  const std::string v = env.config().get("advise").value_or("1");
  if (v == "json") return true;
  if (v == "1" || v == "true" || v == "yes" || v == "table") return false;
  throw Error::everywhere(ErrorKind::invalid_argument,
                          fmt::format("{} '{}': give 1 (a table) or json",
                                      env.config().source("advise").value_or("HIT_ADVISE"), v));
}

std::string variable_of(const std::string& label) {
  std::string out = "HIT_LAYOUT_";
  for (char c : label) {
    out += std::isalnum(static_cast<unsigned char>(c)) != 0
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

std::string shell_word(const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_.:=,/-+").find(c) != std::string_view::npos;
  });
  if (plain && !s.empty()) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The variables that run the program on `layout`: one per layout setting it resolved.
std::string setting_words(const std::vector<std::string>& labels, const std::string& layout) {
  std::string out;
  for (const std::string& label : labels)
    out += variable_of(label) + "=" + shell_word(layout) + " ";
  return out;
}

struct Report {
  std::string_view program;
  const Machine& machine;
  const ProgramTrace& own;
  const Prediction& as_written;
  const Advice& advice;
};

std::string devices_text(const Machine& machine) {
  std::string out;
  for (const DeviceBinding& d : machine.devices()) out += (out.empty() ? "" : ", ") + d.str();
  return out;
}

// What the candidates lay out, as the table's first line names it.
std::string array_text(const TracedArray& a) {
  if (!a.sparse) return "arrays of " + a.shape;
  return fmt::format("a sparse matrix of {} with {:.0f} nonzeros", a.shape, a.nonzeros);
}

std::string table(const Report& r) {
  const TracedArray& first = r.own.arrays().front();
  std::string out = fmt::format(
      "{} --hit-advise: {} processes ({}); {} on {}; a dry run (no kernel ran), network assumed, "
      "not calibrated\n",
      r.program, r.machine.procs(), devices_text(r.machine), array_text(first), first.topology);
  out += fmt::format("as written: {:.4g} s predicted\n", r.as_written.predicted_s);
  out += fmt::format("{:>4}  {:<44} {:>11} {:>10} {:>10} {:>9} {:>11}  {}\n", "rank", "layout",
                     "predicted_s", "compute_s", "comm_s", "imbalance", "max memory", "fits");
  int shown = 0;
  for (const Candidate& c : r.advice.candidates) {
    const Prediction& p = c.prediction;
    const std::string spec =
        c.spec.layout.size() <= 44 ? c.spec.layout : c.spec.layout.substr(0, 41) + "...";
    out += fmt::format("{:>4}  {:<44} {:>11.4g} {:>10.4g} {:>10.4g} {:>9.3f} {:>11}  {}\n", ++shown,
                       spec, p.predicted_s, p.compute_s, p.comm_s, p.imbalance,
                       human_bytes(double(p.max_bytes)), p.fits ? "yes" : "no: " + p.fit_note);
  }
  if (!r.advice.rejected.empty()) {
    out += fmt::format("not applicable ({}):\n", r.advice.rejected.size());
    for (const Rejection& j : r.advice.rejected) {
      out += fmt::format("  {}: {}\n", j.spec.layout, j.reason);
    }
  }
  if (!r.advice.candidates.empty()) {
    out += "run the best:\n  " +
           setting_words(r.own.settings(), r.advice.candidates.front().spec.layout) +
           std::string(r.program) + "\n";
  }
  return out;
}

std::string json_text(const Report& r) {
  using json = nlohmann::ordered_json;
  const TracedArray& first = r.own.arrays().front();
  json candidates = json::array();
  for (const Candidate& c : r.advice.candidates) {
    const Prediction& p = c.prediction;
    json item = {
        {"layout", c.spec.layout}, {"predicted_s", p.predicted_s}, {"compute_s", p.compute_s},
        {"comm_s", p.comm_s},      {"imbalance", p.imbalance},     {"max_bytes", p.max_bytes},
        {"fits", p.fits}};
    if (!p.fits) item["fit_note"] = p.fit_note;
    json procs = json::array();
    for (const ProcessCost& q : p.procs) {
      procs.push_back({{"flops", q.flops},
                       {"compute_s", q.compute_s},
                       {"launch_s", q.launch_s},
                       {"comm_s", q.comm_s},
                       {"bytes", q.bytes}});
    }
    item["procs"] = std::move(procs);
    item["command"] = setting_words(r.own.settings(), c.spec.layout) + std::string(r.program);
    candidates.push_back(std::move(item));
  }
  json rejected = json::array();
  for (const Rejection& j : r.advice.rejected) {
    rejected.push_back({{"layout", j.spec.layout}, {"reason", j.reason}});
  }
  json arrays = json::array();
  for (const TracedArray& a : r.own.arrays()) {
    json item = {{"setting", a.setting}, {"shape", a.shape}, {"topology", a.topology}};
    if (a.sparse) {
      item["sparse"] = true;
      item["nonzeros"] = a.nonzeros;
    }
    arrays.push_back(std::move(item));
  }
  json out = {{"program", std::string(r.program)},
              {"procs", r.machine.procs()},
              {"devices", devices_text(r.machine)},
              {"settings", r.own.settings()},
              {"arrays", std::move(arrays)},
              {"topology", first.topology},
              {"as_written_s", r.as_written.predicted_s},
              {"candidates", std::move(candidates)},
              {"rejected", std::move(rejected)}};
  return out.dump(2) + "\n";
}

}  // namespace

int advise_program(Environment& env, std::string_view program, int argc, char** argv,
                   const ProgramBody& body) {
  const bool json = json_output(env);
  const AgreementComm agreement(env.comm());
  DryRun as_is = dry_run(env, agreement.get(), argc, argv, body, std::nullopt);
  if (as_is.failure) throw Error::everywhere(ErrorKind::invalid_argument, *as_is.failure);
  // After the program's first dry run: the devices it binds (its --devices) are the machine's.
  const Machine machine = run_machine(env);
  const ProgramTrace own = std::move(as_is.trace);
  collectively(env.comm(), [&] {
    if (own.arrays().empty() || own.settings().empty()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} lays out no array from a layout setting (hit::layout_setting): "
                              "--hit-advise ranks the layouts a setting can choose, and it has "
                              "none",
                              program));
    }
  });
  // The kernels' kind, by the work of each: the speeds the balancing candidates weigh by.
  // Compute-bound, irregular, all, the largest launch's tiles.
  std::array<double, 4> flops{0, 0, 0, 0};
  for (const ProgramTrace::Event& e : own.events()) {
    if (e.kind != ProgramTrace::Event::Kind::launch) continue;
    if (e.launch.compute_bound) flops[0] += e.launch.flops;
    if (e.launch.irregular) flops[1] += e.launch.flops;
    flops[2] += e.launch.flops;
    flops[3] = std::max(flops[3], e.launch.problem_bytes);
  }
  allreduce_in_place(flops.data(), 4, MPI_DOUBLE, MPI_SUM, env.comm());
  const Kernel kind = flops[0] > 0.5 * flops[2]   ? Kernel::gemm
                      : flops[1] > 0.5 * flops[2] ? Kernel::spmv
                                                  : Kernel::stencil;
  const TracedArray& first = own.arrays().front();
  const Topology topo(first.topology, first.dims, first.procs);
  const CandidateOptions options{.model_files = {}, .share_bytes = flops[3] / env.size()};
  // A sparse matrix's candidates are the sparse layout plug-ins'; whether two give every row the
  // same owner is known once the program has laid its matrix out.
  const std::vector<CandidateSpec> specs =
      first.sparse ? sparse_candidates(env, machine, options)
                   : program_candidates(env, machine, kind, topo, options);

  const Prediction as_written = price(env, own, machine);
  Advice advice;
  std::map<std::string, std::string>
      seen;  // blocks (rows' owners) -> the spec that gave them first
  const auto repeated = [&](const std::string& signature, const CandidateSpec& spec) {
    const auto [earlier, fresh] = seen.try_emplace(signature, spec.layout);
    if (!fresh) {
      advice.rejected.push_back(
          {spec,
           fmt::format("the same {} as {}", first.sparse ? "rows" : "blocks", earlier->second)});
    }
    return !fresh;
  };
  for (const CandidateSpec& spec : specs) {
    if (!first.sparse) {
      // A plug-in refuses a spec on every process alike.
      try {
        if (repeated(
                blocks_signature(layout(Spec::parse(spec.layout), topo, Shape::parse(first.shape))),
                spec)) {
          continue;
        }
      } catch (const Error& e) {
        advice.rejected.push_back({spec, e.what()});
        continue;
      }
    }
    DryRun run = dry_run(env, agreement.get(), argc, argv, body, spec.layout);
    if (run.failure) {
      advice.rejected.push_back({spec, *run.failure});
      continue;
    }
    if (first.sparse && !run.trace.arrays().empty() &&
        repeated(fmt::format("{:x}", run.trace.arrays().front().owners), spec)) {
      continue;
    }
    advice.candidates.push_back({spec, price(env, run.trace, machine)});
  }
  rank(advice);
  if (env.rank() == 0) {
    const Report report{program, machine, own, as_written, advice};
    std::fputs((json ? json_text(report) : table(report)).c_str(), stdout);
    std::fflush(stdout);
  }
  return exit_ok;
}

}  // namespace hit::advisor
