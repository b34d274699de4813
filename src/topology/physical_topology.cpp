// Nodes, node resources and the binding of ranks to devices (docs/devices.md §1–§3).

#include "hit/physical_topology.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/log_format.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device_params.hpp"
#include "topology/physical_detail.hpp"

namespace hit {

// ---- pure binding ------------------------------------------------------------------------------

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

std::string RankPlacement::label() const {
  return emulated() ? device.str() + " [emulated]" : device.str();
}

// ---- discovery across the run ------------------------------------------------------------------

namespace {

nlohmann::json node_to_json(const HostInfo& h, const GpuDiscovery& g) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& x : g.gpus) {
    gpus.push_back({{"index", x.index},
                    {"name", x.name},
                    {"memory", x.memory_bytes},
                    {"cc", {x.compute_major, x.compute_minor}},
                    {"sms", x.multiprocessors},
                    {"pci", x.pci_bus_id}});
  }
  return {{"host", h.hostname},       {"model", h.cpu_model}, {"sockets", h.sockets},
          {"numa", h.numa_nodes},     {"cores", h.cores},     {"pus", h.pus},
          {"memory", h.memory_bytes}, {"gpus", gpus},         {"gpu_note", g.note}};
}

void node_from_json(const nlohmann::json& j, NodeDescription& d) {
  d.host.hostname = j.at("host").get<std::string>();
  d.host.cpu_model = j.at("model").get<std::string>();
  d.host.sockets = j.at("sockets").get<int>();
  d.host.numa_nodes = j.at("numa").get<int>();
  d.host.cores = j.at("cores").get<int>();
  d.host.pus = j.at("pus").get<int>();
  d.host.memory_bytes = j.at("memory").get<std::uint64_t>();
  d.gpu_note = j.at("gpu_note").get<std::string>();
  for (const auto& g : j.at("gpus")) {
    GpuInfo x;
    x.index = g.at("index").get<int>();
    x.name = g.at("name").get<std::string>();
    x.memory_bytes = g.at("memory").get<std::uint64_t>();
    x.compute_major = g.at("cc").at(0).get<int>();
    x.compute_minor = g.at("cc").at(1).get<int>();
    x.multiprocessors = g.at("sms").get<int>();
    x.pci_bus_id = g.at("pci").get<std::string>();
    d.gpus.push_back(x);
  }
}

// Every rank's string, on every rank.
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<int> displs(static_cast<std::size_t>(size), 0);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + lens[r - 1];
  std::string all(static_cast<std::size_t>(displs.back() + lens.back()), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                           MPI_CHAR, comm),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.push_back(all.substr(displs[r], lens[r]));
  return out;
}

bool truthy(const std::string& v) {
  return v == "1" || v == "on" || v == "yes" || v == "true" || v == "cores";
}

std::string describe(const DeviceBinding& b, const NodeDescription& node, int cores) {
  if (b.kind == DeviceKind::cuda) {
    for (const auto& g : node.gpus) {
      if (g.index == b.index) {
        return fmt::format("{} ({}, sm_{}{})", g.name,
                           human_bytes(static_cast<double>(g.memory_bytes)), g.compute_major,
                           g.compute_minor);
      }
    }
    return "CUDA GPU";
  }
  if (b.kind == DeviceKind::emu) {
    const DeviceParams p = DeviceParams::of(b);
    return fmt::format(
        "emulated accelerator (mem={}, bw={}, slowdown={}; runs the cpu kernels on "
        "{} core{})",
        p.mem ? format_bytes(*p.mem) : std::string("unlimited"),
        p.bw ? format_bandwidth(*p.bw) : std::string("memcpy"), p.slowdown.str(), cores,
        cores == 1 ? "" : "s");
  }
  return fmt::format("{} core{} of {}", cores, cores == 1 ? "" : "s",
                     node.host.cpu_model.empty() ? std::string("the host") : node.host.cpu_model);
}

}  // namespace

PhysicalTopology& PhysicalTopology::of(Environment& env) {
  return env.extension<PhysicalTopology>();
}

PhysicalTopology::PhysicalTopology(Environment& env) : rank_(env.rank()) {
  try {
    build(env);
  } catch (...) {
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
    throw;
  }
}

void PhysicalTopology::build(Environment& env) {
  MPI_Comm comm = env.comm();
  const int size = env.size();

  // 1. Nodes: shared-memory groups of MPI, or emulated groups of `nodes` consecutive ranks.
  int ranks_per_node = 0;
  collectively(comm, [&] {
    if (auto v = env.config().get("nodes")) {
      std::size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(*v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v->size() || n < 0) {
        throw Error(ErrorKind::parse,
                    fmt::format("nodes={} ({}) is not a number of ranks per emulated node (0: the "
                                "real nodes)",
                                *v, Config::env_name("nodes")));
      }
      ranks_per_node = n;
    }
  });
  emulated_nodes_ = ranks_per_node > 0;
  if (emulated_nodes_) {
    check_mpi(MPI_Comm_split(comm, rank_ / ranks_per_node, rank_, &node_comm_), "MPI_Comm_split");
  } else {
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_),
              "MPI_Comm_split_type");
  }
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node_comm_, &node_rank);
  MPI_Comm_size(node_comm_, &node_size);
  // Number the nodes by their lowest rank.
  int leader = rank_;
  check_mpi(MPI_Allreduce(&rank_, &leader, 1, MPI_INT, MPI_MIN, node_comm_), "MPI_Allreduce");
  std::vector<int> leaders(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<int> node_of(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    node_of[r] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), leaders[r]) -
                                  distinct.begin());
  }

  // 2. What each node has: its leader asks hwloc and the CUDA runtime.
  std::string description;
  collectively(comm, [&] {
    if (node_rank == 0) description = node_to_json(discover_host(), discover_gpus()).dump();
  });
  int len = static_cast<int>(description.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, node_comm_), "MPI_Bcast");
  description.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(description.data(), len, MPI_CHAR, 0, node_comm_), "MPI_Bcast");
  const auto all = allgather_strings(comm, description);
  nodes_.resize(distinct.size());
  for (int r = 0; r < size; ++r) {
    NodeDescription& d = nodes_[static_cast<std::size_t>(node_of[r])];
    if (d.ranks.empty()) {
      d.node = node_of[r];
      node_from_json(nlohmann::json::parse(all[r]), d);
    }
    d.ranks.push_back(r);
  }
  // Real nodes are machines; emulated nodes must not span machines.
  {
    std::string hosts_error;
    for (const auto& d : nodes_) {
      for (int r : d.ranks) {
        if (nlohmann::json::parse(all[r]).at("host").get<std::string>() != d.host.hostname) {
          hosts_error = fmt::format("nodes={} groups ranks of different machines ({} and rank {})",
                                    ranks_per_node, d.host.hostname, r);
        }
      }
    }
    if (!hosts_error.empty()) throw Error(ErrorKind::topology, hosts_error);
  }

  // 3. The binding: asked for, or the default. Resolution is deterministic, so every rank computes
  // every rank's device and all agree without more communication.
  collectively(comm, [&] {
    std::vector<DeviceBinding> wanted;
    if (auto spec = env.config().get("devices")) {
      binding_source_ = "--devices / " + Config::env_name("devices");
      binding_spec_ = *spec;
      wanted = parse_device_spec(*spec, size);
    } else {
      binding_source_ = "default";
    }
    ranks_.resize(static_cast<std::size_t>(size));
    for (const auto& d : nodes_) {
      NodeResources res{d.node, d.host.hostname, d.host.cores, static_cast<int>(d.gpus.size()),
                        d.gpu_note};
      std::vector<DeviceBinding> node_wanted;
      if (wanted.empty()) {
        node_wanted = default_node_bindings(static_cast<int>(d.ranks.size()), res);
      } else {
        for (int r : d.ranks) node_wanted.push_back(wanted[static_cast<std::size_t>(r)]);
      }
      const auto resolved = resolve_node_bindings(node_wanted, d.ranks, res);
      const auto cores = assign_node_cores(resolved, res);
      for (std::size_t i = 0; i < d.ranks.size(); ++i) {
        RankPlacement& p = ranks_[static_cast<std::size_t>(d.ranks[i])];
        p.rank = d.ranks[i];
        p.node = d.node;
        p.node_rank = static_cast<int>(i);
        p.node_size = static_cast<int>(d.ranks.size());
        p.host = d.host.hostname;
        p.device = resolved[i];
        p.cores = cores[i];
        p.sharing = static_cast<int>(
            std::count_if(resolved.begin(), resolved.end(), [&](const DeviceBinding& o) {
              return o.kind == resolved[i].kind && o.index == resolved[i].index;
            }));
        p.description = describe(p.device, d, static_cast<int>(p.cores.size()));
      }
    }
  });

  // 4. A name for per-run resources: host and process of rank 0, and the time.
  std::string id;
  if (rank_ == 0) {
    std::random_device rd;
    id = fmt::format("{}-{}-{:x}", static_cast<long>(getpid()),
                     std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007,
                     rd() & 0xffffu);
  }
  int id_len = static_cast<int>(id.size());
  check_mpi(MPI_Bcast(&id_len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  id.resize(static_cast<std::size_t>(id_len));
  check_mpi(MPI_Bcast(id.data(), id_len, MPI_CHAR, 0, comm), "MPI_Bcast");
  run_id_ = id;

  // 5. The lock file of every device, shared by the ranks bound to it on its node.
  {
    const RankPlacement& me = mine();
    int leader_rank = rank_;
    for (const auto& r : ranks_) {
      if (r.node == me.node && r.device.kind == me.device.kind &&
          r.device.index == me.device.index) {
        leader_rank = std::min(leader_rank, r.rank);
      }
    }
    const std::string path =
        fmt::format("/tmp/hitmap-{}-{}-n{}-{}{}.lock", static_cast<long>(getuid()), run_id_,
                    me.node, to_string(me.device.kind), me.device.index);
    int fd = -1;
    collectively(comm, [&] {
      if (rank_ == leader_rank) fd = detail::create_share_file(path);
    });
    try {
      collectively(comm, [&] {
        if (rank_ != leader_rank) fd = detail::open_share_file(path);
      });
    } catch (...) {
      if (rank_ == leader_rank) detail::remove_share_file(path);
      if (fd >= 0) close(fd);
      throw;
    }
    // Everyone has it open (collectively() ends in an all-reduce): the name can go.
    if (rank_ == leader_rank) detail::remove_share_file(path);
    std::vector<int> sharers;
    for (const auto& r : ranks_) {
      if (r.node == me.node && r.device.kind == me.device.kind &&
          r.device.index == me.device.index) {
        sharers.push_back(r.rank);
      }
    }
    const int slot =
        static_cast<int>(std::find(sharers.begin(), sharers.end(), rank_) - sharers.begin());
    collectively(comm,
                 [&] { share_ = std::make_unique<DeviceShare>(fd, std::move(sharers), slot); });
  }

  // 6. Optional pinning.
  if (auto pin = env.config().get("pin"); pin && truthy(*pin)) {
    detail::pin_to_cores(mine().cores);
    pinned_ = true;
  }
  log::debug("physical topology: {} node{}, binding {}", nodes(), nodes() == 1 ? "" : "s",
             format_device_spec(bindings()));
}

PhysicalTopology::~PhysicalTopology() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (node_comm_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&node_comm_);
}

void PhysicalTopology::rebind_mine(const DeviceBinding& binding) {
  RankPlacement& me = ranks_.at(static_cast<std::size_t>(rank_));
  me.device = binding;
  me.description = describe(binding, my_node(), static_cast<int>(me.cores.size()));
}

std::vector<DeviceBinding> PhysicalTopology::bindings() const {
  std::vector<DeviceBinding> out;
  for (const auto& r : ranks_) out.push_back(r.device);
  return out;
}

std::vector<std::string> PhysicalTopology::oversubscribed_hosts() const {
  // Emulated nodes may share one host: count processes per host name, not per node.
  std::map<std::string, std::pair<int, int>> hosts;  // name -> (processes, cores)
  for (const NodeDescription& n : nodes_) {
    auto& [processes, cores] = hosts[n.host.hostname];
    processes += static_cast<int>(n.ranks.size());
    cores = n.host.cores;
  }
  std::vector<std::string> out;
  for (const auto& [name, counts] : hosts) {
    if (counts.first > counts.second) {
      out.push_back(fmt::format("{} processes share the {} core{} of host {}", counts.first,
                                counts.second, counts.second == 1 ? "" : "s", name));
    }
  }
  return out;
}

}  // namespace hit
