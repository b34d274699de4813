// The cpu backend: kernels run on the host cores of the rank's group, in host memory. Nothing is
// staged (launch hands the tiles' own memory to the kernel); allocate() exists for code that asks
// a device for scratch memory whatever its kind. With a wait hook installed, a kernel runs on a
// helper thread while the calling thread calls the hook (as emu and cuda waits do).

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>

#include "core/host_memory.hpp"
#include "devices/backends.hpp"
#include "devices/emu/host_stream.hpp"
#include "devices/host_pool.hpp"
#include "hit/core/timer.hpp"

namespace hit::detail {
namespace {

class CpuDevice final : public Device {
 public:
  CpuDevice(const DeviceBinding& binding, int cores) : Device(DeviceKind::cpu, binding, cores) {
    limit_blas_threads(this->cores());
  }

  bool uses_host_memory() const noexcept override { return true; }
  std::uint64_t capacity() const override { return std::numeric_limits<std::uint64_t>::max(); }
  std::uint64_t used() const override { return used_.load(); }

  void* allocate(std::size_t bytes) override {
    void* p = detail::allocate_host(round_up(std::max<std::size_t>(bytes, 1)), 64);
    if (p == nullptr) throw_out_of_memory(*this, bytes, used_.load(), capacity());
    used_ += bytes;
    ++counters_.allocations;
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (p == nullptr) return;
    std::free(p);
    used_ -= bytes;
    ++counters_.frees;
  }
  void do_fill_zero(void* p, std::size_t bytes, int) override { std::memset(p, 0, bytes); }

  void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
            std::size_t width, std::size_t rows, int, CopyDirection) override {
    Timer t;
    copy_rows(dst, dst_pitch, src, src_pitch, width, rows);
    counters_.copy_ns += static_cast<std::int64_t>(t.seconds() * 1e9);
  }

  void do_execute(const std::function<void(const ExecContext&)>& body, std::uint64_t,
                  int) override {
    ExecContext ctx;
    ctx.threads = cores();
    ctx.host_pool = &pool_;
    Timer t;
    if (wait_hook()) {
      // Someone must be answered while the kernel runs (work packages: the other ranks' claims,
      // which MPI progresses only inside MPI calls on this rank). MPI is initialised for the
      // main thread only (MPI_THREAD_FUNNELED), so the kernel runs on a helper thread and this
      // thread calls the hook every 100 µs until it is done; errors come back here.
      runner_.submit([&body, ctx] { body(ctx); });
      std::exception_ptr hook_error;  // the kernel uses `body` until it ends: never leave before
      while (!runner_.synchronize_for(std::chrono::microseconds(100))) {
        if (hook_error) continue;
        try {
          wait_hook()();
        } catch (...) {
          hook_error = std::current_exception();
        }
      }
      if (hook_error) std::rethrow_exception(hook_error);
    } else {
      body(ctx);
    }
    ++counters_.executions;
    const auto ns = static_cast<std::int64_t>(t.seconds() * 1e9);
    counters_.execute_ns += ns;
    counters_.execute_host_ns += ns;
  }

  // Work runs when issued: streams are always idle.
  void do_wait_for(int, int) override {}
  void do_synchronize(int) override {}

 private:
  static std::size_t round_up(std::size_t b) { return (b + 63) / 64 * 64; }
  std::atomic<std::uint64_t> used_{0};
  HostPool pool_;  // the threads of `threads` and `blocks` partitions, started at first use
  // The thread a kernel runs on while the caller answers the wait hook (started at first use).
  // After the pool: destroyed first, when no kernel can use the pool.
  HostStream runner_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(const DeviceBinding& binding, int cores) {
  return std::make_unique<CpuDevice>(binding, cores);
}

}  // namespace hit::detail
