// hit-info: the physical topology of a run, the devices found and the binding of every rank
// (docs/devices.md §1–§3). Run it under mpiexec with the same --devices / HIT_DEVICES / HIT_NODES
// as the program whose binding you want to see.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../common/cli.hpp"
#include "hit/core/error.hpp"
#include "hit/core/wait_policy.hpp"
#include "hit/program.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

std::string ranges(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

nlohmann::json to_json(const hit::PhysicalTopology& topo, hit::WaitPolicy wait) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : topo.node_list()) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : n.gpus) {
      gpus.push_back(
          {{"index", g.index},
           {"name", g.name},
           {"memory_bytes", g.memory_bytes},
           {"compute_capability", fmt::format("{}.{}", g.compute_major, g.compute_minor)},
           {"multiprocessors", g.multiprocessors},
           {"pci_bus_id", g.pci_bus_id}});
    }
    nodes.push_back({{"node", n.node},
                     {"host", n.host.hostname},
                     {"cpu_model", n.host.cpu_model},
                     {"sockets", n.host.sockets},
                     {"numa_nodes", n.host.numa_nodes},
                     {"cores", n.host.cores},
                     {"pus", n.host.pus},
                     {"memory_bytes", n.host.memory_bytes},
                     {"gpus", gpus},
                     {"gpu_note", n.gpu_note},
                     {"ranks", n.ranks}});
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : topo.ranks()) {
    ranks.push_back({{"rank", r.rank},
                     {"node", r.node},
                     {"node_rank", r.node_rank},
                     {"host", r.host},
                     {"device", r.device.str()},
                     {"kind", std::string(hit::to_string(r.device.kind))},
                     {"index", r.device.index},
                     {"params", r.device.params},
                     {"emulated", r.emulated()},
                     {"sharing", r.sharing},
                     {"shared_with", topo.ranks_sharing_device(r.rank)},
                     {"cores", r.cores},
                     {"description", r.description}});
  }
  return {{"nodes", nodes},
          {"emulated_nodes", topo.emulated_nodes()},
          {"binding",
           {{"source", topo.binding_source()},
            {"spec", topo.binding_spec()},
            {"devices", hit::format_device_spec(topo.bindings())}}},
          {"pinned", topo.pinned()},
          {"wait", hit::to_string(wait)},
          {"ranks", ranks}};
}

void print_human(const hit::PhysicalTopology& topo, hit::WaitPolicy wait) {
  std::printf("hitmap++ physical topology: %d node%s (%s)\n", topo.nodes(),
              topo.nodes() == 1 ? "" : "s",
              topo.emulated_nodes() ? "emulated nodes, HIT_NODES" : "shared-memory groups of MPI");
  for (const auto& n : topo.node_list()) {
    std::printf(
        "node %d: %s, %d socket%s, %d NUMA node%s, %d cores (%d hardware threads), %s%s%s\n",
        n.node, n.host.hostname.c_str(), n.host.sockets, n.host.sockets == 1 ? "" : "s",
        n.host.numa_nodes, n.host.numa_nodes == 1 ? "" : "s", n.host.cores, n.host.pus,
        hit::human_bytes(static_cast<double>(n.host.memory_bytes)).c_str(),
        n.host.cpu_model.empty() ? "" : ", ", n.host.cpu_model.c_str());
    if (n.gpus.empty()) std::printf("  GPUs: none (%s)\n", n.gpu_note.c_str());
    for (const auto& g : n.gpus) {
      std::printf("  cuda:%d  %s, %s, compute capability %d.%d, %d SMs, PCI %s\n", g.index,
                  g.name.c_str(), hit::human_bytes(static_cast<double>(g.memory_bytes)).c_str(),
                  g.compute_major, g.compute_minor, g.multiprocessors, g.pci_bus_id.c_str());
    }
  }
  std::printf("binding (%s): %s\n", topo.binding_source().c_str(),
              hit::format_device_spec(topo.bindings()).c_str());
  for (const auto& r : topo.ranks()) {
    std::printf("  rank %d  node %d  %-28s cores %-8s %s%s\n", r.rank, r.node, r.label().c_str(),
                ranges(r.cores).c_str(), r.description.c_str(),
                r.sharing > 1 ? fmt::format(" (shared by {} ranks)", r.sharing).c_str() : "");
  }
  // Devices several ranks share: their resident tiles stay on the device while all fit, and are
  // time-shared when they do not (docs/devices.md).
  std::set<std::pair<int, std::string>> shown;
  for (const auto& r : topo.ranks()) {
    const auto ranks = topo.ranks_sharing_device(r.rank);
    const std::string device =
        r.device.kind == hit::DeviceKind::cpu
            ? std::string()
            : fmt::format("{}:{}", hit::to_string(r.device.kind), r.device.index);
    if (ranks.size() < 2 || device.empty() || !shown.insert({r.node, device}).second) continue;
    std::string list;
    for (const int k : ranks) list += (list.empty() ? "" : ", ") + std::to_string(k);
    std::printf(
        "shared device %s on node %d: ranks %s (resident tiles time-share it when they "
        "do not fit together)\n",
        device.c_str(), r.node, list.c_str());
  }
  if (topo.pinned()) std::printf("processes are pinned to their cores\n");
  // Sleeping waits cost a message some tens of microseconds; polling ones, with more processes
  // than cores, a scheduler time slice (docs/comm.md).
  std::printf("waiting processes %s (wait policy %s, HIT_WAIT)\n",
              wait == hit::WaitPolicy::sleep ? "sleep between polls" : "poll",
              hit::to_string(wait).c_str());
  std::printf("device kinds:");
  for (const hit::DeviceKind kind : hit::device_kinds()) {
    std::string keys;
    for (const auto& p : hit::device_params(kind)) keys += (keys.empty() ? "" : ", ") + p.key;
    std::printf(" %s (%s)", std::string(hit::to_string(kind)).c_str(), keys.c_str());
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-info", [](hit::Environment& env, int ac, char** av) {
    CLI::App cli(
        "Prints the physical topology (hwloc, CUDA, emulated devices), the nodes and the "
        "device every rank is bound to. Device spec grammar: " +
        std::string(hit::device_spec_grammar()));
    std::string devices;
    int nodes = 0;
    bool json = false;
    bool pin = false;
    cli.add_option("--devices", devices, "device binding of the ranks (HIT_DEVICES)");
    cli.add_option("--nodes", nodes, "ranks per emulated node (HIT_NODES)")
        ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
    cli.add_flag("--pin", pin, "pin every process to the cores of its device (HIT_PIN)");
    cli.add_flag("--json", json, "print one JSON object on stdout");
    if (!hit::cli::parse(cli, ac, av, env.rank(), "hit-info")) return hit::exit_ok;
    if (!devices.empty()) env.config().set("devices", devices);
    if (nodes > 0) env.config().set("nodes", std::to_string(nodes));
    if (pin) env.config().set("pin", "1");
    const auto& topo = hit::PhysicalTopology::of(env);
    if (env.rank() == 0) {
      if (json) {
        std::printf("%s\n", to_json(topo, env.wait_policy()).dump().c_str());
      } else {
        print_human(topo, env.wait_policy());
      }
      std::fflush(stdout);
    }
    return hit::exit_ok;
  });
}
