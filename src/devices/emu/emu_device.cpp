// The emulated accelerator (docs/devices.md §4): its own memory arena with a capacity (mem=),
// explicit copies that take bytes/bw (bw=), and a speed given as a slowdown of the host kernel
// (slowdown=F or a profile over the bytes a launch stages). A kernel runs the real cpu body on the
// arena's copies, then the stream waits until F times the measured time has passed.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <thread>

#include "devices/backends.hpp"
#include "devices/emu/block_cache.hpp"
#include "devices/emu/host_stream.hpp"
#include "devices/host_pool.hpp"
#include "hit/core/timer.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::detail {
namespace {

// CPU time consumed by the calling thread.
std::chrono::nanoseconds thread_cpu_time() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

using clock = std::chrono::steady_clock;

class EmuDevice final : public Device {
 public:
  EmuDevice(const DeviceBinding& binding, int cores, DeviceShare* share)
      : Device(DeviceKind::emu, binding, cores), params_(DeviceParams::of(binding)), share_(share) {
    limit_blas_threads(this->cores());
  }

  ~EmuDevice() override {
    // Drain the streams before the arena and counters go.
    for (auto& s : streams_) {
      try {
        s.synchronize();
      } catch (...) {
      }
    }
  }

  std::uint64_t capacity() const override {
    return params_.mem ? *params_.mem : std::numeric_limits<std::uint64_t>::max();
  }
  std::uint64_t used() const override { return used_counter().load(); }

  void* allocate(std::size_t bytes) override {
    auto& used = used_counter();
    const std::uint64_t cap = capacity();
    std::uint64_t now = used.load();
    do {
      if (bytes > cap || now > cap - bytes) throw_out_of_memory(*this, bytes, now, cap);
    } while (!used.compare_exchange_weak(now, now + bytes));
    if (share_ != nullptr) {
      std::uint64_t peak = share_->peak_bytes().load();
      while (now + bytes > peak && !share_->peak_bytes().compare_exchange_weak(peak, now + bytes)) {
      }
    }
    void* p = memory_.allocate(bytes);
    if (p == nullptr) {
      used -= bytes;
      throw_out_of_memory(*this, bytes, used.load(), cap);
    }
    ++counters_.allocations;
    return p;
  }

  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (p == nullptr) return;
    // Work still queued may use the memory.
    for (auto& s : streams_) {
      try {
        s.synchronize();
      } catch (...) {
      }
    }
    memory_.deallocate(p, bytes);
    used_counter() -= bytes;
    ++counters_.frees;
  }

  void do_fill_zero(void* p, std::size_t bytes, int stream) override {
    streams_[check(stream)].submit([p, bytes] { std::memset(p, 0, bytes); });
  }

  void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
            std::size_t width, std::size_t rows, int stream, CopyDirection) override {
    streams_[check(stream)].submit(
        [=, this] { transfer(dst, dst_pitch, src, src_pitch, width, rows); });
  }

  void do_execute(const std::function<void(const ExecContext&)>& body, std::uint64_t problem_bytes,
                  int stream) override {
    // An injected failure (fail=K): from the K-th execution on, like a GPU that fell off the bus.
    if (params_.fail_after && executed_ >= *params_.fail_after) {
      throw Error(ErrorKind::device_failed,
                  fmt::format("device {} failed at kernel execution {} (injected: fail={})",
                              label(), executed_, *params_.fail_after));
    }
    // An injected stall (stall=K): this execution alone takes 100 times as long.
    const double stall = params_.stall_at && executed_ == *params_.stall_at ? 100.0 : 1.0;
    ++executed_;
    const double change =
        params_.change.empty()
            ? 1.0
            : params_.change.factor(launches_++,
                                    std::chrono::duration<double>(clock::now() - created_).count());
    ++counters_.executions;
    const double factor = std::max(1.0, params_.slowdown.at(problem_bytes) * change) * stall;
    const bool cpu_clock = params_.cpu_clock;
    streams_[check(stream)].submit([this, body, factor, cpu_clock] {
      ExecContext ctx;
      ctx.threads = cores();
      ctx.host_pool = &pool_;
      const auto start = clock::now();
      const auto cpu_start = thread_cpu_time();
      body(ctx);
      const auto real = clock::now() - start;
      // The host kernel's own time: elapsed, or (clock=cpu) the CPU time of the thread that ran it,
      // which does not grow when other processes share the core, so contention is not multiplied
      // by the slowdown. The device never finishes before the host kernel did.
      const clock::duration host =
          cpu_clock ? std::chrono::duration_cast<clock::duration>(thread_cpu_time() - cpu_start)
                    : real;
      counters_.execute_host_ns +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(host).count();
      std::this_thread::sleep_until(
          start + std::max(real, std::chrono::duration_cast<clock::duration>(host * factor)));
      counters_.execute_ns +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
    });
  }

  void do_wait_for(int waiting, int other) override {
    auto done = streams_[check(other)].marker();
    streams_[check(waiting)].submit([done] { done.wait(); });
  }

  void do_synchronize(int stream) override {
    HostStream& s = streams_[check(stream)];
    if (!wait_hook()) {
      s.synchronize();
      return;
    }
    // Every 100 µs of waiting, the hook (work packages answer other ranks' requests there).
    while (!s.synchronize_for(std::chrono::microseconds(100))) wait_hook()();
  }

 private:
  static std::size_t check(int stream) {
    if (stream < 0 || stream >= streams) {
      throw Error(ErrorKind::invalid_argument,
                  "device stream " + std::to_string(stream) + " does not exist (0 or 1)");
    }
    return static_cast<std::size_t>(stream);
  }

  // A copy takes bytes/bw of wall time, however fast memcpy is.
  void transfer(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                std::size_t width, std::size_t rows) {
    const auto start = clock::now();
    copy_rows(dst, dst_pitch, src, src_pitch, width, rows);
    if (params_.bw) {
      const double seconds = static_cast<double>(width * rows) / *params_.bw;
      std::this_thread::sleep_until(start + std::chrono::duration_cast<clock::duration>(
                                                std::chrono::duration<double>(seconds)));
    }
    counters_.copy_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
  }

  std::atomic<std::uint64_t>& used_counter() const {
    return share_ != nullptr ? share_->used_bytes() : local_used_;
  }

  DeviceParams params_;
  DeviceShare* share_;
  // The origins of a speed change: the device's creation, and its executions (not reset with the
  // counters).
  clock::time_point created_ = clock::now();
  std::uint64_t launches_ = 0;
  std::uint64_t executed_ = 0;  // executions asked for, failed ones excluded (for fail=)
  mutable std::atomic<std::uint64_t> local_used_{0};
  BlockCache memory_;  // before the streams: destroyed after them, when no work can use it
  // The threads of `threads` and `blocks` partitions; the stream that executes a kernel is the
  // caller. Before the streams, for the same reason as the memory.
  HostPool pool_;
  HostStream streams_[streams];
};

}  // namespace

std::unique_ptr<Device> make_emu_device(const DeviceBinding& binding, int cores,
                                        DeviceShare* share) {
  return std::make_unique<EmuDevice>(binding, cores, share);
}

}  // namespace hit::detail
