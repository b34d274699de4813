// Dynamic partitioning and load balancing over MPI: every rank measures its own simulated device
// (relative speeds 1, 4, 14, 2 for ranks 0..3), points are exchanged, and all ranks must end with
// the same, balanced distribution.
// hit-test-procs: 1 2 3 4
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <ctime>

#include "../balance/virtual_device.hpp"
#include "hit/balance/dynamic_balance.hpp"
#include "hit/balance/dynamic_partition.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::balance {
using namespace hit::fpm;  // the models the tests build and compare
namespace {

using ::testing::HasSubstr;

constexpr double speeds[] = {1, 4, 14, 2};

struct World {
  MPI_Comm comm = Environment::current().comm();
  int rank = Environment::current().rank();
  int size = Environment::current().size();
  double speed() const { return speeds[rank % 4]; }
};

// The same vector on every rank?
bool same_everywhere(MPI_Comm comm, const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> root = v;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_INT64_T, 0, comm);
  int same = root == v ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm);
  return same == 1;
}

double true_optimum(const World& w, std::int64_t n, std::int64_t cap_of_rank1 = unlimited) {
  std::vector<Model> models;
  for (int r = 0; r < w.size; ++r) {
    models.push_back(test::true_model(speeds[r % 4], n, r == 1 ? cap_of_rank1 : unlimited));
  }
  return partition_exact(models, n).makespan;
}

double measured_makespan(const World& w, const Distribution& d) {
  double worst = 0;
  for (int r = 0; r < w.size; ++r) {
    const auto units = d.parts[static_cast<std::size_t>(r)].d;
    if (units > 0) worst = std::max(worst, test::device_time(speeds[r % 4], units));
  }
  return worst;
}

TEST(MpiDynamicPartitioning, ConvergesOnEveryRank) {
  const World w;
  const std::int64_t n = 20000;
  auto dev = test::device_with_speed(w.speed());
  dev->spike_every = 5;  // timing spikes on every device
  PartitionContext ctx(n, w.size);
  const DynamicStatus status =
      partition_dynamic(ctx, w.comm, test::kernel_of(dev), Precision{}, 0.01, 12, w.comm);
  EXPECT_EQ(status, DynamicStatus::converged);
  EXPECT_LE(ctx.iterations, 6);
  EXPECT_LE(ctx.spread, 0.01);
  EXPECT_TRUE(same_everywhere(w.comm, ctx.dist.sizes()));
  std::int64_t sum = 0;
  for (const Part& p : ctx.dist.parts) sum += p.d;
  EXPECT_EQ(sum, n);
  EXPECT_LE(measured_makespan(w, ctx.dist), true_optimum(w, n) * 1.01);
  // Every rank holds every device's partial model.
  for (const Model& m : ctx.models) EXPECT_FALSE(m.empty());
}

TEST(MpiDynamicPartitioning, OutOfMemoryOnOneRank) {
  const World w;
  if (w.size < 2) GTEST_SKIP() << "needs a second rank";
  const std::int64_t n = 20000;
  auto dev = test::device_with_speed(w.speed());
  if (w.rank == 1) dev->memory = 1500;  // rank 1 would get ~4000 units
  PartitionContext ctx(n, w.size);
  const DynamicStatus status =
      partition_dynamic(ctx, w.comm, test::kernel_of(dev), Precision{}, 0.01, 15, w.comm);
  EXPECT_NE(status, DynamicStatus::running);
  const std::int64_t found = ctx.models[1].capacity();
  EXPECT_LE(found, 1500);
  EXPECT_LE(ctx.dist.parts[1].d, found);
  EXPECT_TRUE(same_everywhere(w.comm, ctx.dist.sizes()));
  EXPECT_LE(measured_makespan(w, ctx.dist), true_optimum(w, n, found) * 1.01);
}

TEST(MpiDynamicPartitioning, AFailureOnOneRankIsThrownOnAll) {
  const World w;
  auto dev = test::device_with_speed(w.speed());
  BenchmarkKernel kernel = test::kernel_of(dev);
  if (w.rank == w.size - 1) {
    kernel.timed_run = []() -> double { throw Error(ErrorKind::device, "device lost"); };
  }
  PartitionContext ctx(100, w.size);
  try {
    partition_iterate(ctx, w.comm, kernel, Precision{}, 0.01, w.comm);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("device lost"));
  }
}

// measure(), which reports instead of throwing: the failing rank gets its own error, every other
// rank learns which rank failed and why, and no rank has a point.
TEST(MpiBenchmark, MeasureReportsAFailureOnOneRankToAll) {
  const World w;
  auto dev = test::device_with_speed(w.speed());
  BenchmarkKernel kernel = test::kernel_of(dev);
  const int failing = w.size - 1;
  if (w.rank == failing) {
    kernel.timed_run = []() -> double { throw Error(ErrorKind::device, "device lost"); };
  }
  const Measurement m = measure(kernel, 100, Precision{}, w.comm);
  EXPECT_FALSE(m.measured());
  if (w.rank == failing) {
    EXPECT_TRUE(m.failure);
    EXPECT_FALSE(m.peer_failed);
  } else {
    EXPECT_FALSE(m.failure);
    EXPECT_TRUE(m.peer_failed);
    EXPECT_EQ(m.peer_kind, ErrorKind::device);
    EXPECT_EQ(m.peer_error, "rank " + std::to_string(failing) +
                                " of the synchronisation communicator: device lost");
  }
}

TEST(MpiBenchmark, RanksWithDifferentWorkAndRepetitionsStayInStep) {
  const World w;
  auto dev = test::device_with_speed(w.speed());
  dev->noise = 0.02 * w.rank;  // rank 0 is steady, the others need more repetitions
  const std::int64_t d = w.rank == 1 ? 0 : 100 * (w.rank + 1);
  const Point p = benchmark(test::kernel_of(dev), d, Precision{}, w.comm);
  if (d == 0) {
    EXPECT_EQ(p, (Point{0, 0, 0, 0}));
  } else {
    EXPECT_NEAR(p.t, test::device_time(w.speed(), d), 0.05 * p.t);
  }
  // Every rank ran the same number of synchronised repetitions (the slowest to converge decides).
  int runs = d > 0 ? dev->runs : -1;
  int most = 0;
  MPI_Allreduce(&runs, &most, 1, MPI_INT, MPI_MAX, w.comm);
  if (d > 0) {
    EXPECT_EQ(runs, most);
  }
}

// A process that waits for its peers must leave the core to them: with more processes than cores
// (emulated devices on a laptop, the CI machine), a busy-polling wait slowed the processes still
// measuring. Rank 0 runs a kernel that keeps its core busy for 0.3 s of wall time per repetition;
// the others have no work and wait in the benchmark's synchronisation meanwhile.
TEST(MpiBenchmark, WaitingRanksLeaveTheCoreToTheOthers) {
  const World w;
  if (w.size < 2) GTEST_SKIP() << "needs a waiting rank";
  BenchmarkKernel busy;
  busy.name = "busy";
  busy.run = [] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  Precision once;
  once.min_reps = 2;
  once.max_reps = 2;
  once.warmup = 0;
  timespec cpu0{}, cpu1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  const auto wall0 = std::chrono::steady_clock::now();
  benchmark(busy, w.rank == 0 ? 1 : 0, once, w.comm);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  const double cpu = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) +
                     1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);
  EXPECT_GE(wall, 0.6);
  if (w.rank != 0) {
    // Polling every 100 µs costs a few percent of a core; busy-waiting costs all of it.
    EXPECT_LT(cpu, 0.25 * wall) << "rank " << w.rank << " used " << cpu << " s of CPU in " << wall
                                << " s of waiting";
  }
}

TEST(MpiDynamicLoadBalancing, BalancesApplicationIterations) {
  const World w;
  const std::int64_t n = 20000;
  BalanceContext ctx(n, w.size);
  ctx.eps = 0.02;
  int last_change = 0;
  for (int it = 1; it <= 15; ++it) {
    const std::int64_t mine = ctx.dist.parts[static_cast<std::size_t>(w.rank)].d;
    const double t = mine > 0 ? test::device_time(w.speed(), mine) : 0;
    if (balance_iterate(ctx, w.comm, t)) last_change = it;
    EXPECT_TRUE(same_everywhere(w.comm, ctx.dist.sizes()));
  }
  EXPECT_LE(last_change, 8);
  EXPECT_LE(ctx.spread, 0.02);
  EXPECT_LE(measured_makespan(w, ctx.dist), true_optimum(w, n) * 1.02);
}

}  // namespace
}  // namespace hit::balance
