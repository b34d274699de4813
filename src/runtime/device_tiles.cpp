#include "hit/runtime/device_tiles.hpp"

#include <fmt/format.h>

#include "devices/exec_context.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"

namespace hit::runtime {

namespace {
// Copies on the second stream: a copy asked for by another place's worker does not wait for the
// kernel running on the first (the directory never copies a tile a running task writes). With
// asynchronous copies, a copy in is not waited for: fence() makes the kernels' stream wait for
// the copies made so far, so a tile prefetched for the next task moves while the device
// computes. Copies out are waited for: the host reads them next.
constexpr int copy_stream = 1;
}  // namespace

DeviceTiles::~DeviceTiles() {
  try {
    device_.synchronize(copy_stream);  // copies in of tasks that never ran (a failed run)
  } catch (...) {                      // a failed device: its memory is released all the same
  }
  for (auto& [t, c] : tiles_) {
    if (c.device) device_.deallocate(c.device, c.host.bytes());
  }
  for (const auto& [p, bytes] : dropped_) device_.deallocate(p, bytes);
}

void DeviceTiles::add(TileId t, HostRows host) {
  const std::lock_guard<std::mutex> lock(mutex_);
  tiles_[t] = Copy{host, nullptr};
}

DeviceTiles::Copy& DeviceTiles::copy(TileId t) {
  const auto c = tiles_.find(t);
  if (c == tiles_.end()) {
    throw Error(ErrorKind::internal,
                fmt::format("device tiles of memory {}: tile {} was never added", location_, t));
  }
  return c->second;
}

void* DeviceTiles::existing(TileId t) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Copy& c = copy(t);
  if (!c.device) {
    throw Error(ErrorKind::internal,
                fmt::format("device tiles of memory {}: tile {} has no device copy", location_, t));
  }
  return c.device;
}

void DeviceTiles::free_dropped() {
  // One worker frees at a time, and a worker that finds another freeing waits for it: when this
  // returns, every copy dropped before the call is gone from the device, as the directory already
  // counts it.
  const std::lock_guard<std::mutex> freeing(freeing_);
  std::vector<std::pair<void*, std::size_t>> freed;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    freed.swap(dropped_);
  }
  // Outside the map's lock: freeing waits for the device's streams.
  for (const auto& [p, n] : freed) device_.deallocate(p, n);
}

void* DeviceTiles::data(TileId t) {
  std::size_t bytes = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    Copy& c = copy(t);
    if (c.device) return c.device;
    bytes = c.host.bytes();
  }
  void* p = nullptr;
  while (p == nullptr) {
    // The directory gave this tile room that copies dropped before may still hold (another
    // worker freeing them, or nobody yet): allocated first, the process would hold more than its
    // budget meanwhile, and beside processes sharing the device that is another's memory.
    free_dropped();
    try {
      p = device_.allocate(bytes);
    } catch (const Error& e) {
      // Copies dropped since: free them and try again. None: the device is full of what others
      // hold, and that is the error.
      if (e.kind() != ErrorKind::out_of_memory) throw;
      const std::lock_guard<std::mutex> lock(mutex_);
      if (dropped_.empty()) throw;
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  copy(t).device = p;
  return p;
}

void DeviceTiles::apply(const Transfer& x) {
  HostRows h;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    Copy& c = copy(x.tile);
    h = c.host;
    if (x.kind == TransferKind::drop && x.from == location_) {
      if (c.device) dropped_.emplace_back(c.device, h.bytes());
      c.device = nullptr;
      return;
    }
  }
  EventTrace& trace = event_trace(Environment::current());
  const double began = trace.enabled() ? EventTrace::now() : 0;
  const auto traced = [&](const char* what) {
    if (!trace.enabled()) return;
    trace.span("device copies", "copy", fmt::format("{} tile {}", what, x.tile), began,
               EventTrace::now(), {{"bytes", static_cast<double>(h.bytes())}});
  };
  if (x.kind != TransferKind::drop && x.to == location_ && x.from == host_memory) {
    device_.copy_in(data(x.tile), h.row_bytes, h.data, h.pitch_bytes, h.row_bytes, h.rows,
                    copy_stream);
    if (!asynchronous_) device_.synchronize(copy_stream);
    traced(asynchronous_ ? "copy in (started)" : "copy in");
  } else if (x.kind != TransferKind::drop && x.from == location_ && x.to == host_memory) {
    device_.copy_out(h.data, h.pitch_bytes, existing(x.tile), h.row_bytes, h.row_bytes, h.rows,
                     copy_stream);
    device_.synchronize(copy_stream);
    traced("copy out");
  } else {
    throw Error(ErrorKind::internal,
                fmt::format("device tiles of memory {}: a step of tile {} from memory {} to {}, "
                            "which they do not take",
                            location_, x.tile, x.from, x.to));
  }
}

void DeviceTiles::fence() {
  device_.wait_for(0, copy_stream);
}

void execute_on(Device& device, const Box& domain, std::uint64_t problem_bytes,
                const std::function<void(const KernelContext&)>& body) {
  device.execute(
      [&](const ExecContext& ec) {
        KernelContext ctx;
        ctx.domain = domain;
        ctx.block = domain;
        ctx.threads = ec.threads;
        ctx.cuda_stream = ec.cuda_stream;
        ctx.cublas = ec.cublas;
        body(ctx);
      },
      problem_bytes, 0);
  device.synchronize(0);
}

}  // namespace hit::runtime
