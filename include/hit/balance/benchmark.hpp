#pragma once
// Kernel benchmarking, as FuPerMod does it (Clarke, Zhong, Rychkov, Lastovetsky, "FuPerMod: a
// framework for optimal data partitioning"): time a representative kernel for d computation units,
// repeating it until the Student-t confidence interval of the mean is within the asked precision,
// with timing spikes rejected by a median rule before the point is accepted. Processes that share
// resources (a node) run each repetition together, after a barrier on `sync_comm`, so the
// measurement includes their contention.

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "hit/core/error.hpp"

#include "hit/fpm/model.hpp"
#include "hit/fpm/point.hpp"

namespace hit::balance {

// What to benchmark (fupermod_kernel). Members are std::function so any kernel plugs in: a lambda
// over a BLAS call, or a hit::launch of a device kernel (which synchronises, so the wall time of
// `run` includes transfers and the device). The kernel's own state lives in the captures.
struct BenchmarkKernel {
  std::string name = "kernel";
  // Floating-point operations of d units (for speeds in FLOP/s); optional.
  std::function<double(std::int64_t d)> complexity;
  // Allocates and initialises the data of d units; optional. Throw Error(out_of_memory) when the
  // device cannot hold them (dynamic loops then lower the device's capacity).
  std::function<void(std::int64_t d)> setup;
  // One execution on the data set up last; timed with a wall clock.
  std::function<void()> run;
  // Releases the data; optional; also called when a repetition fails.
  std::function<void()> teardown;
  // Instead of `run`: one execution that returns its own duration in seconds (device event timers,
  // launch records, or simulated devices in tests). Used when set.
  std::function<double()> timed_run;
  // Device memory in bytes that d units occupy while the kernel runs (what one launch stages);
  // optional. Turns a device's memory into a capacity in units (units_that_fit).
  std::function<std::uint64_t(std::int64_t d)> device_bytes;
};

// The most units whose device_bytes fit in `bytes` (device_bytes must not decrease with d), at
// most 2^40; `fpm::unlimited` when the kernel has no device_bytes. 0 when not even one unit fits.
[[nodiscard]] std::int64_t units_that_fit(const BenchmarkKernel& kernel, std::uint64_t bytes);

struct Precision {
  int min_reps = 3;             // accepted repetitions at least (unless max_reps is reached)
  int max_reps = 50;            // repetitions at most, rejected ones included
  double rel_ci = 0.025;        // stop when the CI half-width <= rel_ci × mean
  double confidence = 0.95;     // of the two-sided Student-t interval
  double max_seconds = 2.0;     // stop (after min_reps) once the repetitions took this long
  int warmup = 1;               // untimed runs first (page faults, caches, lazy initialisation)
  double outlier_k = 3.0;       // reject |t − median| > outlier_k × 1.4826 × MAD ...
  double outlier_floor = 0.05;  // ... but never a deviation within this fraction of the median
};

// Benchmarks `kernel` for d units. d = 0 measures nothing (Point{0, 0, 0, 0}) but still takes part
// in the synchronisation, so ranks with no work do not hang the others. `sync_comm`: the
// processes to synchronise with (all of them must call benchmark), or MPI_COMM_NULL / MPI_COMM_SELF
// for none. Returns the mean of the accepted repetitions, their count and the CI half-width.
// Errors: Error(invalid_argument) for d < 0 or a bad precision; a failure in setup, run or
// teardown on any process of sync_comm ends the benchmark on all of them: the failing process
// rethrows its own error, the others an Error of the same kind naming the failed rank.
fpm::Point benchmark(const BenchmarkKernel& kernel, std::int64_t d, const Precision& precision = {},
                     MPI_Comm sync_comm = MPI_COMM_NULL);

// The outcome of benchmarking d units on this process, failures included, for callers that go on
// after one: a model builder that takes a size the device cannot hold as its capacity (hit-fpm
// build), the dynamic loops that lower a capacity and repartition.
struct Measurement {
  // {d, mean time, accepted repetitions, CI half-width}; t = 0 when nothing was measured.
  fpm::Point point;
  // This process failed: its own error (a bad argument, or setup, run or teardown throwing).
  std::exception_ptr failure;
  // Another process of sync_comm failed, so no point was measured here either; what it reported
  // ("rank r of the synchronisation communicator: ...") and its kind.
  bool peer_failed = false;
  std::string peer_error;
  ErrorKind peer_kind = ErrorKind::internal;

  // A point was measured: d > 0 and no process of sync_comm failed.
  [[nodiscard]] bool measured() const noexcept { return !failure && !peer_failed && point.d > 0; }
};

// benchmark() that reports instead of throwing: the same synchronised repetitions, and every
// process of sync_comm returns, whichever of them failed. benchmark() is measure() followed by
// rethrowing `failure`, or throwing an Error of `peer_kind` that names the failed peer.
[[nodiscard]] Measurement measure(const BenchmarkKernel& kernel, std::int64_t d,
                                  const Precision& precision = {},
                                  MPI_Comm sync_comm = MPI_COMM_NULL);

}  // namespace hit::balance
