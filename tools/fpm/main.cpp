// hit-fpm: build, inspect, use and draw functional performance models (docs/fpm.md; FuPerMod).
//
//   hit-fpm build --kernel gemm|jacobi|spmv|NAME --min D --max D [--points K] [--out PATTERN]
//                 [--devices SPEC] ...
//   hit-fpm partition --model FILE [--model FILE ...] --n N [--algorithm NAME] [--json]
//   hit-fpm show --model FILE [--json]
//   hit-fpm plot --model FILE [--model FILE ...] --out FILE.svg [--n N] [--algorithm NAME]
//   hit-fpm hierarchical --n N [--block B] [--method fpm|multiple-cpm|single-cpm|homogeneous]
//                 [--models DIR] [--devices SPEC] [--nodes K] [--json] ...
//   mpiexec -n P hit-fpm network [--out FILE] [--sizes a,b,c] [--reps K] [--max-pairs K]
//                 [--nodes K] [--json] [--quiet]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <limits>
#include <string>

#include "../common/cli.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/program.hpp"
#include "subcommands.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
namespace fpm = hit::fpm;
using namespace hit_fpm;

// The options of `build`.
CLI::App* add_build(CLI::App& app, BuildOptions& b) {
  auto* build = app.add_subcommand("build",
                                   "benchmark a registered kernel over a size range on every "
                                   "rank's device and write one model file per rank");
  build
      ->add_option("--kernel", b.kernel,
                   "gemm (block update, FuPerMod §4.1), jacobi (5-point row update), spmv (one "
                   "row of the sparse product of poisson3d:n=64, for the sparse layouts' models) "
                   "or a kernel a plug-in of HIT_PLUGIN_PATH registered, run through hit::launch "
                   "on each rank's device")
      ->capture_default_str();
  build->add_option("--block", b.block, "gemm block size b (a unit is one b×b block update)")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--columns", b.columns, "jacobi row length N (a unit is one row of N cells)")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  build->add_flag("--resident", b.resident,
                  "jacobi: keep the grid on the device between launches, as hit-jacobi does (the "
                  "models hit-jacobi --balance-models wants)");
  build->add_option("--partition", b.partition,
                    "partition of the launches (default: single for gemm and spmv, threads for "
                    "jacobi)");
  build->add_option("--devices", b.devices,
                    "device binding of the ranks (HIT_DEVICES), e.g. 'emu:0(slowdown=4),cpu'");
  build->add_option("--min", b.min, "smallest size, in units")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  build->add_option("--max", b.max, "largest size, in units")
      ->required()
      ->check(hit::cli::count(1));
  build->add_option("--points", b.points, "number of sizes")
      ->capture_default_str()
      ->check(hit::cli::count(1, 10000));
  build->add_option("--spacing", b.spacing, "linear or log")
      ->capture_default_str()
      ->check(CLI::IsMember({"linear", "log"}));
  build
      ->add_option("--out", b.out,
                   "output file; {rank} is replaced by the rank, {device} by its device "
                   "(e.g. emu2) (default fpm-<kernel>-{rank}.csv)")
      ->check(hit::cli::file_name());
  build->add_option("--precision", b.precision, "relative half-width of the confidence interval")
      ->capture_default_str()
      ->check(hit::cli::real_above(0, 1));
  build->add_option("--min-reps", b.min_reps, "repetitions at least")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--max-reps", b.max_reps, "repetitions at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--max-time", b.max_time, "seconds of repetitions per size at most")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  build->add_option("--capacity", b.capacity, "declare the most units the device holds")
      ->check(hit::cli::count(0));
  build->add_flag("--quiet", b.quiet, "no progress bar");
  return build;
}

// `partition`, `show` and `plot`, which read model files, and plot's --n.
struct ModelSubcommands {
  CLI::App* part = nullptr;
  CLI::App* show = nullptr;
  CLI::App* plot = nullptr;
  CLI::Option* n_opt = nullptr;
};

ModelSubcommands add_model_subcommands(CLI::App& app, ModelOptions& m) {
  auto add_model_options = [&](CLI::App* sub, bool many) {
    sub->add_option("--model,-m", m.files,
                    many ? "a model file, one per device, in device order"
                         : "a model file (repeat to show several)")
        ->required();
    sub->add_option("--kind", m.kind, "interpolation: piecewise, akima or constant")
        ->capture_default_str();
  };
  auto* part = app.add_subcommand("partition", "split n units over the devices of the models");
  add_model_options(part, true);
  part->add_option("--n", m.n, "units to distribute")->required()->check(hit::cli::count(0));
  part->add_option(
          "--algorithm,-a", m.algorithm,
          "even, proportional, geometric, numerical, exact or dp (with :key=value options)")
      ->capture_default_str();
  part->add_flag("--json", m.json, "one JSON object on stdout");

  auto* show = app.add_subcommand("show", "print a model's points and derived speeds");
  add_model_options(show, false);
  show->add_flag("--json", m.json, "JSON instead of a table");

  auto* plot = app.add_subcommand("plot", "draw speed functions (and a partition) as SVG");
  add_model_options(plot, true);
  plot->add_option("--out,-o", m.out, "the SVG file to write")
      ->required()
      ->check(hit::cli::file_name());
  auto* n_opt =
      plot->add_option("--n", m.n, "also draw the partition of n units")->check(hit::cli::count(0));
  plot->add_option("--algorithm,-a", m.algorithm, "partitioner for --n")->capture_default_str();
  plot->add_option("--title", m.title, "picture title");
  return {part, show, plot, n_opt};
}

// The options of `hierarchical`.
CLI::App* add_hierarchical(CLI::App& app, HierarchicalCli& h) {
  auto* hier = app.add_subcommand(
      "hierarchical",
      "partition a square matrix product over the nodes (column-based rectangles) and each "
      "node's devices (column slices) by running its panel kernel on the bound devices (INPA "
      "and IDPA, or a baseline); prints the layout spec");
  hier->add_option("--n", h.n, "C is n x n")->required()->check(hit::cli::count(1));
  hier->add_option("--block,-b", h.block, "block size b")
      ->capture_default_str()
      ->check(hit::cli::count(1, 4096));
  hier->add_option("--panel", h.panel,
                   "inner dimension of the measured panel step (the application's panel width; "
                   "default: b)")
      ->check(hit::cli::count(1, 4096));
  hier->add_option("--method", h.method, "fpm, multiple-cpm, single-cpm or homogeneous")
      ->capture_default_str()
      ->check(CLI::IsMember({"fpm", "multiple-cpm", "single-cpm", "homogeneous"}));
  hier->add_option("--eps", h.eps, "node-level balance: largest spread of the node times")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_option("--device-eps", h.device_eps, "device-level balance inside each node")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_option("--iterations", h.iterations, "node-level steps at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  hier->add_option("--device-iterations", h.device_iterations,
                   "device-level steps at most, per node-level step")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  hier->add_option("--algorithm,-a", h.algorithm,
                   "partitioner (default: geometric for fpm, proportional for the CPM methods)");
  hier->add_option("--models", h.models,
                   "folder of the models: read when present, written after every step");
  hier->add_option("--devices", h.devices, "device binding of the ranks (HIT_DEVICES)");
  hier->add_option("--nodes", h.nodes, "ranks per emulated node (HIT_NODES; 0: the real nodes)")
      ->check(hit::cli::count(0));
  hier->add_option("--precision", h.precision, "relative half-width of the confidence interval")
      ->capture_default_str()
      ->check(hit::cli::real_above(0, 1));
  hier->add_option("--min-reps", h.min_reps, "repetitions at least")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  hier->add_option("--max-reps", h.max_reps, "repetitions at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  hier->add_option("--max-time", h.max_time, "seconds of repetitions per measurement at most")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_flag("--block-columns", h.block_columns,
                 "a device's unit is one b-wide block column (default: one element column)");
  hier->add_flag("--json", h.json, "one JSON object on stdout");
  return hier;
}

// The options of `network`.
CLI::App* add_network(CLI::App& app, NetworkCli& n) {
  auto* net = app.add_subcommand(
      "network",
      "measure the run's communication costs by ping-pong between pairs of ranks, one pair at a "
      "time: latency and bandwidth (Hockney's model) of the links inside a node and between "
      "nodes; at least 2 processes");
  net->add_option("--out,-o", n.out, "write the network model file (rank 0 writes it)")
      ->check(hit::cli::file_name());
  net->add_option("--sizes", n.sizes,
                  "message sizes in bytes, comma-separated, at least two different ones "
                  "(default 8,4096,65536,1048576,4194304): latency from the smallest, bandwidth "
                  "from the slope over all")
      ->delimiter(',')
      ->check(hit::cli::count(1, std::int64_t{1} << 30));
  net->add_option("--reps", n.reps, "timed round trips per size and pair (their median counts)")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1'000'000));
  net->add_option("--warmup", n.warmup, "untimed round trips first, per size and pair")
      ->capture_default_str()
      ->check(hit::cli::count(0, 1'000'000));
  net->add_option("--max-pairs", n.max_pairs, "pairs measured per link class at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  net->add_option("--nodes", n.nodes, "ranks per emulated node (HIT_NODES; 0: the real nodes)")
      ->check(hit::cli::count(0, std::numeric_limits<int>::max()));
  net->add_flag("--json", n.json, "one JSON object on stdout");
  net->add_flag("--quiet", n.quiet, "only the classes, not every measured pair");
  return net;
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App app{
      "hit-fpm: functional performance models — build them by benchmarking, partition "
      "work with them, show and plot them; measure the network's communication costs"};
  app.require_subcommand(1);
  BuildOptions b;
  ModelOptions m;

  CLI::App* build = add_build(app, b);

  const auto [part, show, plot, n_opt] = add_model_subcommands(app, m);

  HierarchicalCli h;
  CLI::App* hier = add_hierarchical(app, h);

  NetworkCli net_options;
  CLI::App* net = add_network(app, net_options);

  // CLI11 would call an unknown first word "a missing subcommand".
  const auto known = [](const std::string& word) {
    return word == "build" || word == "partition" || word == "show" || word == "plot" ||
           word == "hierarchical" || word == "network";
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    throw Error(ErrorKind::parse, fmt::format("unknown subcommand '{}' (subcommands: build, "
                                              "partition, show, plot, hierarchical, network; see "
                                              "hit-fpm --help)",
                                              hit::excerpt(argv[1])));
  }
  if (!hit::cli::parse(app, argc, argv, env.rank(), "hit-fpm")) return hit::exit_ok;
  m.has_n = n_opt->count() > 0;
  // Partitioner names are checked before any model is read or measured (plot checks its --algorithm
  // even without --n, where it would draw no partition).
  if (*part || *plot) fpm::check_partitioner(m.algorithm);
  if (*hier && !h.algorithm.empty()) fpm::check_partitioner(h.algorithm);
  if (*build) return run_build(env, b);
  if (*part) return run_partition(env, m);
  if (*hier) return run_hierarchical(env, h);
  if (*net) return run_network(env, net_options);
  if (*show) return run_show(env, m);
  return run_plot(env, m);
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-fpm", body);
}
