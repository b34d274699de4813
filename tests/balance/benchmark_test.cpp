// Kernel benchmarking: stopping rules (precision, repetitions, time), spike rejection, the kernel
// life cycle and failures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "hit/balance/benchmark.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/statistics.hpp"
#include "virtual_device.hpp"

namespace hit::balance {
using namespace hit::fpm;  // the models the tests build and compare
namespace {

using test::kernel_of;
using test::VirtualDevice;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::shared_ptr<VirtualDevice> sequence_device(std::vector<double> times) {
  auto dev = std::make_shared<VirtualDevice>();
  auto seq = std::make_shared<std::vector<double>>(std::move(times));
  auto* raw = dev.get();
  dev->time = [seq, raw](std::int64_t) {
    // runs counts the warm-up too; the sequence repeats its last value.
    const auto i = static_cast<std::size_t>(raw->runs - 1);
    return i < seq->size() ? (*seq)[i] : seq->back();
  };
  return dev;
}

TEST(Benchmark, SteadyKernelStopsAtMinimumRepetitions) {
  auto dev = sequence_device({0.5});
  const Point p = benchmark(kernel_of(dev), 40);
  EXPECT_EQ(p, (Point{40, 0.5, 3, 0}));
  EXPECT_EQ(dev->d, 40);
  EXPECT_EQ(dev->setups, 1);
  EXPECT_EQ(dev->runs, 1 + 3);  // one warm-up, three timed
  EXPECT_EQ(dev->teardowns, 1);
}

TEST(Benchmark, TimingSpikeIsRejected) {
  // Warm-up 9 (ignored), then 1, 10, 1, 1: the spike is rejected and the mean stays 1.
  auto dev = sequence_device({9, 1, 10, 1, 1});
  const Point p = benchmark(kernel_of(dev), 5);
  EXPECT_DOUBLE_EQ(p.t, 1.0);
  EXPECT_EQ(p.reps, 3);
  EXPECT_EQ(dev->runs, 5);
  // Without rejection the spike stays in the mean.
  Precision lax;
  lax.outlier_k = 1e9;
  lax.outlier_floor = 1e9;
  auto again = sequence_device({9, 1, 10, 1, 1});
  // (It stops after three: min_reps is reached and 12 s exceed the 2 s limit.)
  EXPECT_DOUBLE_EQ(benchmark(kernel_of(again), 5, lax).t, 4.0);
}

TEST(Benchmark, StopsAsSoonAsTheIntervalIsNarrowEnough) {
  auto dev = std::make_shared<VirtualDevice>();
  dev->time = [](std::int64_t) { return 2.0; };
  dev->noise = 0.04;
  Precision precision;
  precision.rel_ci = 0.01;
  precision.max_reps = 1000;
  precision.max_seconds = 1e9;
  const Point p = benchmark(kernel_of(dev), 10, precision);
  EXPECT_LE(p.ci, 0.01 * p.t);
  EXPECT_GT(p.ci, 0);
  EXPECT_NEAR(p.t, 2.0, 0.02);
  // Recompute the samples the kernel produced: one repetition fewer was not yet precise.
  std::vector<double> samples;
  for (int run = 2; run <= dev->runs; ++run)
    samples.push_back(2.0 * (1 + 0.04 * std::sin(1.7 * run)));
  const auto all = summarize(reject_outliers(samples), 0.95);
  EXPECT_NEAR(all.mean, p.t, 1e-15);
  samples.pop_back();
  const auto fewer = summarize(reject_outliers(samples), 0.95);
  EXPECT_GT(fewer.ci, 0.01 * fewer.mean);
}

TEST(Benchmark, RepetitionAndTimeLimits) {
  auto noisy = sequence_device({1});
  noisy->time = [](std::int64_t) { return 1.0; };
  noisy->noise = 0.5;
  Precision precision;
  precision.rel_ci = 1e-6;
  precision.max_reps = 10;
  precision.max_seconds = 1e9;
  benchmark(kernel_of(noisy), 3, precision);
  EXPECT_EQ(noisy->runs, 1 + 10);

  auto slow = sequence_device({1});
  slow->time = [](std::int64_t) { return 1.0; };
  slow->noise = 0.3;
  precision.max_reps = 100;
  precision.max_seconds = 2.5;
  benchmark(kernel_of(slow), 3, precision);
  EXPECT_EQ(slow->runs, 1 + 3);  // ~3 s of repetitions after three, at least min_reps
}

TEST(Benchmark, ZeroUnitsMeasureNothing) {
  auto dev = sequence_device({1});
  EXPECT_EQ(benchmark(kernel_of(dev), 0), (Point{0, 0, 0, 0}));
  EXPECT_EQ(dev->setups + dev->runs + dev->teardowns, 0);
}

TEST(Benchmark, FailuresAreReportedAndCleanedUp) {
  auto dev = sequence_device({1});
  try {
    benchmark(kernel_of(dev), -1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("virtual"), HasSubstr("d = -1")));
  }
  Precision bad;
  bad.min_reps = 0;
  EXPECT_THROW(benchmark(kernel_of(dev), 1, bad), Error);

  dev->memory = 100;
  try {
    benchmark(kernel_of(dev), 101);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  }
  EXPECT_EQ(dev->teardowns, 0);  // setup failed: nothing to release

  BenchmarkKernel k = kernel_of(dev);
  int calls = 0;
  k.timed_run = [&calls]() -> double {
    if (++calls == 3) throw Error(ErrorKind::device, "kernel launch failed");
    return 1.0;
  };
  try {
    benchmark(k, 10);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel launch failed"));
  }
  EXPECT_EQ(dev->teardowns, 1);  // released although a repetition failed
}

// measure() reports what benchmark() throws, so a caller can go on after its own failure (hit-fpm
// build takes an out-of-memory size as the device's capacity).
TEST(Measure, ReportsFailuresInsteadOfThrowing) {
  auto dev = sequence_device({0.5});
  const Measurement ok = measure(kernel_of(dev), 40);
  EXPECT_TRUE(ok.measured());
  EXPECT_FALSE(ok.failure);
  EXPECT_FALSE(ok.peer_failed);
  EXPECT_EQ(ok.point, (Point{40, 0.5, 3, 0}));

  const Measurement none = measure(kernel_of(dev), 0);
  EXPECT_FALSE(none.measured());
  EXPECT_FALSE(none.failure);
  EXPECT_EQ(none.point, (Point{0, 0, 0, 0}));

  dev->memory = 100;
  Measurement oom;
  EXPECT_NO_THROW(oom = measure(kernel_of(dev), 101));
  EXPECT_FALSE(oom.measured());
  EXPECT_FALSE(oom.peer_failed);
  ASSERT_TRUE(oom.failure);
  try {
    std::rethrow_exception(oom.failure);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  }
  EXPECT_EQ(oom.point.t, 0);
}

TEST(Benchmark, WallClockOfARealKernel) {
  BenchmarkKernel k;
  k.name = "sleep";
  k.run = [] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); };
  Precision precision;
  precision.rel_ci = 0.5;
  const Point p = benchmark(k, 1, precision, MPI_COMM_SELF);
  EXPECT_GE(p.t, 0.003);
  EXPECT_LT(p.t, 0.05);
  EXPECT_GE(p.reps, 3);
}

TEST(Benchmark, BuiltInKernels) {
  // The launch kernels on this rank's own device (cpu): measured points, and a size the host
  // cannot hold reported as out of memory (which ends a model at its capacity).
  Environment& env = Environment::current();
  Precision quick;
  quick.min_reps = 2;
  quick.max_reps = 3;
  quick.warmup = 0;
  const BenchmarkKernel gemm = gemm_launch_kernel(env, 8);
  EXPECT_DOUBLE_EQ(gemm.complexity(5), 2.0 * 5 * 8 * 8 * 8);
  for (std::int64_t d : {1, 5, 12}) EXPECT_GT(benchmark(gemm, d, quick).t, 0);
  const BenchmarkKernel jacobi = jacobi_launch_kernel(env, 64);
  EXPECT_DOUBLE_EQ(jacobi.complexity(10), 4.0 * 10 * 64);
  EXPECT_GT(benchmark(jacobi, 100, quick).t, 0);
  try {
    benchmark(jacobi_launch_kernel(env, 1 << 20), std::int64_t{1} << 30, quick);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  }
  EXPECT_THROW(gemm_launch_kernel(env, 0), Error);
}

}  // namespace
}  // namespace hit::balance
