// hit-cannon: Cannon's matrix multiplication on a square grid of processes.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "cannon.hpp"
#include "hit/core/error.hpp"
#include "hit/core/program.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-cannon", [](hit::Environment& env, int ac, char** av) {
    hit::cannon::Options o;
    CLI::App cli(
        "Cannon's matrix multiplication C = A*B (A n x m, B m x k) on a square process grid");
    cli.add_option("--n", o.n, "rows of A and C")->check(CLI::PositiveNumber);
    cli.add_option("--m", o.m, "columns of A, rows of B (default n)");
    cli.add_option("--k", o.k, "columns of B and C (default n)");
    std::string layout;
    cli.add_option("--layout", layout, "layout spec for all three matrices");
    cli.add_option("--layout-a", o.layout_a, "layout spec of A (HIT_LAYOUT_A overrides)");
    cli.add_option("--layout-b", o.layout_b, "layout spec of B (HIT_LAYOUT_B overrides)");
    cli.add_option("--layout-c", o.layout_c, "layout spec of C (HIT_LAYOUT_C overrides)");
    o.run.add_to(cli, "verify against a serial product",
                 "draw the layouts of A, B and C to this SVG file", "C");
    cli.add_option("--a", o.a_file, "read A from this raw file (row-major, no header)");
    cli.add_option("--b", o.b_file, "read B from this raw file");
    cli.add_option("--c-out", o.c_out, "write C to this raw file");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-cannon")) return 0;
    if (!layout.empty()) {
      for (std::string* l : {&o.layout_a, &o.layout_b, &o.layout_c}) {
        if (*l == "blocks") *l = layout;
      }
    }
    if (o.m < 0) o.m = o.n;
    if (o.k < 0) o.k = o.n;
    if (o.m < 1 || o.k < 1) {
      throw hit::Error(hit::ErrorKind::invalid_argument,
                       "matrix sizes must be at least 1, got n=" + std::to_string(o.n) +
                           " m=" + std::to_string(o.m) + " k=" + std::to_string(o.k));
    }
    o.run.apply(env);
    return hit::cannon::run(env, o);
  });
}
