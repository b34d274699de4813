// The device interface, the factory of backends and the device of a rank.

#include "hit/device.hpp"

#include <fmt/format.h>

#include <chrono>

#include "devices/backends.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit {

Device::Device(DeviceKind kind, DeviceBinding binding, int cores)
    : kind_(kind),
      binding_(std::move(binding)),
      cores_(std::max(1, cores)),
      label_(kind_ == DeviceKind::emu ? binding_.str() + " [emulated]" : binding_.str()) {}

void Device::copy_in(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                     std::size_t width, std::size_t rows, int stream) {
  note_work(stream);
  ++counters_.copies_in;
  counters_.bytes_in += width * rows;
  copy(dst, dst_pitch, src, src_pitch, width, rows, stream, CopyDirection::to_device);
}

void Device::copy_out(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                      std::size_t width, std::size_t rows, int stream) {
  note_work(stream);
  ++counters_.copies_out;
  counters_.bytes_out += width * rows;
  copy(dst, dst_pitch, src, src_pitch, width, rows, stream, CopyDirection::to_host);
}

// One host wait, counted with its seconds when it ends (a wait that rethrows a failure too).
class Device::CountedWait {
 public:
  CountedWait(Device& dev, bool issued) : dev_(dev), issued_(issued) {}
  ~CountedWait() {
    if (!issued_) return;
    ++dev_.counters_.host_waits;
    dev_.counters_.host_wait_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - start_)
                                       .count();
  }
  CountedWait(const CountedWait&) = delete;
  CountedWait& operator=(const CountedWait&) = delete;

 private:
  Device& dev_;
  bool issued_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void Device::synchronize(int stream) {
  const bool issued =
      stream >= 0 && stream < streams && issued_[stream].exchange(false, std::memory_order_relaxed);
  const CountedWait wait(*this, issued);
  do_synchronize(stream);
}

void Device::synchronize() {
  bool issued = false;
  for (auto& s : issued_) issued = s.exchange(false, std::memory_order_relaxed) || issued;
  const CountedWait wait(*this, issued);
  for (int s = 0; s < streams; ++s) do_synchronize(s);
}

DeviceCounters Device::counters() const {
  DeviceCounters c;
  c.allocations = counters_.allocations.load();
  c.frees = counters_.frees.load();
  c.copies_in = counters_.copies_in.load();
  c.copies_out = counters_.copies_out.load();
  c.bytes_in = counters_.bytes_in.load();
  c.bytes_out = counters_.bytes_out.load();
  c.executions = counters_.executions.load();
  c.evictions = counters_.evictions.load();
  c.evicted_bytes = counters_.evicted_bytes.load();
  c.host_waits = counters_.host_waits.load();
  c.host_wait_seconds = static_cast<double>(counters_.host_wait_ns.load()) * 1e-9;
  c.copy_seconds = static_cast<double>(counters_.copy_ns.load()) * 1e-9;
  c.execute_seconds = static_cast<double>(counters_.execute_ns.load()) * 1e-9;
  c.execute_host_seconds = static_cast<double>(counters_.execute_host_ns.load()) * 1e-9;
  return c;
}

void Device::reset_counters() {
  for (auto* a :
       {&counters_.allocations, &counters_.frees, &counters_.copies_in, &counters_.copies_out,
        &counters_.bytes_in, &counters_.bytes_out, &counters_.executions, &counters_.evictions,
        &counters_.evicted_bytes, &counters_.host_waits}) {
    a->store(0);
  }
  counters_.host_wait_ns.store(0);
  counters_.copy_ns.store(0);
  counters_.execute_ns.store(0);
  counters_.execute_host_ns.store(0);
}

std::unique_ptr<Device> detail::make_device(const DeviceBinding& binding, int cores,
                                            DeviceShare* share) {
  switch (binding.kind) {
    case DeviceKind::cpu:
      return make_cpu_device(binding, cores);
    case DeviceKind::emu:
      return make_emu_device(binding, cores, share);
    case DeviceKind::cuda:
#ifdef HIT_HAVE_CUDA
      return make_cuda_device(binding, cores, share);
#else
      throw Error(ErrorKind::device, fmt::format("cannot use {}: hitmap++ was built without CUDA "
                                                 "(configure with HIT_CUDA=ON where nvcc exists)",
                                                 binding.str()));
#endif
  }
  throw Error(ErrorKind::internal, "make_device: unhandled device kind");
}

namespace {

// The device of a rank, owned by the Environment.
class RankDevice {
 public:
  explicit RankDevice(Environment& env) {
    const auto& topo = PhysicalTopology::of(env);
    const auto& me = topo.mine();
    device_ =
        detail::make_device(me.device, static_cast<int>(me.cores.size()), &topo.device_share());
  }
  Device& get() { return *device_; }
  Device& rebind(const DeviceBinding& binding, int cores, DeviceShare* share) {
    auto fresh = detail::make_device(binding, cores, share);
    device_ = std::move(fresh);
    return *device_;
  }

 private:
  std::unique_ptr<Device> device_;
};

}  // namespace

Device& device(Environment& env) {
  return env.extension<RankDevice>().get();
}
Device& device() {
  return device(Environment::current());
}

Device& rebind_device(Environment& env, const DeviceBinding& binding) {
  if (binding.index < 0) {
    throw Error(ErrorKind::device,
                fmt::format("rebind_device needs a device index, got '{}'", binding.str()));
  }
  auto& topo = PhysicalTopology::of(env);
  const auto& me = topo.mine();
  Device& fresh = env.extension<RankDevice>().rebind(binding, static_cast<int>(me.cores.size()),
                                                     &topo.device_share());
  topo.rebind_mine(binding);
  return fresh;
}

}  // namespace hit
