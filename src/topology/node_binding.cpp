// The binding of the ranks of one node to its devices and cores, pure (no MPI): what
// PhysicalTopology computes for every node once it knows what the nodes have (docs/devices.md §3).

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "hit/core/error.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit {

namespace {

std::string gpu_count_text(const NodeResources& node) {
  if (node.gpus == 0) {
    return fmt::format("node {} ({}) has no CUDA GPU{}", node.node, node.host,
                       node.gpu_note.empty() ? "" : " (" + node.gpu_note + ")");
  }
  return fmt::format("node {} ({}) has {} CUDA GPU{} (cuda:0{})", node.node, node.host, node.gpus,
                     node.gpus == 1 ? "" : "s",
                     node.gpus == 1 ? "" : fmt::format(" to cuda:{}", node.gpus - 1));
}

// The parameters that describe the device itself (not how one rank uses it).
std::map<std::string, std::string> device_level_params(const DeviceBinding& b) {
  auto p = b.params;
  p.erase("cores");
  return p;
}

}  // namespace

std::vector<DeviceBinding> default_node_bindings(int ranks_on_node, const NodeResources& node) {
  std::vector<DeviceBinding> out;
  for (int r = 0; r < ranks_on_node; ++r) {
    DeviceBinding b;
    if (node.gpus > 0) {
      b.kind = DeviceKind::cuda;
      b.index = r % node.gpus;
    } else {
      b.kind = DeviceKind::cpu;
      b.index = r;
    }
    out.push_back(b);
  }
  return out;
}

std::vector<DeviceBinding> resolve_node_bindings(const std::vector<DeviceBinding>& wanted,
                                                 const std::vector<int>& ranks,
                                                 const NodeResources& node) {
  if (ranks.size() != wanted.size()) {
    throw Error(ErrorKind::internal, "resolve_node_bindings: one rank number per binding needed");
  }
  std::vector<DeviceBinding> out = wanted;
  // Explicit cpu/emu indices are taken; index-less ones fill the gaps from 0 upwards.
  std::map<DeviceKind, std::set<int>> taken;
  for (const auto& b : wanted) {
    if (b.index != DeviceBinding::any_index) taken[b.kind].insert(b.index);
  }
  std::map<DeviceKind, int> next;
  int next_gpu = 0;
  int cpu_ranks = 0;
  for (const auto& b : wanted) cpu_ranks += b.kind == DeviceKind::cpu ? 1 : 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    DeviceBinding& b = out[i];
    const int rank = ranks[i];
    if (b.kind == DeviceKind::cuda) {
      if (node.gpus == 0) {
        throw Error(ErrorKind::device,
                    fmt::format("rank {} is bound to {} but {}; bind it to cpu or emu instead",
                                rank, b.str(), gpu_count_text(node)));
      }
      if (b.index == DeviceBinding::any_index) {
        b.index = next_gpu++ % node.gpus;
      } else if (b.index >= node.gpus) {
        throw Error(ErrorKind::device,
                    fmt::format("rank {} is bound to {}, which does not exist: {}", rank, b.str(),
                                gpu_count_text(node)));
      }
    } else {  // cpu or emu
      if (b.index == DeviceBinding::any_index) {
        int& n = next[b.kind];
        while (taken[b.kind].count(n) != 0) ++n;
        b.index = n++;
      } else if (b.kind == DeviceKind::cpu && b.index >= std::max(node.cores, cpu_ranks)) {
        throw Error(
            ErrorKind::device,
            fmt::format("rank {} is bound to {}, which does not exist: node {} ({}) has {} "
                        "core{} and {} rank{} on cpu, so cpu:0 to cpu:{}",
                        rank, b.str(), node.node, node.host, node.cores, node.cores == 1 ? "" : "s",
                        cpu_ranks, cpu_ranks == 1 ? "" : "s", std::max(node.cores, cpu_ranks) - 1));
      }
    }
  }
  // One emulated device has one capacity, bandwidth and speed, whoever names it.
  std::map<int, std::size_t> first_emu;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != DeviceKind::emu) continue;
    auto [it, inserted] = first_emu.emplace(out[i].index, i);
    if (inserted) continue;
    const DeviceBinding& a = out[it->second];
    if (device_level_params(a) != device_level_params(out[i])) {
      DeviceBinding sa = a, sb = out[i];
      sa.params = device_level_params(a);
      sb.params = device_level_params(out[i]);
      throw Error(ErrorKind::device,
                  fmt::format("emulated device emu:{} of node {} is given different parameters: "
                              "{} for rank {} and {} for rank {} (give every rank of one emulated "
                              "device the same mem, bw and slowdown)",
                              a.index, node.node, sa.str(), ranks[it->second], sb.str(), ranks[i]));
    }
  }
  return out;
}

std::vector<std::vector<int>> assign_node_cores(const std::vector<DeviceBinding>& resolved,
                                                const NodeResources& node) {
  const int c = std::max(1, node.cores);
  const int r = std::max<int>(1, static_cast<int>(resolved.size()));
  int cpu_groups = 0;
  for (const auto& b : resolved) {
    if (b.kind == DeviceKind::cpu) cpu_groups = std::max(cpu_groups, b.index + 1);
  }
  // Group g of n: [g*c/n, (g+1)*c/n), at least one core (shared when n > c).
  const auto group = [c](int g, int n) {
    std::vector<int> cores;
    if (n <= c) {
      for (int k = g * c / n; k < (g + 1) * c / n; ++k) cores.push_back(k);
    } else {
      cores.push_back(g % c);
    }
    return cores;
  };
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    const DeviceBinding& b = resolved[i];
    std::vector<int> cores =
        b.kind == DeviceKind::cpu ? group(b.index, cpu_groups) : group(static_cast<int>(i), r);
    if (auto it = b.params.find("cores"); it != b.params.end()) {
      const int want = std::stoi(it->second);
      const int start = cores.front();
      cores.clear();
      for (int k = 0; k < std::min(want, c); ++k) cores.push_back((start + k) % c);
      std::sort(cores.begin(), cores.end());
    }
    out.push_back(std::move(cores));
  }
  return out;
}

}  // namespace hit
