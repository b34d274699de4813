// hit-linsolve: Jacobi iteration for a dense linear system A x = b, rows balanced while it runs.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "../common/balance_flags.hpp"
#include "hit/core/error.hpp"
#include "hit/program.hpp"
#include "linsolve.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-linsolve", [](hit::Environment& env, int ac, char** av) {
    hit::linsolve::Options o;
    o.tol = 0;  // 0: the element type's default
    CLI::App cli(
        "Jacobi iteration for a dense, diagonally dominant linear system A x = b (generated from "
        "--seed): rows of [A | b] by a row layout, x gathered every iteration");
    cli.add_option("--n", o.n, "unknowns")->check(hit::cli::count(1, 1 << 20));
    cli.add_option("--iters", o.iters, "iterations at most")
        ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
    cli.add_option("--tol", o.tol,
                   "stop when the largest change of x is at most this (default 1e-10 for double, "
                   "1e-5 for float)")
        ->check(hit::cli::real_above(0));
    std::string layout;
    cli.add_option("--layout", layout,
                   "layout of the rows of [A | b] over the processes (else HIT_LAYOUT_A, else "
                   "blocks); whole rows in rank order");
    hit::app::BalanceFlags balance;
    hit::app::add_balance_flags(cli, o.balance, balance);
    o.run.add_to(cli, "compare x with a serial Jacobi solve, bit for bit",
                 "draw the layout of [A | b] to this SVG file", "A");
    cli.add_option("--out", o.out, "write x to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-linsolve")) return 0;
    hit::app::apply_balance_flags(env, balance, o.balance);
    o.layout = hit::app::given_or(hit::layout_setting(env, "a", o.layout.code), layout, "--layout");
    o.run.apply(env, "a");
    return hit::linsolve::run(env, o);
  });
}
