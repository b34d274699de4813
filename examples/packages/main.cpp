// hit-packages: work packages dispatched on demand (prefetching, rerouting around a failed device)
// against static row layouts, on an irregular and a regular workload.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "clustercl_apps.hpp"
#include "hit/core/collective.hpp"
#include "hit/program.hpp"
#include "packages.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-packages", [](hit::Environment& env, int ac, char** av) {
    hit::packages::Options o;
    CLI::App cli(
        "Work packages (equal packages of rows dispatched on demand over the ranks' devices, "
        "prefetched, rerouted around a failed device) or a static row layout, on Mandelbrot "
        "escape counts (irregular) or C = A B (regular)");
    std::vector<std::string> workloads = {"mandelbrot", "gemm"};
    for (const std::string& w : hit::packages::clustercl_workloads()) workloads.push_back(w);
    cli.add_option("--workload", o.workload,
                   "mandelbrot (irregular cost per row), gemm, or one of clusterCL's applications: "
                   "dcs, cor, cov, bop, syrk, gsp, bsm, conv, bicg, gsmv (docs/packages.md)")
        ->check(CLI::IsMember(workloads));
    cli.add_option("--n", o.n, "rows (gemm: the order of the matrices)")
        ->check(hit::cli::count(1, 1 << 20));
    cli.add_option("--m", o.m,
                   "clusterCL workloads: the second extent (columns of A, X, the image or the "
                   "grid; default: --n)")
        ->check(hit::cli::count(1, 1 << 20));
    std::vector<std::string> params, inputs, outputs;
    cli.add_option("--param", params,
                   "clusterCL workloads: a scalar, NAME=VALUE (repeatable; --describe lists them)");
    cli.add_option("--input", inputs,
                   "clusterCL workloads: an input array from a file, NAME=FILE (raw row-major of "
                   "the element type, or FILE.h5:/dataset; default: generated from --seed)");
    cli.add_option("--output", outputs,
                   "clusterCL workloads: an output array to a file, NAME=FILE (written under a "
                   "temporary name, renamed on success)");
    cli.add_option("--strategy", o.strategy,
                   "dcs: partition the grid (out: atoms replicated) or the atoms (in: the grid "
                   "summed over the packages)")
        ->check(CLI::IsMember({"out", "in"}));
    cli.add_flag("--describe", o.describe,
                 "clusterCL workloads: print the arrays (name, role, shape, type) and parameters "
                 "as one JSON line, and stop");
    cli.add_option("--width", o.width, "mandelbrot: columns (default: --n)")
        ->check(hit::cli::count(1, 1 << 20));
    cli.add_option("--iters", o.iters, "mandelbrot: iterations at most per pixel")
        ->check(hit::cli::count(1, 1 << 24));
    cli.add_option("--view", o.view,
                   "mandelbrot: the window of the complex plane, CX,CY,HEIGHT (its width is 1.2 "
                   "HEIGHT; default -0.7,0,2.5: the whole set)")
        ->delimiter(',')
        ->expected(3)
        ->check(CLI::Number);
    std::string layout, schedule;
    cli.add_option("--layout", layout,
                   "layout of the output's rows (and A's) over the processes (else HIT_LAYOUT_OUT, "
                   "else blocks); whole rows");
    cli.add_option("--schedule", schedule,
                   "static (each rank its rows of --layout, one launch) or "
                   "workPackages[:size=G|auto][,depth=D] (else HIT_SCHEDULE, else "
                   "workPackages:size=auto,depth=2)");
    o.run.add_to(cli, "compare the output with a serial computation",
                 "draw which device computed which package, and when, to this SVG file", "OUT");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-packages")) return 0;
    hit::collectively(env.comm(), [&] {
      o.params = hit::packages::named_values("--param", params);
      o.inputs = hit::packages::named_values("--input", inputs);
      o.outputs = hit::packages::named_values("--output", outputs);
      const bool named = !o.params.empty() || !o.inputs.empty() || !o.outputs.empty();
      if (!hit::packages::is_clustercl(o.workload) && (named || o.describe || o.m > 0)) {
        throw hit::Error(hit::ErrorKind::invalid_argument,
                         "--m, --param, --input, --output and --describe are for the clusterCL "
                         "workloads; " +
                             o.workload + " takes --n (and mandelbrot --width)");
      }
    });
    o.layout =
        hit::app::given_or(hit::layout_setting(env, "out", o.layout.code), layout, "--layout");
    o.schedule = hit::app::given_or(env.config().resolve("schedule", o.schedule.code, "schedule"),
                                    schedule, "--schedule");
    o.run.apply(env, "out");
    return hit::packages::run(env, o);
  });
}
