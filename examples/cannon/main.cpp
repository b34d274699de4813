// hit-cannon: Cannon's matrix multiplication on a square grid of processes.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "cannon.hpp"
#include "hit/program.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-cannon", [](hit::Environment& env, int ac, char** av) {
    hit::cannon::Options o;
    CLI::App cli(
        "Cannon's matrix multiplication C = A*B (A n x m, B m x k) on a square process grid");
    hit::app::ProductFlags flags;
    flags.add_to(cli, o);
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-cannon")) return 0;
    flags.apply(env, o);
    return hit::cannon::run(env, o);
  });
}
