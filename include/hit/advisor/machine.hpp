#pragma once
// What the layout advisor knows of the machine a run would use (docs/advisor.md): the device of
// every process, their performance models when measured, the network model when measured, and
// the corrections fitted from earlier runs. It prices work and messages; it runs nothing.
//
// Pure computation over bindings and models: no MPI, no devices. A plan for 65 536 processes
// costs a few words per process.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hit/fpm/model.hpp"
#include "hit/fpm/network_model.hpp"
#include "hit/shape.hpp"
#include "hit/topology/device_binding.hpp"
#include "hit/topology/device_params.hpp"

namespace hit::advisor {

// The applications the advisor predicts, named as their programs (hit-cannon ...).
enum class App { cannon, summa, jacobi, cg, cholesky };
inline constexpr std::array<App, 5> all_apps = {App::cannon, App::summa, App::jacobi, App::cg,
                                                App::cholesky};
std::string_view to_string(App app) noexcept;
// The app named `name`; Error(invalid_argument) listing the names otherwise.
App parse_app(std::string_view name);

// The kind of kernel an application spends its compute in: its speed on a device differs by
// orders of magnitude between them (dense products are compute-bound, the others memory-bound).
enum class Kernel { gemm, stencil, spmv };
Kernel kernel_of(App app) noexcept;
std::string_view to_string(Kernel kernel) noexcept;

// A host core's speed in flop/s for each kernel when neither models nor runs say better: the
// order of magnitude of one core of a current server (dgemm from a tuned BLAS; a five-point
// update and a CSR product bound by memory bandwidth). Rankings depend on the ratios of
// devices, which the bindings give; --calibrate replaces these from measured runs.
double default_host_flops(Kernel kernel) noexcept;

// A CUDA GPU's speed for each kernel when neither models nor runs say better, as its process
// sees it: the device's rate with the launches and host<->device copies of one step included
// (measured for hit-cannon and hit-jacobi on an H200; the sparse product by the stencil's ratio
// to the host, both bound by memory bandwidth). Without it a GPU would count as one host core.
double default_gpu_flops(Kernel kernel) noexcept;

// What one launch costs beyond its kernel, by device kind: handing the kernel over and waiting
// for its end (hit-bench-launch measures it). A process pays it for every launch of a step,
// however small its share: it is why a sliver of a grid on an accelerator is not free.
double default_launch_seconds(DeviceKind kind) noexcept;

// The time slice of the host's scheduler on a node of `cores` cores: how long a process keeps
// a core another one wants unless it sleeps. Linux's fair scheduler gives 0.75 ms times
// 1 + log2 of the cores (at most 8 counted); 0 cores: one core.
double default_scheduler_slice_seconds(int cores) noexcept;

// What gathering or scattering one contiguous run of a message costs its process beyond the
// bytes (MPI's datatype engine walking a strided piece: one call per run, a cache line or a page
// touched per run once the runs lie apart). Measured with hit-summa on cyclic against blocks
// layouts (a panel piece of single elements per run): about 13 ns a run on an AMD EPYC.
double default_run_seconds() noexcept;
// What sweeping one row of a strided stencil face costs on a host core beyond its cells' flops:
// a face across a later axis (the column face of a 2-D block) holds one cell per row, and each
// row reads and writes cache lines of its own. Measured with hit-jacobi on an emulated device 14x
// slower than the host (`clock=cpu`, which multiplies the kernel's CPU time): rank 0's 128x640
// block beside its 64x1280 one at the same cells took 0.49 ms more an iteration, one launch and
// a 127-row column face more, about 0.25 us a row on an AMD EPYC.
double default_strided_row_seconds() noexcept;
// The rate at which a process packs or unpacks a strided message through MPI's buffers: a copy
// that a contiguous message does not need (within a node MPICH copies it once, by the
// receiver). Assumed (one memory copy's order of magnitude), not measured apart from the runs.
double default_pack_bandwidth() noexcept;

// The largest message MPI delivers while its sender goes on (MPICH's shared-memory cell): a
// larger one moves in a rendezvous that advances only inside MPI calls, so it is not overlapped
// with a kernel that runs meanwhile on a process with no progress thread.
inline constexpr double eager_message_bytes = 64.0 * 1024;

// The latency and bandwidth assumed for a link class when no network model is given: shared
// memory between ranks of a node, a commodity interconnect between nodes.
fpm::LinkCost assumed_link(fpm::LinkClass link) noexcept;

// Corrections fitted from measured runs (hit::advisor::fit_calibration): measured over
// predicted compute per device (keyed by Machine::device_key), and the time every message costs
// beyond the network's (fit_message_overhead).
struct Calibration {
  std::map<std::string, double> compute;  // device key -> factor
  // Device key -> factor on its launches' overhead (default_launch_seconds), where results at
  // shares far enough apart tell it from the kernels' factor; absent: 1.
  std::map<std::string, double> launch;
  double compute_other = 1;  // for a device no run measured: the median factor
  double message_s = 0;      // added to every message's latency, seconds (>= 0)
  int runs = 0;              // results the factors come from (0: no calibration)
};

class Machine {
 public:
  Machine() = default;
  // One binding per process. `ranks_per_node`: nodes of that many consecutive ranks (0 or
  // >= procs: one node). Error(invalid_argument) for no binding or a negative count.
  Machine(std::vector<DeviceBinding> devices, int ranks_per_node);

  int procs() const noexcept { return static_cast<int>(devices_.size()); }
  const DeviceBinding& device(int proc) const;
  const std::vector<DeviceBinding>& devices() const noexcept { return devices_; }
  int ranks_per_node() const noexcept { return ranks_per_node_; }
  int node_of(int proc) const noexcept;
  int nodes() const noexcept;

  // The device without its index, as the calibration keys it ("cpu", "emu(slowdown=4)").
  std::string device_key(int proc) const;
  // Processes bound to the same device of the same node (1 for a device of its own). Ranks
  // bound to one emulated or CUDA device take turns on it; a `cpu` binding with an index names
  // a core group, which its ranks share too.
  int sharers(int proc) const;
  // A number shared by the processes of one device and no other (for memory sums).
  int device_group(int proc) const;
  // The device's memory (`mem=`), shared by its sharers; nothing when unbounded.
  std::optional<std::uint64_t> device_memory(int proc) const;

  // Performance models, one per process (empty: none). Each model's unit is `flops_per_unit`
  // flops of the kernel it measured (hit-fpm build writes the annotation); Error(model) for a
  // count other than procs() or a model without points or without a positive flops_per_unit.
  void set_models(std::vector<fpm::Model> models);
  bool has_models() const noexcept { return !models_.empty(); }
  const std::vector<fpm::Model>& models() const noexcept { return models_; }

  void set_network(fpm::NetworkModel network);
  bool network_measured() const noexcept { return network_.has_value(); }
  // Host cores per node shared by the processes whose kernels run on the host (cpu and emu
  // bindings); 0: enough cores for every process. Fewer cores than such processes slow each
  // by the ratio, as a core shared by two ranks does.
  void set_host_cores(int cores);
  int host_cores() const noexcept { return host_cores_; }
  void set_host_flops(Kernel kernel, double flops_per_second);
  double host_flops(Kernel kernel) const;
  void set_gpu_flops(Kernel kernel, double flops_per_second);
  double gpu_flops(Kernel kernel) const;
  void set_calibration(Calibration calibration);
  const Calibration& calibration() const noexcept { return calibration_; }

  // The relative speed of `proc`'s device on a problem of `problem_bytes` (an emulated device's
  // 1/slowdown at that size, 1 for others), before sharing.
  double speed_weight(int proc, std::uint64_t problem_bytes) const;
  // Seconds `proc` takes for `flops` of `kernel` on a problem of `problem_bytes`: its model's
  // time when it has one, else the host's (or a GPU's) speed times speed_weight, divided among the
  // device's sharers and the node's host cores; times the calibration's factor.
  double compute_seconds(int proc, Kernel kernel, double flops, std::uint64_t problem_bytes) const;
  // The same without the contention for the node's cores: the time `proc` takes when the cores
  // suffice. The step predictions stretch it by the contention of each step (detail::StepMax).
  double own_seconds(int proc, Kernel kernel, double flops, std::uint64_t problem_bytes) const;
  // Whether compute stretches when the node's cores are oversubscribed: --host-cores given and
  // no performance models (a model measured the device as the run binds it).
  bool shares_cores() const noexcept { return host_cores_ > 0 && !has_models(); }
  // How long a process keeps a shared core (default_scheduler_slice_seconds of --host-cores).
  double scheduler_slice_seconds() const noexcept {
    return default_scheduler_slice_seconds(host_cores_);
  }
  // Whether `proc`'s device times its kernels by their CPU time (an emulated device with
  // `clock=cpu`): waiting for a core then costs it nothing within its slowed time.
  bool counts_cpu_time(int proc) const;
  // The cores `proc` keeps busy while its kernel runs: 1 for a host process, 1/slowdown for an
  // emulated device (it sleeps out the rest), 0 for a GPU.
  double core_share(int proc, std::uint64_t problem_bytes) const;
  // `proc`'s stretch when its node's host kernels stretch by `node_stretch`: that for host
  // processes and emulated devices that count elapsed time; with `clock=cpu` an emulated device
  // only where the stretch exceeds its slowdown; 1 for a GPU.
  double stretch_of(int proc, double node_stretch, std::uint64_t problem_bytes) const;
  // The factor compute_seconds applies when the node's host cores are oversubscribed: the
  // cores its processes keep busy while computing (a host process one, an emulated device
  // 1/slowdown, shared or not) over --host-cores, for host processes and emulated devices that
  // count elapsed time; with `clock=cpu` an emulated device only loses what exceeds its slowdown.
  // 1 without --host-cores, for GPUs and while the cores suffice.
  double contention_factor(int proc, std::uint64_t problem_bytes) const;
  // The factor compute_seconds applies for the turns `proc` takes on a shared device: its
  // sharers without models (a model measured the device as the run binds it), else 1.
  double sharing_factor(int proc) const;
  // Seconds one launch of `proc` costs beyond its kernel: default_launch_seconds of its device,
  // times the calibration's launch factor for it (not its compute factor).
  double launch_seconds(int proc) const;
  // The link cost between two processes (from the network model, else assumed).
  const fpm::LinkCost& link(int from, int to) const;
  // Seconds of `messages` messages of `bytes` bytes in all from `from` to `to`:
  // (α + the calibration's message_s)·messages + bytes/β; 0 between a process and itself.
  double message_seconds(int from, int to, double messages, double bytes) const;
  // Seconds `proc` spends packing or unpacking a message of `bytes` in `runs` contiguous runs
  // (default_run_seconds each, and the bytes at default_pack_bandwidth); 0 for a single run,
  // which MPI sends from where it lies.
  double gather_seconds(int proc, double runs, double bytes) const;
  // Seconds to copy `bytes` between the host and `proc`'s device: bytes / its `bw=` (emulated
  // devices); 0 for host processes and devices without a declared bandwidth.
  double staging_seconds(int proc, double bytes) const;

 private:
  std::vector<DeviceBinding> devices_;
  std::vector<DeviceParams> params_;
  std::vector<int> group_;           // device group of each process
  std::vector<int> group_size_;      // processes of each group
  std::vector<double> host_demand_;  // per node: host cores its processes keep busy computing
  int ranks_per_node_ = 0;
  std::vector<fpm::Model> models_;
  std::vector<double> flops_per_unit_;
  std::optional<fpm::NetworkModel> network_;
  std::array<fpm::LinkCost, 2> assumed_{};
  int host_cores_ = 0;
  std::array<double, 3> host_flops_{};
  std::array<double, 3> gpu_flops_{};
  Calibration calibration_;
  std::vector<double> calibration_factor_;  // per process, from calibration_.compute
  std::vector<double> launch_factor_;       // per process, from calibration_.launch
};

}  // namespace hit::advisor
