// hit-jacobi: 2-D 5-point Jacobi iteration with halo exchanges derived from a layout.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "hit/core/error.hpp"
#include "hit/core/program.hpp"
#include "jacobi.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-jacobi", [](hit::Environment& env, int ac, char** av) {
    hit::jacobi::Options o;
    CLI::App cli("2-D 5-point Jacobi on an N x N grid with a fixed boundary");
    cli.add_option("--n", o.n, "grid side N (boundary included)");
    cli.add_option("--iters", o.iters, "Jacobi iterations")->check(CLI::NonNegativeNumber);
    cli.add_option("--type", o.type, "element type")->check(CLI::IsMember({"double", "float"}));
    cli.add_option("--layout", o.layout, "layout spec of the grid (HIT_LAYOUT_GRID overrides)");
    cli.add_option("--topology", o.topology, "virtual topology spec");
    cli.add_option("--devices", o.devices, "device binding of the ranks (HIT_DEVICES)");
    cli.add_option("--partition", o.partition,
                   "partition spec of the sweep on each device (HIT_PARTITION_GRID overrides)");
    cli.add_option("--reps", o.reps, "timed repetitions (the median is reported)")
        ->check(CLI::PositiveNumber);
    cli.add_option("--warmup", o.warmup, "untimed repetitions first")
        ->check(CLI::NonNegativeNumber);
    cli.add_flag("--check", o.check,
                 "compare with a serial run, bit for bit (exit 1 when not equal)");
    cli.add_flag("--json", o.json, "print one JSON object on stdout");
    cli.add_option("--svg", o.svg, "draw the layout to this SVG file");
    cli.add_option("--out", o.out, "write the final grid to this raw file");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-jacobi")) return 0;
    if (o.n < 3) {
      throw hit::Error(hit::ErrorKind::invalid_argument,
                       "--n must be at least 3 (a boundary ring and one interior point), got " +
                           std::to_string(o.n));
    }
    if (!o.devices.empty()) env.config().set("devices", o.devices);
    return hit::jacobi::run(env, o);
  });
}
