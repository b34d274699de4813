#pragma once
// The physical topology of a run (docs/devices.md §1–§3): the nodes, what each node has (hwloc:
// NUMA nodes, sockets, cores; the CUDA runtime: GPUs), and the device every rank is bound to.
//
// It is discovered once per Environment, collectively, at first use:
//   const auto& topo = hit::PhysicalTopology::of(env);   // every rank must make this first call
// Configuration (command line wins over the environment, see core/config.hpp):
//   devices  (HIT_DEVICES)  binding spec, grammar in device_binding.hpp; default: see below
//   nodes    (HIT_NODES)    ranks per emulated node, to test multi-node code on one machine;
//                           default (or 0): nodes are the shared-memory groups of MPI
//   pin      (HIT_PIN)      1/on: bind each process to the cores of its device with hwloc
// Default binding: the ranks of a node round-robin over its GPUs, or, on a node without GPU, each
// rank its own group of the node's cores. No CUDA driver or no GPU means zero GPUs, never an error.

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hit/topology/device_binding.hpp"

namespace hit {

class Device;
class Environment;

// What hwloc found on a machine.
struct HostInfo {
  std::string hostname;
  std::string cpu_model;  // may be empty
  int sockets = 1;
  int numa_nodes = 1;
  int cores = 1;  // physical cores
  int pus = 1;    // hardware threads
  std::uint64_t memory_bytes = 0;
};

// A CUDA GPU as the runtime reports it.
struct GpuInfo {
  int index = 0;
  std::string name;
  std::uint64_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;
};

struct GpuDiscovery {
  std::vector<GpuInfo> gpus;
  std::string note;  // why there are none ("built without CUDA", "no CUDA driver", ...)
};

[[nodiscard]] HostInfo discover_host();
[[nodiscard]] GpuDiscovery discover_gpus();

// What binding needs to know about a node.
struct NodeResources {
  int node = 0;
  std::string host;
  int cores = 1;
  int gpus = 0;
  std::string gpu_note;  // shown when a rank asks for a GPU that does not exist
};

// The binding of the ranks of one node, pure (no MPI), so it can be tested on its own.
// `wanted`: the bindings asked for the ranks of the node, in rank order (any_index allowed);
// `ranks`: their global ranks (for messages). Returns the bindings with every index resolved:
// cpu and emu without index take the next index not named explicitly on the node; cuda without
// index goes round-robin over the node's GPUs. Throws Error(device) for a GPU that does not exist
// (the message says how many exist) and for one emulated device given different parameters.
[[nodiscard]] std::vector<DeviceBinding> resolve_node_bindings(
    const std::vector<DeviceBinding>& wanted, const std::vector<int>& ranks,
    const NodeResources& node);
// The default binding of `ranks_on_node` ranks (round-robin over GPUs, else one core group each).
[[nodiscard]] std::vector<DeviceBinding> default_node_bindings(int ranks_on_node,
                                                               const NodeResources& node);
// The cores (0 .. node.cores-1) of each resolved binding: a cpu:i group is the i-th of an even
// split of the node's cores over the cpu groups in use; a cuda or emu rank gets its even share by
// node rank; `cores=N` takes N cores from the start of that group. With more groups than cores,
// groups share cores (oversubscription is allowed).
[[nodiscard]] std::vector<std::vector<int>> assign_node_cores(
    const std::vector<DeviceBinding>& resolved, const NodeResources& node);

// Where one rank runs and what it is bound to.
struct RankPlacement {
  int rank = 0;
  int node = 0;
  int node_rank = 0;
  int node_size = 1;
  std::string host;
  DeviceBinding device;     // resolved: index >= 0
  std::vector<int> cores;   // core numbers (0 .. cores-1) of its node
  int sharing = 1;          // ranks of its node bound to the same device, itself included (see
                            // PhysicalTopology::ranks_sharing_device)
  std::string description;  // e.g. "NVIDIA H200 (139.8 GiB)", "emulated accelerator (mem=…)"

  bool emulated() const noexcept { return device.kind == DeviceKind::emu; }
  // "cuda:0", "emu:0 [emulated]", …
  std::string label() const;
};

struct NodeDescription {
  int node = 0;
  HostInfo host;
  std::vector<GpuInfo> gpus;
  std::string gpu_note;
  std::vector<int> ranks;
};

// What the ranks bound to one device of one node share: a file under /tmp, created by the lowest
// of them, opened by all, and unlinked as soon as all have it open (so nothing is left behind, even
// by a crash). Its flock() is the inter-process device lock; a page of it mapped in every process
// holds the bytes allocated on the device by all of them (the capacity of an emulated device is
// the device's, not each process's) and what the residency policy of docs/devices.md needs: the
// bytes each rank keeps resident, the bytes ranks wait for, and whether the device time-shares.
class DeviceShare {
 public:
  // `sharers`: the ranks bound to the device, in rank order; `me`: this process's rank among them.
  DeviceShare(int fd, std::vector<int> sharers, int me);
  ~DeviceShare();
  DeviceShare(const DeviceShare&) = delete;
  DeviceShare& operator=(const DeviceShare&) = delete;

  // Blocks until this process holds the device (an exclusive flock; nothing when ranks() is 1).
  // Not re-entrant.
  void lock();
  void unlock() noexcept;
  // Whether this process holds the device now (lock() was called and unlock() not yet).
  bool held() const noexcept { return held_; }
  // Ranks bound to the device (1: nobody to wait for).
  int ranks() const noexcept { return static_cast<int>(sharers_.size()); }
  const std::vector<int>& sharers() const noexcept { return sharers_; }
  std::atomic<std::uint64_t>& used_bytes() noexcept;
  std::atomic<std::uint64_t>& peak_bytes() noexcept;

  // Residency across processes. Each sharer publishes the bytes of its device copies (resident
  // tiles); a rank that cannot find room for a launch adds what it needs to wanted_bytes() while it
  // waits, and the others give up idle copies until it fits.
  void publish_resident(std::uint64_t bytes) noexcept;
  std::uint64_t resident_of(int sharer) const noexcept;  // index into sharers()
  std::atomic<std::uint64_t>& wanted_bytes() noexcept;
  // Marks the device as time-shared; true for the one call that changed it.
  bool start_time_sharing() noexcept;
  bool time_sharing() const noexcept;

  // Ranks a device page keeps resident bytes for (more sharers share the last slot).
  static constexpr int max_published = 256;

 private:
  struct State;
  int fd_ = -1;
  std::vector<int> sharers_;
  int me_ = 0;
  bool held_ = false;
  State* state_ = nullptr;
};

class PhysicalTopology {
 public:
  // Collective over env.comm(); errors (bad binding, a GPU that does not exist) are thrown on
  // every rank alike.
  explicit PhysicalTopology(Environment& env);
  ~PhysicalTopology();
  PhysicalTopology(const PhysicalTopology&) = delete;
  PhysicalTopology& operator=(const PhysicalTopology&) = delete;

  // The topology of `env` (collective at first use).
  static PhysicalTopology& of(Environment& env);

  int nodes() const noexcept { return static_cast<int>(nodes_.size()); }
  bool emulated_nodes() const noexcept { return emulated_nodes_; }
  const std::vector<NodeDescription>& node_list() const noexcept { return nodes_; }
  const NodeDescription& my_node() const {
    return nodes_.at(static_cast<std::size_t>(mine().node));
  }
  // The ranks of this rank's node (shared memory, or the emulated node).
  MPI_Comm node_comm() const noexcept { return node_comm_; }

  // Every rank, in rank order, identical on all ranks.
  const std::vector<RankPlacement>& ranks() const noexcept { return ranks_; }
  // One sentence per host whose processes outnumber its physical cores ("4 processes share the 2
  // cores of host vm"): their times are not those of a dedicated machine. Empty when none does.
  [[nodiscard]] std::vector<std::string> oversubscribed_hosts() const;
  const RankPlacement& mine() const { return ranks_.at(static_cast<std::size_t>(rank_)); }
  std::vector<DeviceBinding> bindings() const;  // the device of every rank (for layouts)
  // Where the binding came from: "--devices", "HIT_DEVICES" or "default".
  const std::string& binding_source() const noexcept { return binding_source_; }
  const std::string& binding_spec() const noexcept { return binding_spec_; }  // as given
  bool pinned() const noexcept { return pinned_; }
  // Unique for this run (same on every rank), to name per-run resources such as device locks.
  const std::string& run_id() const noexcept { return run_id_; }
  // The ranks bound to the same device of the same node as `rank` (itself included), in rank
  // order: those that share its device lock and its memory.
  [[nodiscard]] std::vector<int> ranks_sharing_device(int rank) const;
  // What this rank shares with the other ranks bound to its device (also when it is alone on it).
  DeviceShare& device_share() const noexcept { return *share_; }

 private:
  // Replaces this rank's device in its placement, for the test helper rebind_device
  // (src/devices/rebind.hpp). The other ranks do not learn of it.
  friend Device& rebind_device(Environment& env, const DeviceBinding& binding);
  void rebind_mine(const DeviceBinding& binding);

  // The steps of the collective construction, in order (physical_topology.cpp).
  void build(Environment& env);
  std::vector<int> split_nodes(MPI_Comm comm, int ranks_per_node);
  void describe_nodes(MPI_Comm comm, const std::vector<int>& node_of, int ranks_per_node);
  void bind_ranks(Environment& env);
  void place_node(const NodeDescription& d, const std::vector<DeviceBinding>& wanted);
  std::unique_ptr<DeviceShare> open_device_share(MPI_Comm comm) const;

  int rank_ = 0;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  bool emulated_nodes_ = false;
  bool pinned_ = false;
  std::string binding_source_;
  std::string binding_spec_;
  std::string run_id_;
  std::vector<NodeDescription> nodes_;
  std::vector<RankPlacement> ranks_;
  std::unique_ptr<DeviceShare> share_;
};

}  // namespace hit
