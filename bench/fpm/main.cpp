// hit-bench-fpm: what functional performance models buy on unlike devices (issue 5, docs/fpm.md).
//
// On the devices the ranks are bound to (by default three emulated accelerators whose speeds
// relative to the fastest are 1, 1/3.8 and 1/14, the last one faster below a memory cliff), the
// same kernel workload of n units is
// distributed three ways and run:
//   even  equal shares (the homogeneous baseline);
//   cpm   one measurement per device at n/p, shares proportional to the measured speeds;
//   fpm   partial-FPM dynamic partitioning (partition_dynamic): measure, add the points,
//   repartition
//         until the measured times agree.
// Each distribution's workload runs `--runs` times (interleaved with the others so drift of a
// shared machine affects all alike, one untimed warm-up before every timed run, all ranks starting
// together); per-rank compute time is the kernel's launch time. Reported: median makespan (max
// per-rank time of a run) with min–max, imbalance = max/mean of the per-rank median compute times,
// speed-up over even, and for cpm/fpm the cost of partitioning (and fpm's iterations).
//
//   mpiexec -n 3 hit-bench-fpm [--devices SPEC] [--kernel gemm|jacobi|spmv] [--n UNITS] [--runs 5]
//                              [--eps 0.02] [--json] [--markdown FILE]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/balance/benchmark.hpp"
#include "hit/balance/dynamic_partition.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/core/timer.hpp"
#include "hit/device.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/statistics.hpp"
#include "hit/program.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
namespace balance = hit::balance;
namespace fpm = hit::fpm;

// Speeds relative to the first device: 1, 1/3.8 and, for the third, 1/2.5 while a launch stages
// less than 40 MiB (about 290 blocks of gemm(b=128)) and 1/14 beyond: a memory cliff. Its share n/p
// of the default n lies beyond the cliff, its balanced share below it. Every device is slower than
// the host (the fastest by 2) and scales the CPU time of its one-thread body: each rank then sleeps
// most of a launch, so three ranks need less than one core of real work between them and the
// emulation stays exact on a machine with fewer cores than ranks (docs/fpm.md).
constexpr const char* default_devices =
    "emu:0(slowdown=2,clock=cpu,cores=1),emu:1(slowdown=7.6,clock=cpu,cores=1),"
    "emu:2(slowdown=5;28@40MiB,clock=cpu,cores=1)";

struct Options {
  std::string devices = default_devices;
  std::string kernel = "gemm";
  int block = 128;
  std::int64_t columns = 4096;
  std::string partition;
  std::int64_t n = 960;
  int runs = 5;
  double eps = 0.02;
  int max_iterations = 12;
  std::string algorithm = "geometric";
  double precision = 0.025;
  int min_reps = 5;
  double max_time = 2.0;
  bool json = false;
  std::string markdown;
  std::string label = "default";
  std::string measured_at;  // e.g. "commit abc1234" (bench/fpm/fpm_bench.py passes it)
  bool quiet = false;
};

struct Strategy {
  std::string name;
  fpm::Distribution dist;
  double partition_seconds = 0;  // cost of building the distribution (its measurements)
  int iterations = 0;            // fpm: dynamic-partitioning steps
  std::string status;            // fpm: how the loop ended
  std::vector<double> probe_t;   // cpm: the one measurement of each device (at n/p)
  nlohmann::json steps = nlohmann::json::array();  // fpm: what every step measured
  // Filled by the runs: per run, per rank compute seconds.
  std::vector<std::vector<double>> times;
};

double median_of(std::vector<double> v) {
  return v.empty() ? 0 : fpm::median(v);
}

struct Result {
  double makespan = 0, makespan_min = 0, makespan_max = 0;
  double imbalance = 0;
  std::vector<double> rank_median;
};

Result summarise(const Strategy& s, int ranks) {
  Result r;
  std::vector<double> spans;
  for (const auto& run : s.times) spans.push_back(*std::max_element(run.begin(), run.end()));
  r.makespan = median_of(spans);
  r.makespan_min = *std::min_element(spans.begin(), spans.end());
  r.makespan_max = *std::max_element(spans.begin(), spans.end());
  for (int k = 0; k < ranks; ++k) {
    std::vector<double> mine;
    for (const auto& run : s.times) mine.push_back(run[static_cast<std::size_t>(k)]);
    r.rank_median.push_back(median_of(mine));
  }
  double sum = 0, most = 0;
  for (double t : r.rank_median) {
    sum += t;
    most = std::max(most, t);
  }
  r.imbalance = sum > 0 ? most / (sum / ranks) : 0;
  return r;
}

std::vector<double> allgather(MPI_Comm comm, double mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> all(static_cast<std::size_t>(size));
  hit::check_mpi(MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm),
                 "hit-bench-fpm: MPI_Allgather");
  return all;
}

std::vector<std::int64_t> allgather(MPI_Comm comm, std::int64_t mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size));
  hit::check_mpi(MPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm),
                 "hit-bench-fpm: MPI_Allgather");
  return all;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return "unknown CPU";
}

// The 1-minute load average (first field of /proc/loadavg), or "unknown".
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string first;
  return in >> first ? first : std::string("unknown");
}

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_of(" '\"();*$`\\|&<>") == std::string::npos) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_line(int argc, char** argv, int ranks) {
  std::string cmd = fmt::format("mpiexec.mpich -n {} build/bin/hit-bench-fpm", ranks);
  for (int i = 1; i < argc; ++i) {
    // What the table was measured on is said in its own line, not in the command to repeat.
    if (std::string(argv[i]) == "--measured-at") {
      ++i;
      continue;
    }
    cmd += " " + shell_quote(argv[i]);
  }
  return cmd;
}

std::string shares(const fpm::Distribution& d) {
  std::string out;
  for (const fpm::Part& p : d.parts) out += (out.empty() ? "" : " / ") + std::to_string(p.d);
  return out;
}

std::string per_rank(const Result& r) {
  std::string out;
  for (double t : r.rank_median) out += fmt::format("{}{:.4f}", out.empty() ? "" : " / ", t);
  return out;
}

const std::string section_begin = "<!-- BEGIN fpm -->";
const std::string section_end = "<!-- END fpm -->";
const std::string scenario_begin = "<!-- fpm scenario: ";
const std::string scenario_end = "<!-- fpm scenario end -->";

// What every scenario's table means (the top of the section).
std::string section_intro() {
  return "## FPM partitioning on emulated heterogeneous devices (`hit-bench-fpm`)\n\n"
         "One kernel workload of n units, run through `hit::launch` on the device of every rank "
         "(so each time includes the transfers), distributed three ways: `even` (equal shares), "
         "`cpm` (one measurement per device at n/p, shares proportional to the measured speeds) "
         "and `fpm` (partial-FPM dynamic partitioning: measure, add the points to partial "
         "piecewise models, repartition until the measured times agree within eps or nothing "
         "better is predicted). Every distribution's workload runs `--runs` times, interleaved "
         "with the others, each timed run after an untimed warm-up and started by all ranks "
         "together. *Makespan*: the largest per-rank compute time of a run, median over the runs "
         "(min–max); *imbalance*: max/mean of the per-rank median compute times; *partitioning*: "
         "seconds spent measuring to build the distribution. See docs/fpm.md for what the "
         "numbers show.\n";
}

// The block of one scenario (between its markers).
std::string scenario_block(const Options& o, const std::vector<Strategy>& strategies,
                           const std::vector<Result>& results,
                           const std::vector<std::string>& devices, const std::string& kernel,
                           const std::string& command, double total_seconds,
                           const std::string& load) {
  std::ostringstream md;
  md << scenario_begin << o.label << " -->\n";
  md << fmt::format("### {}: n = {} units of `{}` on {} ranks\n\n", o.label, o.n, kernel,
                    devices.size());
  md << "Devices: ";
  for (std::size_t r = 0; r < devices.size(); ++r) {
    md << (r ? ", " : "") << fmt::format("rank {} `{}`", r, devices[r]);
  }
  md << fmt::format(". fpm: `{}`, eps = {}, at most {} steps.\n\n", o.algorithm, o.eps,
                    o.max_iterations);
  md << "| partition | units per rank | per-rank compute (s), medians | makespan (s), median "
        "(min–max) | imbalance | speed-up over even | partitioning (s) | fpm steps |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  const double even = results.front().makespan;
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    const Strategy& s = strategies[i];
    const Result& r = results[i];
    md << fmt::format(
        "| `{}` | {} | {} | {:.4f} ({:.4f}–{:.4f}) | {:.3f} | {:.2f}× | {} | {} |\n", s.name,
        shares(s.dist), per_rank(r), r.makespan, r.makespan_min, r.makespan_max, r.imbalance,
        even / r.makespan,
        s.name == "even" ? std::string("—") : fmt::format("{:.2f}", s.partition_seconds),
        s.name == "fpm" ? fmt::format("{} ({})", s.iterations, s.status) : std::string("—"));
  }
  if (!o.measured_at.empty()) md << fmt::format("\nMeasured at {}.\n", o.measured_at);
  md << fmt::format(
      "\nCommand: `{}` ({:.0f} s in all). Machine: {}, {} cores, load average {} when it "
      "started.\n",
      command, total_seconds, cpu_model(), std::thread::hardware_concurrency(), load);
  md << scenario_end << "\n";
  return md.str();
}

// Writes the scenario into the fpm section of `path` (between <!-- BEGIN fpm --> and
// <!-- END fpm -->): replaces the block with the same label, or appends it; the other scenarios
// and everything outside the markers stay as they are. Creates the file or the section when
// missing.
void write_section(const std::string& path, const std::string& label, const std::string& block) {
  std::string text;
  {
    std::ifstream in(path);
    if (in) {
      std::ostringstream all;
      all << in.rdbuf();
      text = all.str();
    }
  }
  const auto b = text.find(section_begin);
  const auto e = b == std::string::npos ? std::string::npos : text.find(section_end, b);
  const bool have = b != std::string::npos && e != std::string::npos;
  const std::string old =
      have ? text.substr(b + section_begin.size(), e - b - section_begin.size()) : std::string();
  // The scenario blocks already there, in order.
  std::vector<std::pair<std::string, std::string>> blocks;
  for (auto at = old.find(scenario_begin); at != std::string::npos;
       at = old.find(scenario_begin, at + 1)) {
    const auto name_end = old.find(" -->", at);
    const auto stop = old.find(scenario_end, at);
    if (name_end == std::string::npos || stop == std::string::npos) break;
    const std::string name =
        old.substr(at + scenario_begin.size(), name_end - at - scenario_begin.size());
    blocks.emplace_back(name, old.substr(at, stop + scenario_end.size() - at) + "\n");
  }
  bool replaced = false;
  for (auto& [name, text_of] : blocks) {
    if (name == label) {
      text_of = block;
      replaced = true;
    }
  }
  if (!replaced) blocks.emplace_back(label, block);
  std::string section = section_begin + "\n" + section_intro();
  for (const auto& [name, text_of] : blocks) section += "\n" + text_of;
  section += section_end;
  if (have) {
    text.replace(b, e + section_end.size() - b, section);
  } else {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += (text.empty() ? "" : "\n") + section + "\n";
  }
  fpm::write_file_atomically(path, text);
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App app{"hit-bench-fpm: even vs CPM vs partial-FPM partitioning of one kernel workload"};
  Options o;
  app.add_option("--devices", o.devices, "device binding of the ranks")->capture_default_str();
  app.add_option("--kernel", o.kernel,
                 "gemm (block update), jacobi (5-point row update) or spmv (sparse row product)")
      ->capture_default_str();
  const int most_int = std::numeric_limits<int>::max();
  app.add_option("--block", o.block, "gemm block size b")
      ->capture_default_str()
      ->check(hit::cli::count(1, most_int));
  app.add_option("--columns", o.columns, "jacobi row length N")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  app.add_option("--partition", o.partition, "partition of the launches (default per kernel)");
  app.add_option("--n", o.n, "units of the workload")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  app.add_option("--runs", o.runs, "timed runs per distribution")
      ->capture_default_str()
      ->check(hit::cli::count(1, most_int));
  app.add_option("--eps", o.eps, "fpm: stop when the spread (max t - min t)/min t <= eps")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  app.add_option("--max-iterations", o.max_iterations, "fpm: dynamic-partitioning steps at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, most_int));
  app.add_option("--algorithm", o.algorithm, "fpm: the partitioner of the partial models")
      ->capture_default_str();
  app.add_option("--precision", o.precision, "relative CI half-width of each measurement")
      ->capture_default_str()
      ->check(hit::cli::real_above(0, 1));
  app.add_option("--min-reps", o.min_reps, "repetitions of each measurement at least")
      ->capture_default_str()
      ->check(hit::cli::count(1, most_int));
  app.add_option("--max-time", o.max_time, "seconds of repetitions per measurement at most")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  app.add_flag("--json", o.json, "one JSON object on stdout");
  app.add_option("--markdown", o.markdown,
                 "write the table between <!-- BEGIN fpm --> and <!-- END fpm --> of FILE")
      ->check(hit::cli::file_name());
  app.add_option("--label", o.label,
                 "name of this scenario in the --markdown file (a block with the same name is "
                 "replaced)")
      ->capture_default_str();
  app.add_option("--measured-at", o.measured_at,
                 "what the table was measured on, e.g. 'commit abc1234': a line of the --markdown "
                 "block (bench/fpm/fpm_bench.py passes the commit)");
  app.add_flag("--quiet", o.quiet, "no progress lines");
  if (!hit::cli::parse(app, argc, argv, env.rank(), "hit-bench-fpm")) return hit::exit_ok;
  if (o.n < env.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--n {} is smaller than the {} ranks", o.n, env.size()));
  }
  if (o.label.empty() || o.label.find("-->") != std::string::npos ||
      o.label.find('\n') != std::string::npos) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--label '{}': one line of text, without '-->'", o.label));
  }

  // The table's file is checked before the benchmark, not after it.
  hit::collectively(env.comm(), [&] {
    if (env.rank() == 0 && !o.markdown.empty()) {
      hit::check_output_path(o.markdown, "table (--markdown)");
    }
  });
  const hit::Timer total;
  const std::string load = load_average();
  env.config().set("devices", o.devices);
  const hit::PhysicalTopology& topo = hit::PhysicalTopology::of(env);
  const MPI_Comm comm = env.comm();
  const int p = env.size();
  balance::LaunchKernelOptions ko;
  ko.block = o.block;
  ko.columns = o.columns;
  ko.partition = o.partition;
  balance::BenchmarkKernel kernel;
  hit::collectively(comm, [&] { kernel = balance::launch_kernel(env, o.kernel, ko); });
  const hit::Device& dev = hit::device(env);
  std::vector<std::string> devices;
  for (const hit::RankPlacement& r : topo.ranks()) devices.push_back(r.device.str());

  // Capacities from device memory, known to every partitioner alike.
  const std::int64_t my_cap = dev.capacity() == std::numeric_limits<std::uint64_t>::max()
                                  ? fpm::unlimited
                                  : balance::units_that_fit(kernel, dev.capacity());
  const std::vector<std::int64_t> caps = allgather(comm, my_cap);
  auto models_of = [&](fpm::ModelKind kind) {
    std::vector<fpm::Model> m(static_cast<std::size_t>(p), fpm::Model(kind));
    for (int r = 0; r < p; ++r)
      m[static_cast<std::size_t>(r)].set_capacity(caps[static_cast<std::size_t>(r)]);
    return m;
  };
  balance::Precision precision;
  precision.rel_ci = o.precision;
  precision.min_reps = o.min_reps;
  precision.max_seconds = o.max_time;
  auto say = [&](const std::string& text) {
    if (env.rank() == 0 && !o.quiet && !o.json) fmt::print(stderr, "{}\n", text);
  };

  std::vector<Strategy> strategies(3);
  // even
  strategies[0].name = "even";
  strategies[0].dist = fpm::partition_even(models_of(fpm::ModelKind::piecewise), o.n);
  // cpm: one measurement per device at n/p, proportional shares
  {
    Strategy& s = strategies[1];
    s.name = "cpm";
    say(fmt::format("cpm: measuring every device at n/p = {} units", o.n / p));
    hit::check_mpi(MPI_Barrier(comm), "hit-bench-fpm: MPI_Barrier");
    const hit::Timer t;
    const std::int64_t probe = std::min<std::int64_t>(o.n / p, my_cap);
    const fpm::Point pt = balance::benchmark(kernel, probe, precision, topo.node_comm());
    s.probe_t = allgather(comm, pt.t);
    const std::vector<std::int64_t> probes = allgather(comm, probe);
    std::vector<fpm::Model> models = models_of(fpm::ModelKind::constant);
    for (int r = 0; r < p; ++r) {
      const auto u = static_cast<std::size_t>(r);
      if (probes[u] > 0) models[u].add(fpm::Point{probes[u], s.probe_t[u], 1, 0});
    }
    s.dist = fpm::partition("proportional", models, o.n);
    s.partition_seconds = allgather(comm, t.seconds())[0];
  }
  // fpm: partial models built by dynamic partitioning
  {
    Strategy& s = strategies[2];
    s.name = "fpm";
    say(fmt::format("fpm: dynamic partitioning ({}, eps {})", o.algorithm, o.eps));
    hit::check_mpi(MPI_Barrier(comm), "hit-bench-fpm: MPI_Barrier");
    const hit::Timer t;
    balance::PartitionContext ctx(o.n, p, o.algorithm);
    ctx.models = models_of(fpm::ModelKind::piecewise);
    while (ctx.status == balance::DynamicStatus::running && ctx.iterations < o.max_iterations) {
      balance::partition_iterate(ctx, comm, kernel, precision, o.eps, topo.node_comm());
      std::string measured;
      for (const fpm::Point& q : ctx.measured) {
        measured += fmt::format("{}{}:{:.4f}s±{:.1f}%", measured.empty() ? "" : " ", q.d, q.t,
                                q.t > 0 ? 100 * q.ci / q.t : 0.0);
      }
      say(fmt::format("  step {}: measured {} (imbalance {:.3f}, spread {:.3f}) -> {}",
                      ctx.iterations, measured, ctx.imbalance, ctx.spread,
                      balance::to_string(ctx.status)));
      nlohmann::json step;
      step["d"] = nlohmann::json::array();
      step["t"] = nlohmann::json::array();
      for (const fpm::Point& q : ctx.measured) {
        step["d"].push_back(q.d);
        step["t"].push_back(q.t);
      }
      step["imbalance"] = ctx.imbalance;
      step["spread"] = ctx.spread;
      step["status"] = std::string(balance::to_string(ctx.status));
      s.steps.push_back(step);
    }
    if (ctx.status == balance::DynamicStatus::running) {
      ctx.status = balance::DynamicStatus::not_converged;
      if (!ctx.best.parts.empty()) ctx.dist = ctx.best;
    }
    s.dist = ctx.dist;
    s.iterations = ctx.iterations;
    s.status = std::string(balance::to_string(ctx.status));
    s.partition_seconds = allgather(comm, t.seconds())[0];
  }

  // The workload of every distribution, interleaved run by run; all ranks start each run together.
  balance::Precision once;
  once.min_reps = 1;
  once.max_reps = 1;
  once.warmup = 1;
  for (int run = 0; run < o.runs; ++run) {
    say(fmt::format("run {}/{}", run + 1, o.runs));
    for (Strategy& s : strategies) {
      const std::int64_t d = s.dist.parts[static_cast<std::size_t>(env.rank())].d;
      const fpm::Point pt = balance::benchmark(kernel, d, once, comm);
      s.times.push_back(allgather(comm, d > 0 ? pt.t : 0.0));
    }
  }

  std::vector<Result> results;
  results.reserve(strategies.size());
  for (const Strategy& s : strategies) results.push_back(summarise(s, p));
  const double seconds = allgather(comm, total.seconds())[0];
  if (env.rank() != 0) return hit::exit_ok;

  const double even = results.front().makespan;
  const std::string command = command_line(argc, argv, p);
  if (!o.markdown.empty()) {
    write_section(
        o.markdown, o.label,
        scenario_block(o, strategies, results, devices, kernel.name, command, seconds, load));
  }
  if (o.json) {
    nlohmann::json j;
    j["app"] = "hit-bench-fpm";
    j["label"] = o.label;
    j["kernel"] = kernel.name;
    j["n"] = o.n;
    j["ranks"] = p;
    j["devices"] = devices;
    j["runs"] = o.runs;
    j["eps"] = o.eps;
    j["algorithm"] = o.algorithm;
    j["seconds"] = seconds;
    // A benchmark kernel's result is not checked (the device layer's tests check the kernels).
    j["check"] = {{"ran", false}, {"passed", false}, {"max_rel_error", nullptr}};
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t i = 0; i < strategies.size(); ++i) {
      const Strategy& s = strategies[i];
      const Result& r = results[i];
      nlohmann::json e;
      e["name"] = s.name;
      e["parts"] = s.dist.sizes();
      // Even needs no model: it predicts nothing.
      e["predicted_makespan"] = s.name != "even" && std::isfinite(s.dist.makespan)
                                    ? nlohmann::json(s.dist.makespan)
                                    : nlohmann::json(nullptr);
      e["time_s"] = {{"median", r.makespan}, {"min", r.makespan_min}, {"max", r.makespan_max}};
      e["gflops"] = kernel.complexity(o.n) / r.makespan * 1e-9;
      e["compute_s"] = r.rank_median;
      e["comm_s"] = std::vector<double>(static_cast<std::size_t>(p), 0.0);  // no communication
      e["imbalance"] = r.imbalance;
      e["speedup_over_even"] = even / r.makespan;
      e["partition_s"] = s.partition_seconds;
      if (s.name == "fpm") {
        e["iterations"] = s.iterations;
        e["status"] = s.status;
        e["steps"] = s.steps;
      }
      if (s.name == "cpm") e["probe_t"] = s.probe_t;
      all.push_back(e);
    }
    j["strategies"] = all;
    fmt::print("{}\n", j.dump());
    return hit::exit_ok;
  }
  fmt::print("hit-bench-fpm: {} units of {} on {} ranks: {}\n", o.n, kernel.name, p,
             fmt::join(devices, ", "));
  fmt::print("{:<6} {:>24} {:>30} {:>9} {:>8} {:>12} {:>16}\n", "", "units per rank",
             "makespan median (min-max) s", "imbalance", "speed-up", "partition s", "iterations");
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    const Strategy& s = strategies[i];
    const Result& r = results[i];
    fmt::print("{:<6} {:>24} {:>30} {:>9.3f} {:>7.2f}x {:>12} {:>16}\n", s.name, shares(s.dist),
               fmt::format("{:.4f} ({:.4f}-{:.4f})", r.makespan, r.makespan_min, r.makespan_max),
               r.imbalance, even / r.makespan,
               s.name == "even" ? std::string("-") : fmt::format("{:.2f}", s.partition_seconds),
               s.name == "fpm" ? fmt::format("{} ({})", s.iterations, s.status) : std::string("-"));
    fmt::print("{:<6} per-rank compute s: {}\n", "", per_rank(r));
  }
  fmt::print("{:.1f} s in all\n", seconds);
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-fpm", body);
}
