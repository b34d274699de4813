// hit-qr: tile QR factorisation of an m x n matrix, and least squares with it.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "hit/core/error.hpp"
#include "hit/program.hpp"
#include "qr.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-qr", [](hit::Environment& env, int ac, char** av) {
    hit::qr::Options o;
    CLI::App cli(
        "Tile QR factorisation A = Q*R of an m x n matrix (m >= n) on the task runtime, and the "
        "least-squares solution of min |A*x - b| with it");
    cli.add_option("--m", o.m, "rows of the matrix (default: --n, square)")
        ->check(hit::cli::count(1));
    cli.add_option("--n", o.n, "columns of the matrix")->check(hit::cli::count(1));
    cli.add_option("--b", o.b, "tile side of the default layout blockCyclic:b=B")
        ->check(hit::cli::count(1));
    // The command line wins over HIT_LAYOUT_A, which wins over blockCyclic:b=<--b>.
    std::string layout;
    cli.add_option("--layout", layout,
                   "layout spec of the matrix (else HIT_LAYOUT_A, else blockCyclic:b=<--b>)");
    cli.add_option("--topology", o.topology, "virtual topology spec of the process grid");
    cli.add_flag("--tune", o.tune,
                 "with a heteroBlockCyclic layout: tune its host share B_h on a small square "
                 "problem first (each trial reported), as hit-cholesky --tune does, then "
                 "factorise with the best");
    cli.add_option("--tune-n", o.tune_n,
                   "order of the problem --tune factorises (default: 3 x B x the accelerator "
                   "processes)")
        ->check(hit::cli::count(1));
    o.run.add_to(cli,
                 "check that |A - Q*R|_F / |A|_F and |Q^T*Q - I|_F are at most 30 m eps (and, "
                 "with --rhs, that |A^T*(A*x - b)| is as small as the solve can make it)",
                 "draw the tasks of the last timed run on each worker to this SVG file", "A");
    cli.add_option("--a", o.a_file,
                   "read A from this raw file or FILE.h5:/dataset (row-major m x n)")
        ->check(hit::cli::file_name());
    cli.add_option("--r-out", o.r_out,
                   "write R (n x n, zeros below the diagonal) to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
    cli.add_option("--q-out", o.q_out,
                   "write Q (m x n, formed explicitly) to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
    CLI::Option* rhs =
        cli.add_option("--rhs", o.rhs_file,
                       "solve min |A*x - b| for b read from this raw file or FILE.h5:/dataset (m "
                       "values)")
            ->check(hit::cli::file_name());
    cli.add_option("--x-out", o.x_out,
                   "write the solution x (n values) to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name())
        ->needs(rhs);
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-qr")) return 0;
    o.layout = hit::app::given_or(
        hit::layout_setting(env, "a", "blockCyclic:b=" + std::to_string(o.b)), layout, "--layout");
    o.run.apply(env, "a");
    return hit::qr::run(env, o);
  });
}
