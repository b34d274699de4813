// hit-cg: conjugate gradients for a sparse symmetric positive definite matrix.
#include <CLI/CLI.hpp>

#include <limits>

#include "../../tools/common/cli.hpp"
#include "cg.hpp"
#include "hit/core/error.hpp"
#include "hit/program.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-cg", [](hit::Environment& env, int ac, char** av) {
    // The dot products reduce over a process's whole rows at once: no outOfCore partition.
    env.set_out_of_core_available(false);
    hit::cg::Options o;
    CLI::App cli("Conjugate gradients for a sparse symmetric positive definite matrix A x = b");
    o.input.add_to(cli, "--matrix",
                   "the matrix as a Matrix Market file (coordinate, real or "
                   "integer, general or symmetric)");
    cli.add_option("--rhs", o.rhs,
                   "b as a raw file or FILE.h5:/dataset of N values of --type (default b = A·1)");
    cli.add_option("--tol", o.tol,
                   "relative residual ||b - A x|| / ||b|| to reach (default 1e-8 for double, "
                   "1e-4 for float)")
        ->check(hit::cli::real_above(0));
    cli.add_option("--max-iters", o.max_iters, "most iterations")
        ->capture_default_str()
        ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
    std::string layout;
    cli.add_option("--layout", layout,
                   "sparse layout of the rows: rows[:by=nonzeros][,w=...], metis[:w=...|"
                   "models=...] (else HIT_LAYOUT_MATRIX, else rows)");
    cli.add_option("--x-out", o.x_out, "write the solution x as a raw file or FILE.h5:/dataset");
    cli.add_option("--balance", o.balance,
                   "move rows between processes while iterating: off, cpm (shares in proportion "
                   "to the measured speeds) or fpm (partial functional models)")
        ->capture_default_str()
        ->check(CLI::IsMember({"off", "cpm", "fpm"}));
    cli.add_option("--balance-every", o.balance_every, "iterations per balancing step")
        ->capture_default_str()
        ->check(hit::cli::count(1, 100000));
    cli.add_option("--balance-models", o.balance_models,
                   "stored performance models whose unit is one row (hit-fpm build --kernel "
                   "spmv): one file per process, comma-separated, or one name with {rank}; the "
                   "rows start from their partition");
    o.run.add_to(cli,
                 "recompute ||b - A x|| / ||b|| independently of the solver (and, for small "
                 "matrices, compare x with a serial dense solve)",
                 "draw the layout to this SVG file (generated 2-D grids)", "MATRIX");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-cg")) return 0;
    o.layout =
        hit::app::given_or(hit::layout_setting(env, "matrix", o.layout.code), layout, "--layout");
    o.run.apply(env, "matrix");
    return hit::cg::run(env, o);
  });
}
