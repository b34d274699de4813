// hit-layout: compute a layout without running an application (a dry run, docs/layouts.md).
//
//   hit-layout --shape TEXT [--procs P] [--topology SPEC] [--layout SPEC] [--devices SPEC]
//              [--type double|float|int32|int64] [--ghost W] [--pad] [--comm SPEC]
//              [--json] [--svg FILE]
//   hit-layout --matrix FILE.mtx | --generate poisson2d:n=K[,permute=SEED]|poisson3d:n=K[,...]
//              [--procs P] [--topology SPEC] [--layout rows|metis[:...]] [--devices SPEC]
//              [--type ...] [--json] [--svg FILE (poisson2d only)]
//   hit-layout --list
//   hit-layout --advise --app cannon|summa|jacobi|cg|cholesky (--shape | --matrix | --generate)
//              [--procs P] [--devices SPEC] [--models FILES] [--network FILE] [--nodes K]
//              [--host-cores C] [--iters I] [--inner M] [--panel W] [--calibrate RESULT.json...]
//              [--top N] [--json] [--svg FILE]        (the layout advisor: advise.hpp)
//
// Every rank computes the same layout (it is deterministic); only rank 0 prints, so running under
// `mpiexec -n P` and running one process with `--procs P` give the same answer.
//
// With --matrix or --generate the layout is a sparse one (hit::sparse_layout, `rows` by default):
// the run's processes read (or generate) the matrix in block rows, collectively, and lay it out
// for a topology of --procs processes, which need not be the run's count (a sparse layout plug-in
// gets the rows from the run's communicator and returns owners for the topology's processes).
// Reported per rank: rows, nonzeros, ghosts, and the values and bytes it sends per halo update;
// then the edge cut and the imbalance.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../common/cli.hpp"
#include "advise.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/layout.hpp"
#include "hit/layouts/layout_svg.hpp"
#include "hit/partition.hpp"
#include "hit/program.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/matrix_market.hpp"
#include "hit/sparse/sparse_layout.hpp"
#include "hit/sparse/sparse_layout_svg.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"
#include "report.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;

struct Options {
  std::string shape;
  std::string matrix;
  std::string generate;
  int procs = 0;
  std::string topology = "array";
  std::string layout;  // default: blocks, or rows for a sparse matrix
  std::string devices;
  std::string type = "double";
  long long ghost = 0;
  bool pad = false;
  std::string comm;
  bool json = false;
  std::string svg;
  bool list = false;
};

// One registry's plug-ins with their parameters: `key=default: [type and range] description`.
template <class Registry>
std::string describe(const std::string& title, const Registry& registry) {
  std::string out = title + ":\n";
  for (const auto* plugin : registry.all()) {
    out += fmt::format("  {:<14} {}\n", plugin->name(), plugin->description());
    for (const hit::ParamInfo& p : plugin->params()) {
      out += fmt::format("  {:<14}   {}={}: [{}] {}\n", "", p.key,
                         p.default_value.empty() ? "..." : p.default_value, p.type_text(),
                         p.description);
    }
  }
  return out;
}

std::string listing(hit::Environment& env) {
  std::string out = describe("topologies (--topology)", env.extension<hit::TopologyRegistry>());
  out += describe("layouts (--layout)", env.extension<hit::LayoutRegistry>());
  out += describe("partitions (second level, per device)", env.extension<hit::PartitionRegistry>());
  out += describe("sparse layouts (--layout with --matrix or --generate)",
                  env.extension<hit::SparseLayoutRegistry>());
  // Further plug-in kinds join the listing here: one describe() call per registry (any
  // hit::Registry whose plug-ins have name(), description() and params()).
  out += "communications (--comm): " + hit::tools::comm_grammar() + "\n";
  if (!env.loaded_plugins().empty()) {
    out += "external plug-ins loaded from HIT_PLUGIN_PATH:\n";
    for (const auto& file : env.loaded_plugins()) out += "  " + file + "\n";
  }
  return out;
}

// The devices of `nprocs` processes: --devices, else HIT_DEVICES; empty when neither is set.
std::vector<hit::DeviceBinding> device_list(hit::Environment& env, const Options& o, int nprocs) {
  if (!o.devices.empty()) env.config().set("devices", o.devices);
  if (auto spec = env.config().get("devices")) return hit::parse_device_spec(*spec, nprocs);
  return {};
}

// Only rank 0 writes; a failure there must still end every rank with an error.
template <class Write>
void on_rank0(hit::Environment& env, Write&& write) {
  hit::collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    write();
    std::fflush(stdout);
  });
}

int dense(hit::Environment& env, const Options& o, int nprocs) {
  const hit::Shape shape = hit::Shape::parse(o.shape);
  if (o.ghost < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--ghost {}: the width must be >= 0", o.ghost));
  }
  const hit::tools::Allocation alloc{hit::tools::element_bytes(o.type), o.ghost, o.pad};
  const std::vector<hit::DeviceBinding> devices = device_list(env, o, nprocs);

  const hit::Topology topo = hit::topology(o.topology, nprocs);
  const hit::Layout layout =
      hit::layout(o.layout.empty() ? "blocks" : o.layout, topo, shape, {.devices = devices});
  std::optional<std::vector<hit::index_t>> sends;
  if (!o.comm.empty()) sends = hit::tools::send_bytes(layout, hit::Spec::parse(o.comm), alloc);

  on_rank0(env, [&] {
    if (!o.svg.empty()) {
      const std::string note = fmt::format("{} elements of {}", shape.size(), o.type);
      hit::write_file_atomically(o.svg, hit::layout_svg(layout, note, devices));
    }
    if (o.json) {
      fmt::print("{}\n", hit::tools::layout_json(layout, alloc, sends).dump());
    } else {
      fmt::print("{}", hit::tools::layout_table(layout, alloc, o.type, sends));
    }
  });
  return hit::exit_ok;
}

// --matrix or --generate: the run's processes hold the matrix in block rows and lay it out for
// `nprocs` processes (the sparse layout plug-ins gather what they need over the run's
// communicator, whatever the topology's count).
int sparse(hit::Environment& env, const Options& o, int nprocs) {
  for (const auto& [given, name] : {std::pair{o.ghost != 0, "--ghost"}, std::pair{o.pad, "--pad"},
                                    std::pair{!o.comm.empty(), "--comm"}}) {
    if (given) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} applies to --shape only (a sparse layout reports its halo "
                              "volume as send_values and send_bytes)",
                              name));
    }
  }
  // A sparse layout keeps per-process figures on every process (the dense layouts refuse the same
  // count in their plug-ins, hit::require_block_count).
  if (nprocs > hit::max_layout_blocks) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--procs {}: a sparse layout keeps the figures of every process on "
                            "every process; hitmap++ allows at most {} processes",
                            nprocs, hit::max_layout_blocks));
  }
  const hit::index_t element_bytes = hit::tools::element_bytes(o.type);
  std::optional<hit::GeneratorSpec> generator;
  if (!o.generate.empty()) generator = hit::GeneratorSpec::parse(o.generate);
  if (!o.svg.empty() && (!generator || generator->kind != hit::GeneratorKind::poisson2d)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--svg draws generated 2-D grids only (--generate poisson2d:n=K), "
                            "not {}",
                            generator ? "'" + generator->str() + "'" : "--matrix " + o.matrix));
  }
  const std::vector<hit::DeviceBinding> devices = device_list(env, o, nprocs);
  const hit::Topology topo = hit::topology(o.topology, nprocs);

  const hit::CsrRows<double> mine = generator
                                        ? hit::generate_rows<double>(*generator, env.comm())
                                        : hit::read_matrix_market<double>(o.matrix, env.comm());
  const hit::SparseLayout layout =
      hit::sparse_layout(o.layout.empty() ? "rows" : o.layout, topo, mine, {.devices = devices});
  hit::index_t nonzeros = 0;
  for (const hit::SparsePartStats& s : layout.stats()) nonzeros += s.nonzeros;
  const hit::tools::SparseReport report{layout, generator ? generator->str() : o.matrix, nonzeros,
                                        element_bytes};

  on_rank0(env, [&] {
    if (!o.svg.empty()) {
      hit::write_file_atomically(
          o.svg,
          hit::sparse_layout_svg(layout, hit::grid_positions(*generator),
                                 "hit-layout " + generator->str() + " (" + layout.spec() + ")"));
    }
    if (o.json) {
      fmt::print("{}\n", hit::tools::sparse_layout_json(report).dump());
    } else {
      fmt::print("{}", hit::tools::sparse_layout_table(report, o.type));
    }
  });
  return hit::exit_ok;
}

int body(hit::Environment& env, int argc, char** argv) {
  Options o;
  CLI::App app{
      "hit-layout: compute a layout for a shape (or a sparse matrix), a topology and a layout "
      "plug-in (a dry run): per-rank blocks, element counts, the memory each rank allocates and "
      "the bytes it sends in a named communication; for a sparse matrix per-rank rows, nonzeros, "
      "ghosts and halo volume, the edge cut and the imbalance"};
  app.add_option("--shape", o.shape, "the global shape, e.g. [0:1000][0:1000] or [0:100:2]");
  app.add_option(
      "--matrix", o.matrix,
      "lay out the rows of this Matrix Market file (a sparse layout) instead of a shape");
  app.add_option("--generate", o.generate,
                 "lay out the rows of a generated matrix (a sparse layout): "
                 "poisson2d:n=K[,permute=SEED] or poisson3d:n=K[,permute=SEED]");
  auto* procs =
      app.add_option("--procs", o.procs, "number of processes (default: the ranks of this run)");
  app.add_option("--topology", o.topology, "virtual topology spec (see --list)")
      ->capture_default_str();
  app.add_option("--layout", o.layout,
                 "layout spec name[:key=value,...] (see --list); default blocks, or rows with "
                 "--matrix and --generate");
  app.add_option("--devices", o.devices,
                 "device of every rank (default: HIT_DEVICES), e.g. cuda:0*3,cpu");
  app.add_option("--type", o.type, "element type: double, float, int32 or int64")
      ->capture_default_str();
  app.add_option("--ghost", o.ghost, "ghost border width added around every block (bytes)");
  app.add_flag("--pad", o.pad, "pad every block to the layout's largest part (bytes)");
  app.add_option("--comm", o.comm,
                 "estimate the bytes each rank sends: " + hit::tools::comm_grammar());
  app.add_flag("--json", o.json, "one JSON object on stdout instead of a table");
  app.add_option("--svg", o.svg,
                 "also draw the layout to this SVG file (a sparse one: --generate poisson2d only)")
      ->check(hit::cli::file_name());
  app.add_flag("--list", o.list, "list every topology and layout plug-in with its parameters");
  hit::tools::AdviseOptions advice;
  hit::tools::add_advise_options(app, advice);
  if (!hit::cli::parse(app, argc, argv, env.rank(), "hit-layout")) return hit::exit_ok;

  if (o.list) {
    const std::string text = listing(env);
    if (env.rank() == 0) fmt::print("{}", text);
    return hit::exit_ok;
  }
  std::vector<std::string> inputs;
  if (!o.shape.empty()) inputs.push_back("--shape");
  if (!o.matrix.empty()) inputs.push_back("--matrix");
  if (!o.generate.empty()) inputs.push_back("--generate");
  if (inputs.empty() && advice.advise && advice.app == "cg") {
    throw Error(ErrorKind::invalid_argument,
                "--advise --app cg needs the matrix: --matrix FILE.mtx or --generate SPEC");
  }
  if (inputs.size() != 1) {
    throw Error(
        ErrorKind::invalid_argument,
        inputs.empty()
            ? std::string("--shape is required, or --matrix or --generate for a sparse layout: "
                          "e.g. --shape [0:1000][0:1000] (see hit-layout --help)")
            : fmt::format("give one of --shape, --matrix and --generate, not {}",
                          fmt::join(inputs, " and ")));
  }
  const int nprocs = procs->count() > 0 ? o.procs : env.size();
  if (nprocs < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--procs {}: the number of processes must be at least 1", nprocs));
  }
  if (advice.advise) {
    for (const auto& [given, name] :
         {std::pair{!o.layout.empty(), "--layout"}, std::pair{o.topology != "array", "--topology"},
          std::pair{!o.comm.empty(), "--comm"}, std::pair{o.ghost != 0, "--ghost"},
          std::pair{o.pad, "--pad"}}) {
      if (given) {
        throw Error(
            ErrorKind::invalid_argument,
            fmt::format("--advise tries every layout and topology that applies: drop {}", name));
      }
    }
    return hit::tools::advise(
        env, advice, {o.shape, o.matrix, o.generate, o.devices, o.type, o.svg, o.json}, nprocs);
  }
  if (!advice.app.empty() || !advice.models.empty() || !advice.network.empty() ||
      !advice.calibrate.empty()) {
    throw Error(ErrorKind::invalid_argument,
                "--app, --models, --network and --calibrate apply to --advise");
  }
  return o.shape.empty() ? sparse(env, o, nprocs) : dense(env, o, nprocs);
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-layout", body);
}
