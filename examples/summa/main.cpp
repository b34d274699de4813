// hit-summa: SUMMA-style matrix multiplication over any layouts of A, B and C.
#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/core/program.hpp"
#include "summa.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-summa", [](hit::Environment& env, int ac, char** av) {
    hit::summa::Options o;
    CLI::App cli(
        "SUMMA-style matrix multiplication C = A*B (A n x m, B m x k) by panels of the inner "
        "dimension, over any layouts of A, B and C");
    cli.add_option("--n", o.n, "rows of A and C")->check(hit::cli::count(1));
    cli.add_option("--m", o.m, "columns of A, rows of B (default n)")->check(hit::cli::count(1));
    cli.add_option("--k", o.k, "columns of B and C (default n)")->check(hit::cli::count(1));
    cli.add_option("--panel", o.panel, "panel width: columns of A (rows of B) per step")
        ->capture_default_str()
        ->check(hit::cli::count(1));
    cli.add_option("--topology", o.topology, "virtual topology of the processes")
        ->capture_default_str();
    // Layouts and partition from the command line win over HIT_LAYOUT_A/B/C and HIT_PARTITION_C,
    // which win over the defaults written here (Options).
    std::string layout;
    std::string layouts[3];
    cli.add_option("--layout", layout, "layout spec for all three matrices");
    cli.add_option("--layout-a", layouts[0], "layout spec of A (else HIT_LAYOUT_A, else blocks)");
    cli.add_option("--layout-b", layouts[1], "layout spec of B (else HIT_LAYOUT_B, else blocks)");
    cli.add_option("--layout-c", layouts[2], "layout spec of C (else HIT_LAYOUT_C, else blocks)");
    o.run.add_to(cli, "verify against a serial product",
                 "draw the layouts of A, B and C to this SVG file", "C");
    cli.add_option("--a", o.a_file, "read A from this raw file (row-major, no header)")
        ->check(hit::cli::file_name());
    cli.add_option("--b", o.b_file, "read B from this raw file")->check(hit::cli::file_name());
    cli.add_option("--c-out", o.c_out, "write C to this raw file")->check(hit::cli::file_name());
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-summa")) return 0;
    const char* labels[3] = {"layout-a", "layout-b", "layout-c"};
    for (int i = 0; i < 3; ++i) {
      const std::string& chosen = layouts[i].empty() ? layout : layouts[i];
      if (!chosen.empty()) env.config().set(labels[i], chosen);
    }
    if (o.m < 0) o.m = o.n;
    if (o.k < 0) o.k = o.n;
    o.run.apply(env, "c");
    // A file that cannot be written is found before the computation, not after it.
    hit::collectively(env.comm(), [&] {
      if (env.rank() == 0 && !o.c_out.empty()) hit::check_output_path(o.c_out, "C (--c-out)");
    });
    return hit::summa::run(env, o);
  });
}
