// hit-heat: heat diffusion on a graph (Hitmap's Heat example).
#include <CLI/CLI.hpp>

#include <limits>

#include "../../tools/common/cli.hpp"
#include "heat.hpp"
#include "hit/program.hpp"

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-heat", [](hit::Environment& env, int ac, char** av) {
    hit::heat::Options o;
    CLI::App cli("Heat on a graph: each iteration sets every vertex to the mean of its neighbours");
    o.input.add_to(cli, "--graph",
                   "the graph as a Matrix Market file (its off-diagonal pattern; any field)");
    cli.add_option("--iters", o.iters, "iterations")
        ->capture_default_str()
        ->check(hit::cli::count(0, std::numeric_limits<int>::max()));
    cli.add_option("--init", o.init,
                   "initial values, a raw file or FILE.h5:/dataset of one --type value per vertex "
                   "(default: 10 "
                   "vertices, one in each tenth of the vertex range, at 100, the others 0)");
    std::string layout;
    cli.add_option("--layout", layout,
                   "sparse layout of the vertices: metis[:w=...], rows[:by=nonzeros] (else "
                   "HIT_LAYOUT_GRAPH, else metis)");
    cli.add_option("--out", o.out, "write the final values as a raw file or FILE.h5:/dataset");
    o.run.add_to(cli, "compare with a serial run, value by value",
                 "draw the layout to this SVG file (generated 2-D grids)", "GRAPH");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-heat")) return 0;
    o.layout =
        hit::app::given_or(hit::layout_setting(env, "graph", o.layout.code), layout, "--layout");
    o.run.apply(env, "graph");
    return hit::heat::run(env, o);
  });
}
