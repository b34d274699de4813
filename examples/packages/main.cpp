// hit-packages: work packages dispatched on demand (prefetching, rerouting around a failed device)
// against static row layouts, on an irregular and a regular workload.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "hit/program.hpp"
#include "packages.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-packages", [](hit::Environment& env, int ac, char** av) {
    hit::packages::Options o;
    CLI::App cli(
        "Work packages (equal packages of rows dispatched on demand over the ranks' devices, "
        "prefetched, rerouted around a failed device) or a static row layout, on Mandelbrot "
        "escape counts (irregular) or C = A B (regular)");
    cli.add_option("--workload", o.workload, "mandelbrot (irregular cost per row) or gemm")
        ->check(CLI::IsMember({"mandelbrot", "gemm"}));
    cli.add_option("--n", o.n, "rows (gemm: the order of the matrices)")
        ->check(hit::cli::count(1, 1 << 20));
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
    o.layout =
        hit::app::given_or(hit::layout_setting(env, "out", o.layout.code), layout, "--layout");
    o.schedule = hit::app::given_or(env.config().resolve("schedule", o.schedule.code, "schedule"),
                                    schedule, "--schedule");
    o.run.apply(env, "out");
    return hit::packages::run(env, o);
  });
}
