#include "hit/balance/benchmark.hpp"

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/timer.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::balance {

using fpm::Point;
using fpm::reject_outliers;
using fpm::summarize;
using fpm::Summary;
using fpm::unlimited;

namespace {

void validate(const BenchmarkKernel& kernel, std::int64_t d, const Precision& p) {
  auto bad = [&](const std::string& what) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("benchmark of '{}': {}", kernel.name, what));
  };
  if (d < 0) bad(fmt::format("d = {} units is negative (must be >= 0)", d));
  if (!kernel.run && !kernel.timed_run) bad("the kernel has neither run nor timed_run");
  if (p.min_reps < 1) bad(fmt::format("min_reps = {} (must be >= 1)", p.min_reps));
  if (p.max_reps < p.min_reps) {
    bad(fmt::format("max_reps = {} is below min_reps = {}", p.max_reps, p.min_reps));
  }
  if (!(p.rel_ci > 0)) bad(fmt::format("rel_ci = {} (must be > 0)", p.rel_ci));
  if (!(p.confidence > 0 && p.confidence < 1)) {
    bad(fmt::format("confidence = {} (must be between 0 and 1)", p.confidence));
  }
  if (!(p.max_seconds > 0)) bad(fmt::format("max_seconds = {} (must be > 0)", p.max_seconds));
  if (p.warmup < 0) bad(fmt::format("warmup = {} (must be >= 0)", p.warmup));
  if (!(p.outlier_k > 0) || !(p.outlier_floor >= 0)) {
    bad(fmt::format("outlier_k = {} and outlier_floor = {} (must be > 0 and >= 0)", p.outlier_k,
                    p.outlier_floor));
  }
}

// Completes `request` without keeping a core busy. MPICH (ch4) polls while it waits, so on a node
// with more processes than cores a process that finished its repetition early took CPU time
// from the ones still measuring, and every point measured under the contention of its peers'
// waiting. After a short spin (fast answers stay fast) the wait sleeps in steps of at most 100 µs:
// negligible against a repetition, and the only cost is a start up to that much later.
void wait_quietly(MPI_Request& request, const char* what) {
  using namespace std::chrono_literals;
  const auto spin_until = std::chrono::steady_clock::now() + 20us;
  auto nap = 5us;
  int done = 0;
  while (true) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (std::chrono::steady_clock::now() < spin_until) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(2 * nap, 100us);
  }
}

// The synchronisation of one benchmark: agreement on failures (and on stopping) among the
// processes of sync_comm, or nothing when there is no one to synchronise with.
class Sync {
 public:
  explicit Sync(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL || comm == MPI_COMM_SELF) return;
    MPI_Comm_size(comm, &size_);
    MPI_Comm_rank(comm, &rank_);
    if (size_ > 1) comm_ = comm;
  }

  void barrier() const {
    if (comm_ == MPI_COMM_NULL) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm_, &request), "benchmark: MPI_Ibarrier");
    wait_quietly(request, "benchmark: MPI_Ibarrier");
  }

  // Agrees on `failure` (this process's) and `done`; returns whether all are done. When some
  // process failed, records it in `m` (own failure, or the first failing peer) and returns
  // nullopt.
  std::optional<bool> agree(const std::exception_ptr& failure, bool done, Measurement& m) const {
    int first = failure ? rank_ : size_;
    int all_done = done ? 1 : 0;
    if (comm_ != MPI_COMM_NULL) {
      int v[2] = {first, all_done};
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, comm_, &request),
                "benchmark: MPI_Iallreduce");
      wait_quietly(request, "benchmark: MPI_Iallreduce");
      // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker): wait_quietly completed it (MPI_Test)
      first = v[0];
      all_done = v[1];
    }
    if (first == size_) return all_done != 0;
    if (failure) m.failure = failure;
    // Everyone learns what the first failing process reported.
    int kind = static_cast<int>(ErrorKind::internal);
    std::string text;
    if (rank_ == first) {
      try {
        std::rethrow_exception(failure);
      } catch (const Error& e) {
        kind = static_cast<int>(e.kind());
        text = e.what();
      } catch (const std::exception& e) {
        text = e.what();
      } catch (...) {
        text = "unknown failure";
      }
    }
    if (comm_ != MPI_COMM_NULL) {
      broadcast(kind, first, comm_);
      broadcast(text, first, comm_);
    }
    if (!failure) {
      m.peer_failed = true;
      m.peer_kind = static_cast<ErrorKind>(kind);
      m.peer_error = fmt::format("rank {} of the synchronisation communicator: {}", first, text);
    }
    return std::nullopt;
  }

  template <class F>
  bool step(F&& fn, Measurement& m) const {
    std::exception_ptr failure;
    try {
      fn();
    } catch (...) {
      failure = std::current_exception();
    }
    return agree(failure, true, m).has_value();
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int size_ = 1;
  int rank_ = 0;
};

}  // namespace

Measurement measure(const BenchmarkKernel& kernel, std::int64_t d, const Precision& precision,
                    MPI_Comm sync_comm) {
  Measurement m;
  m.point = Point{std::max<std::int64_t>(d, 0), 0, 0, 0};
  const Sync sync(sync_comm);
  if (!sync.step([&] { validate(kernel, d, precision); }, m)) return m;

  const bool active = d > 0;
  bool ready = false;
  // Teardown runs whenever setup succeeded here, whatever happened elsewhere.
  auto release = [&] {
    if (ready && kernel.teardown) {
      ready = false;
      kernel.teardown();
    }
  };
  auto release_quietly = [&] {
    try {
      release();
    } catch (...) {
      // The failure being reported matters more than one in cleaning up after it.
    }
  };
  const bool set_up = sync.step(
      [&] {
        if (active && kernel.setup) kernel.setup(d);
        ready = active;
      },
      m);
  if (!set_up) {
    release_quietly();
    return m;
  }

  auto once = [&]() -> double {
    if (kernel.timed_run) return kernel.timed_run();
    const Timer timer;
    kernel.run();
    return timer.seconds();
  };
  for (int w = 0; w < precision.warmup; ++w) {
    sync.barrier();
    if (!sync.step(
            [&] {
              if (active) once();
            },
            m)) {
      release_quietly();
      return m;
    }
  }

  std::vector<double> samples;
  double spent = 0;
  Summary summary;
  while (true) {
    sync.barrier();
    std::exception_ptr failure;
    bool done = true;
    if (active) {
      try {
        const double t = once();
        samples.push_back(t);
        spent += t;
        const auto kept = reject_outliers(samples, precision.outlier_k, precision.outlier_floor);
        summary = summarize(kept, precision.confidence);
        const bool precise = summary.count >= 2 && summary.ci <= precision.rel_ci * summary.mean;
        done = static_cast<int>(samples.size()) >= precision.max_reps ||
               (summary.count >= precision.min_reps && (precise || spent >= precision.max_seconds));
      } catch (...) {
        failure = std::current_exception();
      }
    }
    const auto all_done = sync.agree(failure, done, m);
    if (!all_done) {
      release_quietly();
      return m;
    }
    if (*all_done) break;
  }
  if (!sync.step(release, m)) return m;
  if (active) {
    if (!(summary.mean > 0) || !std::isfinite(summary.mean)) {
      m.failure = std::make_exception_ptr(Error(
          ErrorKind::device, fmt::format("benchmark of '{}' at d = {}: measured time {} s is not "
                                         "a positive number",
                                         kernel.name, d, summary.mean)));
      return m;
    }
    m.point = Point{d, summary.mean, summary.count, summary.ci};
  }
  return m;
}

std::int64_t units_that_fit(const BenchmarkKernel& kernel, std::uint64_t bytes) {
  if (!kernel.device_bytes) return unlimited;
  constexpr std::int64_t most = std::int64_t{1} << 40;
  const auto fits = [&](std::int64_t d) { return kernel.device_bytes(d) <= bytes; };
  if (!fits(1)) return 0;
  // Doubling to a size that does not fit, then bisection: lo fits, hi does not.
  std::int64_t lo = 1, hi = 2;
  while (hi <= most && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > most) return most;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

Point benchmark(const BenchmarkKernel& kernel, std::int64_t d, const Precision& precision,
                MPI_Comm sync_comm) {
  Measurement m = measure(kernel, d, precision, sync_comm);
  if (m.failure) std::rethrow_exception(m.failure);
  if (m.peer_failed) {
    throw Error(m.peer_kind, fmt::format("benchmark of '{}' at d = {} stopped: {}", kernel.name, d,
                                         m.peer_error));
  }
  return m.point;
}

}  // namespace hit::balance
