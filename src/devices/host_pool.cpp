// The persistent host thread pool of cpu and emu devices (devices/host_pool.hpp).

#include "devices/host_pool.hpp"

#include <algorithm>
#include <chrono>

namespace hit::detail {
namespace {

// How long a waiting thread polls before it sleeps. Launches usually follow each other closely
// (a loop of sweeps), and waking a sleeping thread costs tens of microseconds on a busy or
// virtual machine; polling longer would take the cores from other processes on an idle device.
constexpr auto poll_time = std::chrono::microseconds(50);

// Waits until `done(value of a)`, and returns that value: polls, yielding the core between looks,
// for poll_time, then sleeps on the atomic (woken by notify_one after a change).
template <class Done>
std::uint32_t await(const std::atomic<std::uint32_t>& a, Done done) {
  std::uint32_t v = a.load(std::memory_order_acquire);
  if (done(v)) return v;
  const auto until = std::chrono::steady_clock::now() + poll_time;
  do {
    std::this_thread::yield();
    v = a.load(std::memory_order_acquire);
    if (done(v)) return v;
  } while (std::chrono::steady_clock::now() < until);
  while (!done(v)) {
    a.wait(v, std::memory_order_acquire);
    v = a.load(std::memory_order_acquire);
  }
  return v;
}

// Indices of chunk c of n indices cut into t.
std::int64_t chunk_begin(std::int64_t c, std::int64_t n, std::int64_t t) {
  return c * n / t;
}

}  // namespace

HostPool::~HostPool() {
  stop_.store(true, std::memory_order_release);
  for (auto& w : workers_) {
    w->generation.fetch_add(1, std::memory_order_release);
    w->generation.notify_one();
  }
  for (auto& w : workers_) w->thread.join();
}

int HostPool::workers() const noexcept {
  return static_cast<int>(workers_.size());
}

void HostPool::start_workers(int count) {
  const auto want = static_cast<std::size_t>(count);
  if (workers_.size() >= want) return;
  // Reserved first: once a thread runs, recording it must not fail.
  workers_.reserve(want);
  while (workers_.size() < want) {
    auto w = std::make_unique<Worker>();
    Worker& me = *w;
    const std::size_t chunk = workers_.size() + 1;  // the caller takes chunk 0
    me.thread = std::thread([this, &me, chunk] { work(me, chunk); });
    workers_.push_back(std::move(w));
  }
}

void HostPool::work(Worker& me, std::size_t chunk) {
  std::uint32_t seen = 0;
  for (;;) {
    seen = await(me.generation, [seen](std::uint32_t v) { return v != seen; });
    if (stop_.load(std::memory_order_acquire)) return;
    run_chunk(chunk);
    // The last worker wakes the caller (a notify without a sleeper costs no system call).
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void HostPool::run_chunk(std::size_t chunk) noexcept {
  const auto c = static_cast<std::int64_t>(chunk);
  try {
    for (std::int64_t i = chunk_begin(c, n_, chunks_); i < chunk_begin(c + 1, n_, chunks_); ++i) {
      (*fn_)(i);
    }
  } catch (...) {
    errors_[chunk] = std::current_exception();
  }
}

void HostPool::parallel_for(std::int64_t n, int threads, FunctionRef<void(std::int64_t)> fn) {
  if (n <= 0) return;
  const std::int64_t t = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n));
  if (t == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // A flag rather than a mutex: the thread that holds it may call again (from its own chunk), and
  // try_lock on a mutex its caller owns is undefined.
  struct Claim {
    std::atomic<bool>& busy;
    const bool owned = !busy.exchange(true, std::memory_order_acquire);
    ~Claim() {
      if (owned) busy.store(false, std::memory_order_release);
    }
  } claim{busy_};
  if (!claim.owned) {
    // Another call is running on this pool: the same chunks, one after the other, here.
    std::exception_ptr first;
    for (std::int64_t c = 0; c < t; ++c) {
      try {
        for (std::int64_t i = chunk_begin(c, n, t); i < chunk_begin(c + 1, n, t); ++i) fn(i);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  start_workers(static_cast<int>(t - 1));
  fn_ = &fn;
  n_ = n;
  chunks_ = t;
  errors_.assign(static_cast<std::size_t>(t), nullptr);  // keeps its capacity: no allocation
  pending_.store(static_cast<std::uint32_t>(t - 1), std::memory_order_relaxed);
  for (std::int64_t w = 0; w + 1 < t; ++w) {
    Worker& worker = *workers_[static_cast<std::size_t>(w)];
    worker.generation.fetch_add(1, std::memory_order_release);
    worker.generation.notify_one();
  }
  run_chunk(0);
  await(pending_, [](std::uint32_t v) { return v == 0; });
  fn_ = nullptr;
  std::exception_ptr first;
  for (auto& e : errors_) {
    if (e && !first) first = e;
    e = nullptr;  // the pool keeps no exception alive between calls
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace hit::detail
