// hit-layout: compute a layout without running an application (a dry run, docs/layouts.md).
//
//   hit-layout --shape TEXT [--procs P] [--topology SPEC] [--layout SPEC] [--devices SPEC]
//              [--type double|float|int32|int64] [--ghost W] [--pad] [--comm SPEC]
//              [--json] [--svg FILE]
//   hit-layout --list
//
// Every rank computes the same layout (it is deterministic); only rank 0 prints, so running under
// `mpiexec -n P` and running one process with `--procs P` give the same answer.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "../common/cli.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/core/program.hpp"
#include "hit/device_binding.hpp"
#include "hit/layout.hpp"
#include "hit/layout_svg.hpp"
#include "hit/partition.hpp"
#include "hit/topology.hpp"
#include "report.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;

struct Options {
  std::string shape;
  int procs = 0;
  std::string topology = "array";
  std::string layout = "blocks";
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
  // Further plug-in kinds join the listing here: one describe() call per registry (any
  // hit::Registry whose plug-ins have name(), description() and params()).
  out += "communications (--comm): " + hit::tools::comm_grammar() + "\n";
  if (!env.loaded_plugins().empty()) {
    out += "external plug-ins loaded from HIT_PLUGIN_PATH:\n";
    for (const auto& file : env.loaded_plugins()) out += "  " + file + "\n";
  }
  return out;
}

int body(hit::Environment& env, int argc, char** argv) {
  Options o;
  CLI::App app{
      "hit-layout: compute a layout for a shape, a topology and a layout plug-in (a dry "
      "run): per-rank blocks, element counts, the memory each rank allocates and the "
      "bytes it sends in a named communication"};
  app.add_option("--shape", o.shape, "the global shape, e.g. [0:1000][0:1000] or [0:100:2]");
  auto* procs =
      app.add_option("--procs", o.procs, "number of processes (default: the ranks of this run)");
  app.add_option("--topology", o.topology, "virtual topology spec (see --list)")
      ->capture_default_str();
  app.add_option("--layout", o.layout, "layout spec name[:key=value,...] (see --list)")
      ->capture_default_str();
  app.add_option("--devices", o.devices,
                 "device of every rank (default: HIT_DEVICES), e.g. cuda:0*3,cpu");
  app.add_option("--type", o.type, "element type: double, float, int32 or int64")
      ->capture_default_str();
  app.add_option("--ghost", o.ghost, "ghost border width added around every block (bytes)");
  app.add_flag("--pad", o.pad, "pad every block to the layout's largest part (bytes)");
  app.add_option("--comm", o.comm,
                 "estimate the bytes each rank sends: " + hit::tools::comm_grammar());
  app.add_flag("--json", o.json, "one JSON object on stdout instead of a table");
  app.add_option("--svg", o.svg, "also draw the layout to this SVG file")
      ->check(hit::cli::file_name());
  app.add_flag("--list", o.list, "list every topology and layout plug-in with its parameters");
  if (!hit::cli::parse(app, argc, argv, env.rank(), "hit-layout")) return hit::exit_ok;

  if (o.list) {
    const std::string text = listing(env);
    if (env.rank() == 0) fmt::print("{}", text);
    return hit::exit_ok;
  }
  if (o.shape.empty()) {
    throw Error(ErrorKind::invalid_argument,
                "--shape is required, e.g. --shape [0:1000][0:1000] (see hit-layout --help)");
  }
  const hit::Shape shape = hit::Shape::parse(o.shape);
  const int nprocs = procs->count() > 0 ? o.procs : env.size();
  if (nprocs < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--procs {}: the number of processes must be at least 1", nprocs));
  }
  if (o.ghost < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--ghost {}: the width must be >= 0", o.ghost));
  }
  const hit::tools::Allocation alloc{hit::tools::element_bytes(o.type), o.ghost, o.pad};
  if (!o.devices.empty()) env.config().set("devices", o.devices);
  std::vector<hit::DeviceBinding> devices;
  if (auto spec = env.config().get("devices")) devices = hit::parse_device_spec(*spec, nprocs);

  const hit::Topology topo = hit::topology(o.topology, nprocs);
  const hit::Layout layout = hit::layout(o.layout, topo, shape, {.devices = devices});
  std::optional<std::vector<hit::index_t>> sends;
  if (!o.comm.empty()) sends = hit::tools::send_bytes(layout, hit::Spec::parse(o.comm), alloc);

  // Only rank 0 writes; a failure there must still end every rank with an error.
  hit::collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.svg.empty()) {
      const std::string note = fmt::format("{} elements of {}", shape.size(), o.type);
      hit::write_file_atomically(o.svg, hit::layout_svg(layout, note, devices));
    }
    if (o.json) {
      fmt::print("{}\n", hit::tools::layout_json(layout, alloc, sends).dump());
    } else {
      fmt::print("{}", hit::tools::layout_table(layout, alloc, o.type, sends));
    }
    std::fflush(stdout);
  });
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-layout", body);
}
