// Nodes, node resources and the binding of ranks to devices (docs/devices.md §1–§3).

#include "hit/topology/physical_topology.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/log_format.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "topology/physical_detail.hpp"

namespace hit {

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

// The `nodes` setting: ranks per emulated node, 0 for the real nodes. Collective (the same
// Error(parse) on every rank).
int emulated_ranks_per_node(Environment& env) {
  int ranks_per_node = 0;
  collectively(env.comm(), [&] {
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
  return ranks_per_node;
}

// Real nodes are machines; emulated nodes must not span machines. `all`: every rank's node
// description. The same Error(topology) on every rank (all have the same descriptions).
void check_nodes_within_machines(const std::vector<NodeDescription>& nodes,
                                 const std::vector<std::string>& all, int ranks_per_node) {
  std::string hosts_error;
  for (const auto& d : nodes) {
    for (int r : d.ranks) {
      if (nlohmann::json::parse(all[static_cast<std::size_t>(r)]).at("host").get<std::string>() !=
          d.host.hostname) {
        hosts_error = fmt::format("nodes={} groups ranks of different machines ({} and rank {})",
                                  ranks_per_node, d.host.hostname, r);
      }
    }
  }
  if (!hosts_error.empty()) throw Error(ErrorKind::topology, hosts_error);
}

// 4. A name for per-run resources: the process of rank 0, the time and a random number.
std::string agree_run_id(MPI_Comm comm, int rank) {
  std::string id;
  if (rank == 0) {
    std::random_device rd;
    id = fmt::format("{}-{}-{:x}", static_cast<long>(getpid()),
                     std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007,
                     rd() & 0xffffu);
  }
  broadcast(id, 0, comm);
  return id;
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
  const int ranks_per_node = emulated_ranks_per_node(env);
  const std::vector<int> node_of = split_nodes(comm, ranks_per_node);
  describe_nodes(comm, node_of, ranks_per_node);
  bind_ranks(env);
  run_id_ = agree_run_id(comm, rank_);
  share_ = open_device_share(comm);
  // 6. Optional pinning.
  if (auto pin = env.config().get("pin"); pin && truthy(*pin)) {
    detail::pin_to_cores(mine().cores);
    pinned_ = true;
  }
  log::debug("physical topology: {} node{}, binding {}", nodes(), nodes() == 1 ? "" : "s",
             format_device_spec(bindings()));
}

// 1. Nodes: shared-memory groups of MPI, or emulated groups of `ranks_per_node` consecutive
// ranks. Returns the node of every rank, nodes numbered by their lowest rank.
std::vector<int> PhysicalTopology::split_nodes(MPI_Comm comm, int ranks_per_node) {
  emulated_nodes_ = ranks_per_node > 0;
  if (emulated_nodes_) {
    check_mpi(MPI_Comm_split(comm, rank_ / ranks_per_node, rank_, &node_comm_), "MPI_Comm_split");
  } else {
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_),
              "MPI_Comm_split_type");
  }
  int leader = rank_;
  allreduce_in_place(&leader, 1, MPI_INT, MPI_MIN, node_comm_);
  const std::vector<int> leaders = allgather(leader, comm);
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<int> node_of(leaders.size());
  for (std::size_t r = 0; r < leaders.size(); ++r) {
    node_of[r] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), leaders[r]) -
                                  distinct.begin());
  }
  return node_of;
}

// 2. What each node has: its leader asks hwloc and the CUDA runtime, and every rank learns it.
void PhysicalTopology::describe_nodes(MPI_Comm comm, const std::vector<int>& node_of,
                                      int ranks_per_node) {
  int node_rank = 0;
  MPI_Comm_rank(node_comm_, &node_rank);
  std::string description;
  collectively(comm, [&] {
    if (node_rank == 0) description = node_to_json(discover_host(), discover_gpus()).dump();
  });
  broadcast(description, 0, node_comm_);
  const std::vector<std::string> all = allgather(description, comm);
  nodes_.resize(static_cast<std::size_t>(*std::max_element(node_of.begin(), node_of.end()) + 1));
  for (std::size_t r = 0; r < node_of.size(); ++r) {
    NodeDescription& d = nodes_[static_cast<std::size_t>(node_of[r])];
    if (d.ranks.empty()) {
      d.node = node_of[r];
      node_from_json(nlohmann::json::parse(all[r]), d);
    }
    d.ranks.push_back(static_cast<int>(r));
  }
  check_nodes_within_machines(nodes_, all, ranks_per_node);
}

// 3. The binding: asked for, or the default. Resolution is deterministic, so every rank computes
// every rank's device and all agree without more communication.
void PhysicalTopology::bind_ranks(Environment& env) {
  const int size = env.size();
  collectively(env.comm(), [&] {
    std::vector<DeviceBinding> wanted;
    if (auto spec = env.config().get("devices")) {
      binding_source_ = "--devices / " + Config::env_name("devices");
      binding_spec_ = *spec;
      wanted = parse_device_spec(*spec, size);
    } else {
      binding_source_ = "default";
    }
    ranks_.resize(static_cast<std::size_t>(size));
    for (const auto& d : nodes_) place_node(d, wanted);
    for (RankPlacement& p : ranks_) {
      p.sharing = static_cast<int>(ranks_sharing_device(p.rank).size());
    }
  });
}

// The placements of the ranks of node `d` (`wanted`: every rank's binding asked for, or empty).
void PhysicalTopology::place_node(const NodeDescription& d,
                                  const std::vector<DeviceBinding>& wanted) {
  const NodeResources res{d.node, d.host.hostname, d.host.cores, static_cast<int>(d.gpus.size()),
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
    p.description = describe(p.device, d, static_cast<int>(p.cores.size()));
  }
}

// 5. The lock file of this rank's device, shared by the ranks bound to it on its node: the
// lowest of them creates it, the others open it, and its name goes once all have it open.
std::unique_ptr<DeviceShare> PhysicalTopology::open_device_share(MPI_Comm comm) const {
  const RankPlacement& me = mine();
  std::vector<int> sharers = ranks_sharing_device(rank_);
  const int leader_rank = sharers.front();
  const std::string path =
      fmt::format("/tmp/hitmap-{}-{}-n{}-{}{}.lock", static_cast<long>(getuid()), run_id_, me.node,
                  to_string(me.device.kind), me.device.index);
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
  const int slot =
      static_cast<int>(std::find(sharers.begin(), sharers.end(), rank_) - sharers.begin());
  std::unique_ptr<DeviceShare> share;
  collectively(comm, [&] { share = std::make_unique<DeviceShare>(fd, std::move(sharers), slot); });
  return share;
}

std::vector<int> PhysicalTopology::ranks_sharing_device(int rank) const {
  const RankPlacement& of = ranks_.at(static_cast<std::size_t>(rank));
  std::vector<int> out;
  for (const RankPlacement& r : ranks_) {
    if (r.node == of.node && r.device.kind == of.device.kind && r.device.index == of.device.index) {
      out.push_back(r.rank);
    }
  }
  return out;
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
