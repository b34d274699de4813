// hit-summa: SUMMA-style matrix multiplication over any layouts of A, B and C.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "hit/program.hpp"
#include "summa.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-summa", [](hit::Environment& env, int ac, char** av) {
    hit::summa::Options o;
    CLI::App cli(
        "SUMMA-style matrix multiplication C = A*B (A n x m, B m x k) by panels of the inner "
        "dimension, over any layouts of A, B and C");
    hit::app::ProductFlags flags;
    flags.add_to(cli, o);
    cli.add_option("--panel", o.panel, "panel width: columns of A (rows of B) per step")
        ->capture_default_str()
        ->check(hit::cli::count(1));
    cli.add_option("--lookahead", o.lookahead,
                   "panels travelling while one is multiplied (each takes a buffer for A's and "
                   "B's panel)")
        ->capture_default_str()
        ->check(hit::cli::count(1, 64));
    cli.add_option("--topology", o.topology, "virtual topology of the processes")
        ->capture_default_str();
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-summa")) return 0;
    flags.apply(env, o);
    return hit::summa::run(env, o);
  });
}
