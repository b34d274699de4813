// hit-test-procs: 2 3 4
// hit-test-run-serial (placement compares measured speeds: no other test on its cores)
// Work packages placed by expected finish time, with the dispatch's MPI: a rank inside a long
// host kernel still answers the others' claims (they take packages of its queue while it
// computes); a stalled emulated device's packages are computed once and right; profiles measured
// in one run split the next run's queues by speed, and the results stay those of a serial loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "devices/rebind.hpp"
#include "hit/hit.hpp"

namespace {

using hit::index_t;
using hit::Shape;
using hit::Tile;

hit::Environment& env() {
  return hit::Environment::current();
}

constexpr index_t cols = 4;

double value_at(index_t i, index_t j) {
  return static_cast<double>(i) * 100.0 + static_cast<double>(j) + 0.5;
}

// out(i, j) = value_at(i, j); on `slow_rank`, the first launch whose rows do not include
// `probe_row` (the package every rank times first, for placement) sleeps `pause` first.
hit::Kernel<hit::View<double>> fill_rows(int slow_rank, index_t probe_row,
                                         std::chrono::milliseconds pause) {
  auto first = std::make_shared<std::atomic<bool>>(env().rank() == slow_rank);
  hit::Kernel<hit::View<double>> k("fill_rows");
  k.cpu([first, probe_row, pause](const hit::KernelContext& ctx, hit::View<double> out) {
    const hit::Box& b = ctx.block;
    const bool probe = b.begin[0] <= probe_row && probe_row < b.begin[0] + b.extent(0);
    if (!probe && first->exchange(false)) std::this_thread::sleep_for(pause);
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i)
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) out(i, j) = value_at(i, j);
  });
  return k;
}

// About 200 multiply-adds per element, the same on every device: y(i, j) = work_at(i, j).
double work_at(index_t i, index_t j) {
  double x = static_cast<double>(i + j);
  for (int k = 0; k < 200; ++k) x = x * 0.999 + 1.0;
  return x;
}

hit::Kernel<hit::View<double>> work_rows() {
  hit::Kernel<hit::View<double>> k("work_rows");
  k.cpu([](const hit::KernelContext& ctx, hit::View<double> y) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i)
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) y(i, j) = work_at(i, j);
  });
  return k;
}

// The elements of `out`, over every rank, that differ from expected(i, j).
template <class F>
std::int64_t wrong_values(Tile<double>& out, F expected) {
  std::int64_t wrong = 0;
  if (!out.is_null()) {
    out.for_each([&](const hit::Index& k, double& v) {
      if (v != expected(k[0], k[1])) ++wrong;
    });
  }
  return hit::allreduce(wrong, hit::ReduceOp::sum);
}

// Every rank's records: id, rank, start, end.
std::vector<hit::PackageRecord> all_records(const hit::PackageReport& r) {
  std::vector<double> mine;
  for (const hit::PackageRecord& p : r.computed)
    mine.insert(mine.end(),
                {static_cast<double>(p.id), static_cast<double>(p.rank), p.start_s, p.end_s});
  auto count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(env().size()));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, env().comm());
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<double> flat(static_cast<std::size_t>(offsets.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, flat.data(), counts.data(), offsets.data(),
                 MPI_DOUBLE, env().comm());
  std::vector<hit::PackageRecord> out;
  for (std::size_t i = 0; i + 4 <= flat.size(); i += 4)
    out.push_back({static_cast<index_t>(flat[i]), static_cast<int>(flat[i + 1]), flat[i + 2],
                   flat[i + 3], false});
  return out;
}

TEST(PackagePlacement, ARankInsideALongHostKernelStillAnswersClaims) {
  // Every rank on host cores. On rank 1, the first package it computes sleeps 1.5 s inside its
  // kernel (not counting the middle package, which every rank times first for placement). The
  // others run out of their own packages long before and claim the rest, which a survey of every
  // rank (rank 1's window included) and claims on rank 1's queue need rank 1 to answer. It answers
  // during the kernel (the cpu device calls the dispatch's progress hook from the thread that waits
  // for it), so every package the others compute ends before rank 1's long one does. Without that,
  // their claims waited for the end of its kernel.
  const int procs = env().size();
  const index_t per_rank = 12;
  const index_t rows = per_rank * procs;
  const Shape shape = Shape::extents({rows, cols});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  if (!out.is_null()) out.fill(-1.0);
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{1, 2});
  const auto report = packages.run(fill_rows(1, rows / 2, std::chrono::milliseconds(1500)),
                                   hit::partitioned_out(out));
  EXPECT_EQ(wrong_values(out, value_at), 0);
  const std::vector<hit::PackageRecord> records = all_records(report);
  ASSERT_EQ(static_cast<index_t>(records.size()), rows);
  double slow_end = -1;  // when rank 1's long package ended (its longest)
  double longest = 0;
  for (const auto& p : records) {
    if (p.rank == 1 && p.end_s - p.start_s > longest) {
      longest = p.end_s - p.start_s;
      slow_end = p.end_s;
    }
  }
  ASSERT_GT(longest, 1.0) << "rank 1 computed no package of its own";
  index_t elsewhere = 0;
  for (const auto& p : records) {
    if (p.rank == 1) continue;
    ++elsewhere;
    EXPECT_LT(p.end_s, slow_end) << "package " << p.id << " on rank " << p.rank
                                 << " waited for rank 1's kernel";
  }
  // The others took what rank 1 held no claim on: more than their own rows.
  EXPECT_GT(elsewhere, per_rank * (procs - 1));
}

// Binds this rank to its own emulated device for one test (restored afterwards).
class OnEmulated {
 public:
  explicit OnEmulated(const std::string& spec) : original_(hit::device(env()).binding()) {
    hit::DeviceBinding b = hit::parse_device_spec(spec, 1).front();
    b.index = env().rank();
    hit::rebind_device(env(), b);
  }
  ~OnEmulated() { hit::rebind_device(env(), original_); }
  OnEmulated(const OnEmulated&) = delete;
  OnEmulated& operator=(const OnEmulated&) = delete;

 private:
  hit::DeviceBinding original_;
};

// Every package of the run computed exactly once, over all ranks (collective).
void expect_each_package_once(const hit::PackageReport& report, index_t count, int run) {
  const auto records = all_records(report);
  std::vector<int> times(static_cast<std::size_t>(count), 0);
  for (const auto& p : records) ++times[static_cast<std::size_t>(p.id)];
  for (std::size_t id = 0; id < times.size(); ++id)
    EXPECT_EQ(times[id], 1) << "package " << id << " run " << run;
}

TEST(PackagePlacement, AStalledDeviceIsWorkedAroundAndEveryPackageIsRight) {
  // Rank 0's device stalls on its fourth execution (100 times its time); the others take what is
  // left. Every package once, the results right, and the run ends (the late package's result is
  // one the others did not compute: nothing is waited for twice).
  OnEmulated emu(env().rank() == 0 ? "emu:0(stall=3)" : "emu:0");
  const index_t rows = 40 * env().size();
  const Shape shape = Shape::extents({rows, 512});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{2, 2});
  for (int run = 0; run < 2; ++run) {
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0) << "run " << run;
    expect_each_package_once(report, packages.count(), run);
  }
}

TEST(PackagePlacement, MeasuredSpeedsSplitTheNextRunsQueues) {
  // Rank 0 is 8 times faster than the others (CPU-clocked emulated slowdowns, so that a shared
  // core does not blur them). After a first run measures them, a second run's rank 0 computes
  // more packages than any other rank, and the results are those of a serial loop both times.
  // Rows wide enough that a package takes the fast device over a millisecond, the shortest
  // probe placement tells apart from noise (512 columns, 0.2 ms, left every rank equally fast).
  OnEmulated emu(env().rank() == 0 ? "emu:0(slowdown=1,clock=cpu)"
                                   : "emu:0(slowdown=50,clock=cpu)");
  const index_t rows = 32 * env().size();
  const Shape shape = Shape::extents({rows, 8192});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{2, 2});
  std::vector<double> first;
  for (int run = 0; run < 2; ++run) {
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0) << "run " << run;
    std::vector<double> now;
    if (!out.is_null()) out.for_each([&](const hit::Index&, double& v) { now.push_back(v); });
    if (run == 0) first = now;
    EXPECT_EQ(now, first) << "run " << run;
    auto mine = static_cast<std::int64_t>(report.computed.size());
    const std::vector<std::int64_t> counts = hit::allgather(mine, env().comm());
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), packages.count());
    if (run == 1) {
      for (std::size_t r = 1; r < counts.size(); ++r)
        EXPECT_GT(counts[0], counts[r]) << "rank " << r << " run " << run;
    }
  }
}

TEST(PackagePlacement, ADeviceWhosePackagesKeepMissingWithdrawsAndIsMeasuredAgain) {
  if (env().size() < 2) GTEST_SKIP() << "needs a rank to take over";
  // Rank 0's device runs 100 times slower from its fourth execution on (after it was measured):
  // its packages keep missing (over 20 times its measured time, which processes sharing cores
  // lengthen while the CPU-clocked slowdown does not), it withdraws, what it held goes to the
  // others in a second round, and every package is computed once, right. Enough packages (a few
  // ms each) that the others are still computing when its second slow one ends. The next run
  // measures it again: placed by its speed now, it takes fewer packages than any other rank and
  // does not withdraw.
  OnEmulated emu(env().rank() == 0 ? "emu:0(slowdown=1,clock=cpu,change=100@3)"
                                   : "emu:0(slowdown=1,clock=cpu)");
  const index_t rows = 256 * env().size();
  const Shape shape = Shape::extents({rows, 4096});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{2, 2});
  for (int run = 0; run < 2; ++run) {
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0) << "run " << run;
    expect_each_package_once(report, packages.count(), run);
    const auto withdrawn = hit::allgather(static_cast<int>(report.withdrawn), env().comm());
    auto mine = static_cast<std::int64_t>(report.computed.size());
    const std::vector<std::int64_t> counts = hit::allgather(mine, env().comm());
    EXPECT_EQ(withdrawn[0], run == 0 ? 1 : 0) << "run " << run;
    for (std::size_t r = 1; r < withdrawn.size(); ++r)
      EXPECT_EQ(withdrawn[r], 0) << "rank " << r << " run " << run;
    if (run == 0) {
      // What it handed back went through a second round, marked rerouted.
      auto rerouted = static_cast<std::int64_t>(
          std::count_if(report.computed.begin(), report.computed.end(),
                        [](const hit::PackageRecord& p) { return p.rerouted; }));
      rerouted = hit::allreduce(rerouted, hit::ReduceOp::sum);
      auto handed = static_cast<std::int64_t>(report.abandoned.size());
      handed = hit::allreduce(handed, hit::ReduceOp::sum);
      EXPECT_EQ(rerouted, handed);
      EXPECT_EQ(report.rounds, handed > 0 ? 2 : 1);
    } else {
      for (std::size_t r = 1; r < counts.size(); ++r)
        EXPECT_LT(counts[0], counts[r]) << "rank " << r;
    }
  }
}

TEST(PackagePlacement, ADeviceDelayedNowAndThenDoesNotWithdraw) {
  if (env().size() < 2) GTEST_SKIP() << "needs a rank to take over";
  // Rank 0's fourth and seventh executions alone take 100 times as long (as a host whose cores
  // other jobs share delays a package now and then): two packages miss, but not in a row, so it
  // keeps its packages, and no rank withdraws. A loaded machine can delay a package between them
  // too (then two in a row missed, rightly), so a fresh device tries again, up to three times;
  // under a rule that counted misses per round every attempt withdraws.
  const index_t rows = 256 * env().size();
  const Shape shape = Shape::extents({rows, 4096});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  for (int attempt = 0; attempt < 3; ++attempt) {
    OnEmulated emu(env().rank() == 0 ? "emu:0(slowdown=1,clock=cpu,change=100@3;1@4;100@6;1@7)"
                                     : "emu:0(slowdown=1,clock=cpu)");
    hit::WorkPackages packages(env(), shape, hit::PackageOptions{2, 2});
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0);
    expect_each_package_once(report, packages.count(), 0);
    const auto withdrawn = hit::allgather(static_cast<int>(report.withdrawn), env().comm());
    if (std::count(withdrawn.begin(), withdrawn.end(), 1) > 0 && attempt < 2) continue;
    for (std::size_t r = 0; r < withdrawn.size(); ++r)
      EXPECT_EQ(withdrawn[r], 0) << "rank " << r << ", attempt " << attempt;
    // It computed past both delays (the test means nothing otherwise).
    if (env().rank() == 0) {
      EXPECT_GE(report.computed.size(), 8U);
    }
    EXPECT_EQ(report.rounds, 1);
    break;
  }
}

TEST(PackagePlacement, ADeviceTooSlowForOnePackageComputesNone) {
  if (env().size() < 2) GTEST_SKIP() << "needs a slow rank beside the fast one";
  // Rank 0 is fast; the others are 5000 times slower (CPU-clocked, so a shared core does not
  // blur it): one of their packages would end long after rank 0 alone had computed all of them.
  // They take no part in the round (no claim, no survey of them), the fast device computes every
  // package, and the results are right, in the run that measured them and in the next.
  OnEmulated emu(env().rank() == 0 ? "emu:0(slowdown=1,clock=cpu)"
                                   : "emu:0(slowdown=5000,clock=cpu)");
  const index_t rows = 32 * env().size();
  const Shape shape = Shape::extents({rows, 512});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{2, 2});
  for (int run = 0; run < 2; ++run) {
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0) << "run " << run;
    auto mine = static_cast<std::int64_t>(report.computed.size());
    const std::vector<std::int64_t> counts = hit::allgather(mine, env().comm());
    EXPECT_EQ(counts[0], packages.count()) << "run " << run;
    if (env().rank() != 0) {
      EXPECT_EQ(report.stolen, 0) << "run " << run;
      EXPECT_EQ(report.busy_s, 0.0) << "run " << run;
    }
  }
}

TEST(PackagePlacement, AFasterDeviceLaunchesSeveralOfTheSlowDevicesPackagesAtOnce) {
  if (env().size() < 2) GTEST_SKIP() << "needs a slow rank beside the fast one";
  // Rank 0 is 50 times faster than the others (CPU-clocked). With batch=auto a package is sized
  // for the slow devices and rank 0 launches several neighbouring ones at once: its batch is the
  // largest, every launch holds at most its rank's batch of consecutive packages, every package
  // is computed once and right. Without it every launch is one package.
  OnEmulated emu(env().rank() == 0 ? "emu:0(slowdown=1,clock=cpu)"
                                   : "emu:0(slowdown=50,clock=cpu)");
  const index_t rows = 64 * env().size();
  const Shape shape = Shape::extents({rows, 8192});
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  for (const char* spec : {"workPackages:size=auto,batch=auto", "workPackages:size=auto"}) {
    SCOPED_TRACE(spec);
    const bool batched = std::string(spec).find("batch=auto") != std::string::npos;
    hit::WorkPackages packages(env(), shape, hit::PackageOptions::parse(spec));
    if (!out.is_null()) out.fill(-1.0);
    const auto report = packages.run(work_rows(), hit::partitioned_out(out));
    EXPECT_EQ(wrong_values(out, work_at), 0);
    EXPECT_EQ(report.batch, packages.batch());
    const std::vector<index_t> batches = hit::allgather(packages.batch(), env().comm());
    if (batched) {
      for (std::size_t r = 1; r < batches.size(); ++r)
        EXPECT_GT(batches[0], batches[r]) << "rank " << r;
    } else {
      for (const index_t b : batches) EXPECT_EQ(b, 1);
    }
    // Each package once, over every rank's launches.
    std::vector<std::int64_t> times(static_cast<std::size_t>(packages.count()), 0);
    for (const hit::PackageRecord& p : report.computed) {
      EXPECT_GE(p.packages, 1);
      EXPECT_LE(p.packages, packages.batch());
      const Shape launched = packages.rows(p);
      EXPECT_EQ(launched[0].begin(), packages.package(p.id)[0].begin());
      EXPECT_EQ(launched[0].end(), packages.package(p.id + p.packages - 1)[0].end());
      for (index_t id = p.id; id < p.id + p.packages; ++id) ++times[static_cast<std::size_t>(id)];
    }
    MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_INT64_T, MPI_SUM,
                  env().comm());
    EXPECT_TRUE(std::all_of(times.begin(), times.end(), [](std::int64_t t) { return t == 1; }));
  }
}

}  // namespace
