// hit-cholesky: tiled Cholesky factorisation of a symmetric positive definite matrix.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "cholesky.hpp"
#include "hit/core/error.hpp"
#include "hit/program.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-cholesky", [](hit::Environment& env, int ac, char** av) {
    hit::cholesky::Options o;
    CLI::App cli(
        "Tiled Cholesky factorisation A = L*L^T of an n x n symmetric positive definite "
        "matrix");
    cli.add_option("--n", o.n, "order of the matrix")->check(hit::cli::count(1));
    cli.add_option("--b", o.b, "tile side of the default layout blockCyclic:b=B")
        ->check(hit::cli::count(1));
    // The command line wins over HIT_LAYOUT_A, which wins over blockCyclic:b=<--b>.
    std::string layout;
    cli.add_option("--layout", layout,
                   "layout spec of the matrix (else HIT_LAYOUT_A, else blockCyclic:b=<--b>)");
    cli.add_option("--topology", o.topology, "virtual topology spec of the process grid");
    bool no_lookahead = false;
    cli.add_flag("--no-lookahead", no_lookahead,
                 "finish each trailing update before the next panel (no overlap)");
    cli.add_flag("--runtime", o.runtime,
                 "run the tile kernels as tasks of the task runtime (docs/runtime.md), as their "
                 "tiles are ready and the critical path first: one worker per core of each "
                 "process, the tiles others read sent once as messages");
    CLI::Option* tune = cli.add_flag(
        "--tune", o.tune,
        "with a heteroBlockCyclic layout: choose its top-level tile size B (the "
        "smallest, from 128 to 2048 and the layout's own, at which the accelerators' "
        "gemm is within 5 % of its best rate), then tune its host share B_h on a small "
        "problem (each trial reported), then factorise with the best");
    cli.add_flag("--keep-b", o.keep_b, "with --tune: keep the layout's B, tune B_h only")
        ->needs(tune);
    cli.add_option("--tune-n", o.tune_n,
                   "order of the problem --tune factorises (default: 3 x B x the accelerator "
                   "processes; the problem's own n measures what it will run)")
        ->check(hit::cli::count(1));
    o.run.add_to(cli, "check that |A - L*L^T|_F / (|A|_F n eps) <= 30",
                 "draw the layout of the matrix to this SVG file (with --runtime: the tasks of "
                 "the last timed run on each worker)",
                 "A");
    cli.add_option("--a", o.a_file,
                   "read A from this raw file or FILE.h5:/dataset (row-major n x n; its lower "
                   "triangle is used)")
        ->check(hit::cli::file_name());
    cli.add_option("--c-out", o.c_out,
                   "write L (zeros above the diagonal) to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-cholesky")) return 0;
    o.lookahead = !no_lookahead;
    o.layout = hit::app::given_or(
        hit::layout_setting(env, "a", "blockCyclic:b=" + std::to_string(o.b)), layout, "--layout");
    o.run.apply(env, "a");
    return hit::cholesky::run(env, o);
  });
}
