#pragma once
// The host threads of a device (cpu, emu): a persistent pool that runs the blocks of a partition
// (docs/devices.md §5). Starting and joining std::threads on every launch cost more than an empty
// kernel's whole launch; the pool's workers are started at first use and then wait for work.
//
// Owned by the device backend (one pool per device, hence per Environment: no global state), and
// handed to the bodies the device executes through ExecContext::host_pool.

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace hit::detail {

// A non-owning reference to a callable: what std::function would be without the allocation a
// capture of more than two references costs it on every call. The callable must outlive the call
// it is passed to (a lambda argument does: it lives until the end of the full expression).
template <class Signature>
class FunctionRef;

// F can be called as R(A...) and is not the FunctionRef itself (which is copied instead).
template <class F, class Self, class R, class... A>
concept referable_as =
    !std::is_same_v<std::remove_cvref_t<F>, Self> && std::is_invocable_r_v<R, F&, A...>;

template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  // Implicit: a lambda argument converts to it, as to std::function.
  template <referable_as<FunctionRef, R, A...> F>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor)
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(object_, std::forward<A>(a)...); }

 private:
  void* object_;
  R (*call_)(void*, A...);
};

// parallel_for(n, threads, fn) runs fn(i) for every i in [0, n) exactly once, on t = min(threads,
// n) threads, the caller being one of them: static contiguous chunks [w*n/t, (w+1)*n/t), the
// caller taking chunk 0 (blocks are equal work by construction, and neighbours stay together).
// A chunk stops at its first exception; once every chunk has finished, the exception of the
// lowest chunk that threw is rethrown in the caller.
//
// Workers are started lazily, as many as the largest call asked for (threads - 1), and joined by
// the destructor. Between calls a worker polls briefly (yielding its core: processes may
// oversubscribe the cores) and then sleeps on its generation counter, so a pool costs no CPU
// while the device is idle.
//
// Thread safety: one caller at a time per pool. A call made while another is running on the same
// pool (a second stream of an emulated device, or a body calling back into its own pool) does not
// wait for it, nor deadlock, but runs its chunks one after the other on its own thread, with the
// same results. The owner destroys the pool only when no call is running.
class HostPool {
 public:
  HostPool() = default;
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  void parallel_for(std::int64_t n, int threads, FunctionRef<void(std::int64_t)> fn);

  // Worker threads started so far (the caller of parallel_for is not one of them). Between calls.
  int workers() const noexcept;

 private:
  struct Worker {
    // Bumped by the caller to hand this worker the current job (and by the destructor to stop it).
    alignas(64) std::atomic<std::uint32_t> generation{0};
    std::thread thread;
  };

  void start_workers(int count);
  void work(Worker& me, std::size_t chunk);
  void run_chunk(std::size_t chunk) noexcept;

  // The job of the running call: written by the caller before it bumps the workers' generations,
  // read by each worker after it saw its own bumped (release / acquire).
  const FunctionRef<void(std::int64_t)>* fn_ = nullptr;
  std::int64_t n_ = 0;
  std::int64_t chunks_ = 0;
  std::vector<std::exception_ptr> errors_;  // one per chunk
  // Workers of the running call that have not finished their chunk.
  alignas(64) std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};

  std::atomic<bool> busy_{false};  // set while a call runs
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace hit::detail
