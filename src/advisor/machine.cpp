#include "hit/advisor/machine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

#include "hit/core/error.hpp"

namespace hit::advisor {

std::string_view to_string(App app) noexcept {
  switch (app) {
    case App::cannon:
      return "cannon";
    case App::summa:
      return "summa";
    case App::jacobi:
      return "jacobi";
    case App::cg:
      return "cg";
    case App::cholesky:
      return "cholesky";
  }
  return "?";
}

App parse_app(std::string_view name) {
  for (App a : all_apps) {
    if (to_string(a) == name) return a;
  }
  throw Error(
      ErrorKind::invalid_argument,
      fmt::format("--app '{}': the advisor predicts cannon, summa, jacobi, cg and cholesky", name));
}

Kernel kernel_of(App app) noexcept {
  switch (app) {
    case App::jacobi:
      return Kernel::stencil;
    case App::cg:
      return Kernel::spmv;
    default:
      return Kernel::gemm;
  }
}

std::string_view to_string(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::gemm:
      return "gemm";
    case Kernel::stencil:
      return "stencil";
    case Kernel::spmv:
      return "spmv";
  }
  return "?";
}

double default_host_flops(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::gemm:
      return 10e9;
    case Kernel::stencil:
      return 1e9;  // 4 flops a cell: 250 million cells per second
    case Kernel::spmv:
      return 0.5e9;
  }
  return 1e9;
}

double default_gpu_flops(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::gemm:
      return 20e12;  // hit-cannon n = 8192 on one H200 with its copies: 19.3 Tflop/s
    case Kernel::stencil:
      return 100e9;  // hit-jacobi on an H200: 20 to 49 G cells/s from 4 M to 67 M cells
    case Kernel::spmv:
      return 50e9;  // the stencil's 100x a host core
  }
  return 100e9;
}

double default_launch_seconds(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::cpu:
      return 1e-6;  // hit-bench-launch, an empty kernel on cpu:0: 0.8 us
    case DeviceKind::emu:
      return 50e-6;  // the same on emu:0: 48 us, the hand-off to its stream thread and back
    case DeviceKind::cuda:
      return 10e-6;  // a kernel launch and a stream synchronisation
  }
  return 1e-6;
}

double default_scheduler_slice_seconds(int cores) noexcept {
  const int counted = std::clamp(cores, 1, 8);
  return 0.75e-3 * (1 + std::floor(std::log2(double(counted))));
}

double default_run_seconds() noexcept {
  return 13e-9;
}

double default_strided_row_seconds() noexcept {
  return 0.25e-6;
}

double default_pack_bandwidth() noexcept {
  return 4e9;
}

fpm::LinkCost assumed_link(fpm::LinkClass link) noexcept {
  fpm::LinkCost c;
  c.pairs = 1;
  if (link == fpm::LinkClass::node) {
    c.latency = 1e-6;
    c.bandwidth = 5e9;
  } else {
    c.latency = 5e-6;
    c.bandwidth = 1.25e9;
  }
  return c;
}

Machine::Machine(std::vector<DeviceBinding> devices, int ranks_per_node)
    : devices_(std::move(devices)), ranks_per_node_(ranks_per_node) {
  if (devices_.empty()) {
    throw Error(ErrorKind::invalid_argument, "the advisor needs the device of every process");
  }
  if (ranks_per_node < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} ranks per node: the count must be >= 0", ranks_per_node));
  }
  if (ranks_per_node_ >= procs()) ranks_per_node_ = 0;
  for (auto link : fpm::link_classes) assumed_[static_cast<std::size_t>(link)] = assumed_link(link);
  for (Kernel k : {Kernel::gemm, Kernel::stencil, Kernel::spmv}) {
    host_flops_[static_cast<std::size_t>(k)] = default_host_flops(k);
    gpu_flops_[static_cast<std::size_t>(k)] = default_gpu_flops(k);
  }
  params_.reserve(devices_.size());
  // Ranks of one node bound to one accelerator share it; a binding without an index takes the
  // next device of its kind on the node, so it is a device of its own.
  std::map<std::tuple<int, int, int>, int> groups;
  host_demand_.assign(static_cast<std::size_t>(nodes()), 0.0);
  for (int p = 0; p < procs(); ++p) {
    const DeviceBinding& d = devices_[static_cast<std::size_t>(p)];
    params_.push_back(DeviceParams::of(d));
    const bool shared = d.kind != DeviceKind::cpu && d.index != DeviceBinding::any_index;
    const auto key =
        shared ? std::tuple{node_of(p), static_cast<int>(d.kind), d.index} : std::tuple{-1, -1, p};
    const auto [it, fresh] = groups.try_emplace(key, static_cast<int>(group_size_.size()));
    if (fresh) group_size_.push_back(0);
    group_.push_back(it->second);
    ++group_size_[static_cast<std::size_t>(it->second)];
    // The cores a process keeps busy while it computes: a host process one; an emulated device
    // runs the host kernel and then sleeps out its slowdown, so 1/slowdown of one, once for all
    // the ranks that take turns on it. Waiting processes sleep (HIT_WAIT=auto), so they count
    // for nothing.
    double& demand = host_demand_[static_cast<std::size_t>(node_of(p))];
    if (d.kind == DeviceKind::cpu) demand += 1.0;
    if (d.kind == DeviceKind::emu && fresh) demand += 1.0 / params_.back().slowdown.at(0);
  }
}

const DeviceBinding& Machine::device(int proc) const {
  if (proc < 0 || proc >= procs()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("process {} is not among the {} of the machine", proc, procs()));
  }
  return devices_[static_cast<std::size_t>(proc)];
}

int Machine::node_of(int proc) const noexcept {
  return ranks_per_node_ > 0 ? proc / ranks_per_node_ : 0;
}

int Machine::nodes() const noexcept {
  return ranks_per_node_ > 0 ? (procs() + ranks_per_node_ - 1) / ranks_per_node_ : 1;
}

std::string Machine::device_key(int proc) const {
  DeviceBinding d = device(proc);
  d.index = DeviceBinding::any_index;
  d.params.erase("cores");  // per rank, not the device's
  return d.str();
}

int Machine::sharers(int proc) const {
  (void)device(proc);
  return group_size_[static_cast<std::size_t>(group_[static_cast<std::size_t>(proc)])];
}

int Machine::device_group(int proc) const {
  (void)device(proc);
  return group_[static_cast<std::size_t>(proc)];
}

std::optional<std::uint64_t> Machine::device_memory(int proc) const {
  (void)device(proc);
  return params_[static_cast<std::size_t>(proc)].mem;
}

void Machine::set_models(std::vector<fpm::Model> models) {
  if (models.size() != devices_.size()) {
    throw Error(ErrorKind::model, fmt::format("{} performance models for {} processes: give one "
                                              "per process",
                                              models.size(), devices_.size()));
  }
  std::vector<double> per_unit;
  for (std::size_t p = 0; p < models.size(); ++p) {
    const fpm::Model& m = models[p];
    const auto it = m.info().find("flops_per_unit");
    const double fpu = it == m.info().end() ? 0.0 : std::atof(it->second.c_str());
    if (!m.usable() || !(fpu > 0) || !std::isfinite(fpu)) {
      throw Error(ErrorKind::model,
                  fmt::format("the model of process {} {}: the advisor needs measured points and "
                              "a '# flops_per_unit' annotation (hit-fpm build writes both)",
                              p, m.usable() ? "has no positive flops_per_unit" : "has no points"));
    }
    per_unit.push_back(fpu);
  }
  models_ = std::move(models);
  flops_per_unit_ = std::move(per_unit);
}

void Machine::set_network(fpm::NetworkModel network) {
  network_ = std::move(network);
}

void Machine::set_host_cores(int cores) {
  if (cores < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} host cores: the count must be >= 0 (0: one per process)", cores));
  }
  host_cores_ = cores;
}

namespace {
double checked_speed(std::string_view what, double flops_per_second) {
  if (!(flops_per_second > 0) || !std::isfinite(flops_per_second)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} speed {} flop/s: it must be positive", what, flops_per_second));
  }
  return flops_per_second;
}
}  // namespace

void Machine::set_host_flops(Kernel kernel, double flops_per_second) {
  host_flops_[static_cast<std::size_t>(kernel)] = checked_speed("host", flops_per_second);
}

double Machine::host_flops(Kernel kernel) const {
  return host_flops_[static_cast<std::size_t>(kernel)];
}

void Machine::set_gpu_flops(Kernel kernel, double flops_per_second) {
  gpu_flops_[static_cast<std::size_t>(kernel)] = checked_speed("GPU", flops_per_second);
}

double Machine::gpu_flops(Kernel kernel) const {
  return gpu_flops_[static_cast<std::size_t>(kernel)];
}

void Machine::set_calibration(Calibration calibration) {
  calibration_ = std::move(calibration);
  calibration_factor_.assign(devices_.size(), 1.0);
  launch_factor_.assign(devices_.size(), 1.0);
  if (calibration_.runs == 0) return;
  // Keyed once per process here: compute_seconds runs per process and step.
  for (int p = 0; p < procs(); ++p) {
    const std::string key = device_key(p);
    const auto it = calibration_.compute.find(key);
    calibration_factor_[static_cast<std::size_t>(p)] =
        it == calibration_.compute.end() ? calibration_.compute_other : it->second;
    const auto launch = calibration_.launch.find(key);
    if (launch != calibration_.launch.end()) {
      launch_factor_[static_cast<std::size_t>(p)] = launch->second;
    }
  }
}

double Machine::speed_weight(int proc, std::uint64_t problem_bytes) const {
  const DeviceBinding& d = device(proc);
  if (d.kind != DeviceKind::emu) return 1.0;
  return 1.0 / params_[static_cast<std::size_t>(proc)].slowdown.at(problem_bytes);
}

double Machine::own_seconds(int proc, Kernel kernel, double flops,
                            std::uint64_t problem_bytes) const {
  if (flops <= 0) return 0.0;
  double seconds = 0;
  const auto p = static_cast<std::size_t>(proc);
  if (has_models()) {
    seconds = models_[p].time(flops / flops_per_unit_[p]);
  } else {
    const double rate =
        device(proc).kind == DeviceKind::cuda ? gpu_flops(kernel) : host_flops(kernel);
    seconds = flops / (rate * speed_weight(proc, problem_bytes));
    seconds *= sharing_factor(proc);
  }
  if (!calibration_factor_.empty()) seconds *= calibration_factor_[p];
  return seconds;
}

double Machine::compute_seconds(int proc, Kernel kernel, double flops,
                                std::uint64_t problem_bytes) const {
  const double own = own_seconds(proc, kernel, flops, problem_bytes);
  return has_models() ? own : own * contention_factor(proc, problem_bytes);
}

double Machine::core_share(int proc, std::uint64_t problem_bytes) const {
  switch (device(proc).kind) {
    case DeviceKind::cpu:
      return 1.0;
    case DeviceKind::emu:
      return speed_weight(proc, problem_bytes);
    case DeviceKind::cuda:
      return 0.0;
  }
  return 1.0;
}

bool Machine::counts_cpu_time(int proc) const {
  return device(proc).kind == DeviceKind::emu && params_[static_cast<std::size_t>(proc)].cpu_clock;
}

double Machine::stretch_of(int proc, double node_stretch, std::uint64_t problem_bytes) const {
  const DeviceKind kind = device(proc).kind;
  if (kind == DeviceKind::cuda || node_stretch <= 1) return 1.0;
  // An emulated device's time is its host kernel's times its slowdown: stretched as well when it
  // counts elapsed time, but with `clock=cpu` only where the stretched kernel outlasts it.
  const DeviceParams& params = params_[static_cast<std::size_t>(proc)];
  if (kind == DeviceKind::emu && params.cpu_clock) {
    return std::max(1.0, node_stretch / params.slowdown.at(problem_bytes));
  }
  return node_stretch;
}

double Machine::contention_factor(int proc, std::uint64_t problem_bytes) const {
  const double demand = host_demand_[static_cast<std::size_t>(node_of(proc))];
  if (host_cores_ <= 0 || demand <= host_cores_) return 1.0;
  // The host kernels of the node stretch by the cores they want over the cores there are.
  return stretch_of(proc, demand / host_cores_, problem_bytes);
}

double Machine::launch_seconds(int proc) const {
  const double seconds = default_launch_seconds(device(proc).kind);
  return launch_factor_.empty() ? seconds
                                : seconds * launch_factor_[static_cast<std::size_t>(proc)];
}

const fpm::LinkCost& Machine::link(int from, int to) const {
  const fpm::LinkClass c =
      node_of(from) == node_of(to) ? fpm::LinkClass::node : fpm::LinkClass::network;
  if (network_) {
    if (!network_->has(c)) {
      throw Error(ErrorKind::model,
                  fmt::format("the network model has no '{}' link class, which processes {} and "
                              "{} would use: measure it with hit-fpm network --nodes K",
                              fpm::to_string(c), from, to));
    }
    return network_->cost(c);
  }
  return assumed_[static_cast<std::size_t>(c)];
}

double Machine::message_seconds(int from, int to, double messages, double bytes) const {
  if (from == to || (messages <= 0 && bytes <= 0)) return 0.0;
  const fpm::LinkCost& c = link(from, to);
  return messages * (c.latency + calibration_.message_s) + bytes / c.bandwidth;
}

double Machine::gather_seconds(int proc, double runs, double bytes) const {
  (void)device(proc);  // checks the process
  return runs > 1 ? runs * default_run_seconds() + bytes / default_pack_bandwidth() : 0.0;
}

double Machine::sharing_factor(int proc) const {
  return has_models() ? 1.0 : static_cast<double>(sharers(proc));
}

double Machine::staging_seconds(int proc, double bytes) const {
  const auto& bw = params_[static_cast<std::size_t>(proc)].bw;
  if (device(proc).kind == DeviceKind::cpu || !bw || bytes <= 0) return 0.0;
  return bytes / *bw;
}

}  // namespace hit::advisor
