// Discovery of the host (hwloc) and of the CUDA GPUs (the CUDA runtime), and pinning.

#include <hwloc.h>
#include <unistd.h>

#include <string>

#include "hit/core/error.hpp"
#include "hit/core/log.hpp"
#include "hit/topology/physical_topology.hpp"
#include "topology/physical_detail.hpp"

#ifdef HIT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace hit {
namespace {

// RAII over an hwloc topology of this machine.
class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topo_) != 0) {
      throw Error(ErrorKind::device, "hwloc could not initialise a topology");
    }
    if (hwloc_topology_load(topo_) != 0) {
      hwloc_topology_destroy(topo_);
      throw Error(ErrorKind::device, "hwloc could not load the topology of this machine");
    }
  }
  ~HwlocTopology() { hwloc_topology_destroy(topo_); }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t get() const noexcept { return topo_; }

  int count(hwloc_obj_type_t type) const {
    const int n = hwloc_get_nbobjs_by_type(topo_, type);
    return n > 0 ? n : 0;
  }

 private:
  hwloc_topology_t topo_{};
};

}  // namespace

HostInfo discover_host() {
  HwlocTopology topo;
  HostInfo h;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;
  h.sockets = std::max(1, topo.count(HWLOC_OBJ_PACKAGE));
  h.numa_nodes = std::max(1, topo.count(HWLOC_OBJ_NUMANODE));
  h.pus = std::max(1, topo.count(HWLOC_OBJ_PU));
  h.cores = topo.count(HWLOC_OBJ_CORE);
  if (h.cores == 0) h.cores = h.pus;  // some virtual machines report no cores
  const hwloc_obj_t root = hwloc_get_root_obj(topo.get());
  h.memory_bytes = root->total_memory;
  if (const hwloc_obj_t package = hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_PACKAGE, 0)) {
    if (const char* model = hwloc_obj_get_info_by_name(package, "CPUModel")) h.cpu_model = model;
  }
  return h;
}

GpuDiscovery discover_gpus() {
  GpuDiscovery found;
#ifdef HIT_HAVE_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // No driver, no device, a driver older than the runtime: all mean "no GPU here".
    found.note = std::string("CUDA runtime: ") + cudaGetErrorString(status);
    (void)cudaGetLastError();
    return found;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.memory_bytes = prop.totalGlobalMem;
    g.compute_major = prop.major;
    g.compute_minor = prop.minor;
    g.multiprocessors = prop.multiProcessorCount;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) == cudaSuccess) g.pci_bus_id = bus;
    found.gpus.push_back(g);
  }
  if (found.gpus.empty()) found.note = "CUDA runtime: no CUDA-capable device";
#else
  found.note = "hitmap++ was built without CUDA";
#endif
  return found;
}

namespace detail {

void pin_to_cores(const std::vector<int>& cores) {
  HwlocTopology topo;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  const int n = std::max(1, topo.count(HWLOC_OBJ_CORE));
  const hwloc_obj_type_t type = topo.count(HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  for (int c : cores) {
    const hwloc_obj_t obj = hwloc_get_obj_by_type(topo.get(), type, static_cast<unsigned>(c % n));
    if (obj != nullptr && obj->cpuset != nullptr) hwloc_bitmap_or(set, set, obj->cpuset);
  }
  const int rc = hwloc_set_cpubind(topo.get(), set, HWLOC_CPUBIND_PROCESS);
  hwloc_bitmap_free(set);
  if (rc != 0) log::rank(log::Level::warn, "hwloc could not pin this process to its cores");
}

}  // namespace detail
}  // namespace hit
