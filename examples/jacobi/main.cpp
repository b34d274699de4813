// hit-jacobi: 2-D 5-point Jacobi iteration with halo exchanges derived from a layout.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "../common/balance_flags.hpp"
#include "hit/core/error.hpp"
#include "hit/program.hpp"
#include "jacobi.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-jacobi", [](hit::Environment& env, int ac, char** av) {
    hit::jacobi::Options o;
    CLI::App cli("2-D 5-point Jacobi on an N x N grid with a fixed boundary");
    cli.add_option("--n", o.n, "grid side N (boundary included)")->check(hit::cli::count(3));
    cli.add_option("--iters", o.iters, "Jacobi iterations")
        ->check(hit::cli::count(0, std::numeric_limits<int>::max()));
    // The command line wins over HIT_LAYOUT_GRID and HIT_PARTITION_GRID, which win over the
    // defaults written here (Options).
    std::string layout;
    cli.add_option("--layout", layout,
                   "layout spec of the grid (else HIT_LAYOUT_GRID, else blocks)");
    auto* topology = cli.add_option("--topology", o.topology, "virtual topology spec");
    hit::app::BalanceFlags balance;
    hit::app::add_balance_flags(cli, o.balance, balance,
                                " (the topology is then array unless given)");
    o.run.add_to(cli, "compare with a serial run, bit for bit", "draw the layout to this SVG file",
                 "GRID");
    cli.add_option("--out", o.out, "write the final grid to this raw file or FILE.h5:/dataset");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-jacobi")) return 0;
    if (o.n < 3) {
      throw hit::Error(hit::ErrorKind::invalid_argument,
                       "--n must be at least 3 (a boundary ring and one interior point), got " +
                           std::to_string(o.n));
    }
    hit::app::apply_balance_flags(env, balance, o.balance);
    if (o.balance.mode != hit::BalanceMode::off && topology->count() == 0) o.topology = "array";
    o.layout =
        hit::app::given_or(hit::layout_setting(env, "grid", o.layout.code), layout, "--layout");
    o.run.apply(env, "grid");
    return hit::jacobi::run(env, o);
  });
}
