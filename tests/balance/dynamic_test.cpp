// Dynamic partitioning and load balancing, serially, with simulated devices of relative speeds
// 1, 4 and 14 (Torres et al. measured ratios of about 3.8 and 14 between real devices).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hit/balance/dynamic_balance.hpp"
#include "hit/balance/dynamic_partition.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"
#include "virtual_device.hpp"

namespace hit::balance {
using namespace hit::fpm;  // the models the tests build and compare
namespace {

using test::device_time;
using test::device_with_speed;
using test::kernel_of;
using test::true_model;
using ::testing::HasSubstr;

const std::vector<double> speeds = {1, 4, 14};

std::vector<BenchmarkKernel> kernels_for(
    const std::vector<std::shared_ptr<test::VirtualDevice>>& devs) {
  std::vector<BenchmarkKernel> out;
  for (const auto& d : devs) out.push_back(kernel_of(d));
  return out;
}

double true_optimum(std::int64_t n, const std::vector<std::int64_t>& caps = {}) {
  std::vector<Model> models;
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    models.push_back(true_model(speeds[i], n, i < caps.size() ? caps[i] : unlimited));
  }
  return partition_exact(models, n).makespan;
}

double measured_makespan(const Distribution& d) {
  double worst = 0;
  for (std::size_t i = 0; i < d.parts.size(); ++i) {
    worst = std::max(worst, d.parts[i].d > 0 ? device_time(speeds[i], d.parts[i].d) : 0.0);
  }
  return worst;
}

TEST(DynamicPartitioning, ConvergesOnSpeeds1_4_14) {
  const std::int64_t n = 20000;
  for (const char* algorithm : {"geometric", "numerical", "exact"}) {
    std::vector<std::shared_ptr<test::VirtualDevice>> devs;
    for (double s : speeds) devs.push_back(device_with_speed(s));
    const auto kernels = kernels_for(devs);
    PartitionContext ctx(n, 3, algorithm);
    const DynamicStatus status = partition_dynamic(ctx, kernels, Precision{}, 0.01, 12);
    EXPECT_EQ(status, DynamicStatus::converged) << algorithm;
    EXPECT_LE(ctx.iterations, 6) << algorithm;
    EXPECT_LE(ctx.spread, 0.01) << algorithm;
    EXPECT_EQ(ctx.dist.sizes().size(), 3u);
    std::int64_t sum = 0;
    for (const Part& p : ctx.dist.parts) sum += p.d;
    EXPECT_EQ(sum, n);
    // The partial models found a distribution within 1 % of the true optimum.
    EXPECT_LE(measured_makespan(ctx.dist), true_optimum(n) * 1.01) << algorithm;
    // Partial models: one point per iteration at most, not a full model.
    for (const Model& m : ctx.models)
      EXPECT_LE(static_cast<int>(m.points().size()), ctx.iterations);
    // The fastest device does most of the work.
    EXPECT_GT(ctx.dist.parts[2].d, 10 * ctx.dist.parts[0].d);
  }
}

TEST(DynamicPartitioning, TimingSpikesDoNotChangeTheResult) {
  const std::int64_t n = 20000;
  auto run = [&](int spike_every) {
    std::vector<std::shared_ptr<test::VirtualDevice>> devs;
    for (double s : speeds) {
      devs.push_back(device_with_speed(s));
      devs.back()->spike_every = spike_every;
    }
    const auto kernels = kernels_for(devs);
    PartitionContext ctx(n, 3);
    partition_dynamic(ctx, kernels, Precision{}, 0.01, 12);
    return ctx;
  };
  const PartitionContext clean = run(0);
  const PartitionContext spiky = run(4);  // every fourth run of every device is 10× slower
  EXPECT_EQ(spiky.status, DynamicStatus::converged);
  EXPECT_EQ(spiky.dist.sizes(), clean.dist.sizes());
  EXPECT_EQ(spiky.iterations, clean.iterations);
}

TEST(DynamicPartitioning, MemoryLimitLowersTheCapacity) {
  const std::int64_t n = 20000;
  std::vector<std::shared_ptr<test::VirtualDevice>> devs;
  for (double s : speeds) devs.push_back(device_with_speed(s));
  devs[2]->memory = 9000;  // the fastest device cannot hold its optimal share (~14000)
  const auto kernels = kernels_for(devs);
  PartitionContext ctx(n, 3);
  const DynamicStatus status = partition_dynamic(ctx, kernels, Precision{}, 0.01, 15);
  EXPECT_NE(status, DynamicStatus::running);
  EXPECT_LE(ctx.iterations, 10);
  // The capacity is found by bisection between the largest size that ran and one that failed.
  const std::int64_t found = ctx.models[2].capacity();
  EXPECT_LE(found, 9000);
  EXPECT_GE(found, 9000 / 2);
  EXPECT_LE(ctx.dist.parts[2].d, found);
  // Within that capacity the distribution is close to optimal.
  EXPECT_LE(measured_makespan(ctx.dist), true_optimum(n, {unlimited, unlimited, found}) * 1.01);
}

TEST(DynamicPartitioning, StallsWhenNothingBetterExists) {
  // Speeds 1 and 1.5 with n = 2: (1, 1) is optimal although its times differ by a third.
  auto slow = std::make_shared<test::VirtualDevice>();
  slow->time = [](std::int64_t d) { return static_cast<double>(d); };
  auto fast = std::make_shared<test::VirtualDevice>();
  fast->time = [](std::int64_t d) { return static_cast<double>(d) / 1.5; };
  const std::vector<BenchmarkKernel> kernels = {kernel_of(slow), kernel_of(fast)};
  PartitionContext ctx(2, 2);
  EXPECT_EQ(partition_dynamic(ctx, kernels, Precision{}, 0.05), DynamicStatus::stalled);
  EXPECT_EQ(ctx.iterations, 1);
  EXPECT_EQ(ctx.dist.sizes(), (std::vector<std::int64_t>{1, 1}));
  EXPECT_NEAR(ctx.spread, 0.5, 1e-12);
}

TEST(DynamicPartitioning, FewerUnitsThanDevicesProbesEveryDevice) {
  std::vector<std::shared_ptr<test::VirtualDevice>> devs;
  for (double s : {1.0, 4.0, 14.0, 2.0}) devs.push_back(device_with_speed(s));
  const auto kernels = kernels_for(devs);
  PartitionContext ctx(3, 4);
  const DynamicStatus status = partition_dynamic(ctx, kernels, Precision{}, 0.01, 10);
  EXPECT_NE(status, DynamicStatus::running);
  std::int64_t sum = 0;
  for (const Part& p : ctx.dist.parts) sum += p.d;
  EXPECT_EQ(sum, 3);
  EXPECT_GT(devs[2]->setups, 0) << "the fastest device was never measured";
}

// A device with a memory cliff: `slow` times slower than its `fast` self beyond `cliff` units.
// Time per unit in milliseconds: 1 (device 0), 3.8 (device 1) and the cliff device.
struct CliffCase {
  double fast, slow;
  std::int64_t cliff;
};

double cliff_time(std::size_t device, const CliffCase& c, std::int64_t d) {
  const double per_unit = device == 0 ? 1 : device == 1 ? 3.8 : (d <= c.cliff ? c.fast : c.slow);
  return 1e-3 * per_unit * static_cast<double>(d);
}

std::vector<BenchmarkKernel> cliff_kernels(const CliffCase& c) {
  std::vector<BenchmarkKernel> out;
  for (std::size_t i = 0; i < 3; ++i) {
    auto dev = std::make_shared<test::VirtualDevice>();
    dev->time = [i, c](std::int64_t d) { return cliff_time(i, c, d); };
    out.push_back(kernel_of(dev));
  }
  return out;
}

// The optimum, from dense true models (the cliff is a jump in time, which exact handles).
double cliff_optimum(const CliffCase& c, std::int64_t n) {
  std::vector<Model> models;
  for (std::size_t i = 0; i < 3; ++i) {
    std::vector<Point> pts;
    for (std::int64_t d = 1; d <= n; ++d) pts.push_back(Point{d, cliff_time(i, c, d), 1, 0});
    models.emplace_back(pts);
  }
  return partition_exact(models, n).makespan;
}

double cliff_makespan(const CliffCase& c, const Distribution& dist) {
  double worst = 0;
  for (std::size_t i = 0; i < 3; ++i) worst = std::max(worst, cliff_time(i, c, dist.parts[i].d));
  return worst;
}

TEST(DynamicPartitioning, FindsTheBalanceBelowAMemoryCliff) {
  // n/p = 320 lies beyond the cliff (287), the balanced share of the cliff device (231) below it.
  // The straight line between a point below the cliff and the one beyond it predicts the device
  // far slower than it is; gap exploration probes the gap instead of creeping up the line (which
  // took more than 30 steps).
  const CliffCase c{2.5, 14, 287};
  for (const char* algorithm : {"geometric", "numerical", "exact"}) {
    PartitionContext ctx(960, 3, algorithm);
    const DynamicStatus status = partition_dynamic(ctx, cliff_kernels(c), Precision{}, 0.02, 30);
    EXPECT_EQ(status, DynamicStatus::converged) << algorithm;
    EXPECT_LE(ctx.iterations, 6) << algorithm;
    EXPECT_EQ(ctx.dist.sizes(), (std::vector<std::int64_t>{577, 152, 231})) << algorithm;
    EXPECT_LE(cliff_makespan(c, ctx.dist), cliff_optimum(c, 960) * 1.001) << algorithm;
  }
}

TEST(DynamicPartitioning, LocatesABindingMemoryCliff) {
  // Below the cliff the device is as fast as device 0: the optimum fills it up to the cliff and
  // balances the others, so its time stays below theirs and the times never agree within eps.
  const CliffCase c{1, 14, 287};
  for (const char* algorithm : {"geometric", "numerical"}) {
    PartitionContext ctx(960, 3, algorithm);
    const DynamicStatus status = partition_dynamic(ctx, cliff_kernels(c), Precision{}, 0.02, 30);
    EXPECT_NE(status, DynamicStatus::not_converged) << algorithm;
    EXPECT_LE(ctx.iterations, 10) << algorithm;
    EXPECT_LE(ctx.dist.parts[2].d, 287) << algorithm;
    EXPECT_GE(ctx.dist.parts[2].d, 280) << algorithm;
    EXPECT_LE(cliff_makespan(c, ctx.dist), cliff_optimum(c, 960) * 1.01) << algorithm;
  }
}

TEST(DynamicPartitioning, ProbesAboveALowerPointTheLineRoundsDownTo) {
  // Seen in hit-bench-fpm: the cliff device measured at 345 units (fast) and 370 (beyond its cliff
  // at 359); the line between them balances at 345.7, which rounds down to the point already
  // measured. Without a probe of the gap the loop stalled there, 12 units short of the cliff.
  const CliffCase c{1, 14, 359};
  PartitionContext ctx(960, 3);
  const std::vector<std::int64_t> measured = {483, 132, 345};
  for (std::size_t i = 0; i < 3; ++i) {
    ctx.models[i].add(Point{measured[i], cliff_time(i, c, measured[i]), 3, 0});
  }
  ctx.models[2].add(Point{370, cliff_time(2, c, 370), 3, 0});
  ctx.dist = evaluate(ctx.models, measured, "geometric");
  ASSERT_EQ(partition("geometric", ctx.models, 960).parts[2].d, 345);
  partition_iterate(ctx, cliff_kernels(c), Precision{}, 0.02);
  EXPECT_EQ(ctx.status, DynamicStatus::running);
  EXPECT_GT(ctx.dist.parts[2].d, 345);
  EXPECT_LE(ctx.dist.parts[2].d, 357);  // at most the middle of the gap
  // Carried on, the loop fills the device up to its cliff.
  partition_dynamic(ctx, cliff_kernels(c), Precision{}, 0.02, 15);
  EXPECT_GE(ctx.dist.parts[2].d, 355);
  EXPECT_LE(ctx.dist.parts[2].d, 359);
}

TEST(DynamicPartitioning, SmoothModelsAreNotProbed) {
  // Speeds that change by less than half between measured points: every proposal is the
  // partitioner's own (gap exploration leaves it alone), unless the partitioner proposes the very
  // distribution just measured (then the step is proportional to the measured speeds).
  std::vector<std::shared_ptr<test::VirtualDevice>> devs;
  for (double s : speeds) devs.push_back(device_with_speed(s));
  const auto kernels = kernels_for(devs);
  PartitionContext ctx(20000, 3);
  int steps = 0, own = 0;
  std::vector<std::int64_t> measured = partition_even(ctx.models, 20000).sizes();
  while (partition_iterate(ctx, kernels, Precision{}, 0.001) == DynamicStatus::running) {
    const auto partitioner = partition("geometric", ctx.models, 20000).sizes();
    if (partitioner != measured) {
      EXPECT_EQ(ctx.dist.sizes(), partitioner) << ctx.iterations;
      ++own;
    }
    measured = ctx.dist.sizes();
    ++steps;
    ASSERT_LT(steps, 20);
  }
  EXPECT_GE(own, 2);
}

// Shares a few units apart are one neighbourhood: the second point is averaged into the first
// (weighted by repetitions) instead of making a segment whose slope is noise.
TEST(DynamicPartitioning, NearbyMeasurementsAreMerged) {
  for (const double within : {0.02, 0.0}) {
    std::vector<std::shared_ptr<test::VirtualDevice>> devs;
    for (double s : {1.0, 1.0}) devs.push_back(device_with_speed(s));
    devs[0]->noise = 0.03;  // two different times at nearby sizes
    const auto kernels = kernels_for(devs);
    Precision fixed;
    fixed.min_reps = 4;
    fixed.max_reps = 4;
    PartitionContext ctx(2000, 2);
    ctx.merge_within = within;
    partition_iterate(ctx, kernels, fixed, 0.0);
    ASSERT_EQ(ctx.models[0].points().size(), 1u);
    const Point first = ctx.models[0].points()[0];
    ctx.status = DynamicStatus::running;
    const std::vector<std::int64_t> nearby = {1010, 990};  // 1 % from the points measured
    ctx.dist = evaluate(ctx.models, nearby, "geometric");
    partition_iterate(ctx, kernels, fixed, 0.0);
    const auto& pts = ctx.models[0].points();
    if (within > 0) {
      ASSERT_EQ(pts.size(), 1u) << "merged";
      EXPECT_EQ(pts[0].d, 1005);  // the mean of 1000 and 1010, 4 repetitions each
      EXPECT_EQ(pts[0].reps, 8);
      EXPECT_DOUBLE_EQ(pts[0].t, (first.t + ctx.measured[0].t) / 2);
      EXPECT_EQ(ctx.models[1].points().size(), 1u);  // 990 is within 2 % of 1000 too
    } else {
      ASSERT_EQ(pts.size(), 2u) << "kept apart";
      EXPECT_EQ(pts[0], first);
      EXPECT_EQ(pts[1].d, 1010);
    }
  }
}

// Models that see no better distribution than the one measured, while the devices measured
// together disagree (a machine whose speed changed since the models' points were taken): the next
// step follows the speeds measured in this step instead of stalling.
TEST(DynamicPartitioning, MeasuredDisagreementOutranksStaleModels) {
  auto a = device_with_speed(0.92);  // now 8 % slower than b
  auto b = device_with_speed(1);
  const std::vector<BenchmarkKernel> kernels = {kernel_of(a), kernel_of(b)};
  Precision fixed;
  fixed.min_reps = 3;
  fixed.max_reps = 3;
  for (const double within : {0.02, 0.0}) {
    PartitionContext ctx(2000, 2);
    ctx.merge_within = within;
    // A point of device 0 taken earlier (at 1010 units, when the machine was faster: its speed
    // within the ratio that counts as noise), chosen so that merged with the new measurement at
    // 1000 it predicts exactly b's time: the models then see (1000, 1000) as balanced.
    const double t0 = device_time(0.92, 1000), t1 = device_time(1, 1000);
    const double stale = 2 * t1 * 1005.0 / 1000.0 - t0;
    ctx.models[0].add(Point{1010, stale, 3, 0});
    ctx.models[1].add(Point{1000, t1, 3, 0});
    ctx.dist = evaluate(ctx.models, std::vector<std::int64_t>{1000, 1000}, "geometric");
    partition_iterate(ctx, kernels, fixed, 0.02);
    EXPECT_NEAR(ctx.spread, t0 / t1 - 1, 1e-9);  // measured: device 0 is the slower
    const auto next = ctx.dist.sizes();
    EXPECT_EQ(ctx.status, DynamicStatus::running) << within;
    EXPECT_EQ(next[0] + next[1], 2000);
    if (within > 0) {
      // Stale models keep (1000, 1000); the speeds measured together do not.
      EXPECT_EQ(partition("geometric", ctx.models, 2000).sizes(),
                (std::vector<std::int64_t>{1000, 1000}));
      EXPECT_NEAR(static_cast<double>(next[0]), 2000 * (1000 / t0) / (1000 / t0 + 1000 / t1), 1);
    } else {
      EXPECT_LT(next[0], 1000);  // unmerged, the models see the slowdown themselves
    }
  }
}

// Two nearby points whose speeds differ by a factor are the two sides of a cliff, not noise.
TEST(DynamicPartitioning, PointsAcrossACliffAreNotMerged) {
  auto cliff = std::make_shared<test::VirtualDevice>();
  cliff->time = [](std::int64_t d) { return static_cast<double>(d) * (d <= 1005 ? 1e-3 : 3e-3); };
  auto plain = std::make_shared<test::VirtualDevice>();
  plain->time = [](std::int64_t d) { return static_cast<double>(d) * 1e-3; };
  const std::vector<BenchmarkKernel> kernels = {kernel_of(cliff), kernel_of(plain)};
  PartitionContext ctx(2000, 2);
  partition_iterate(ctx, kernels, Precision{}, 0.0);
  ctx.status = DynamicStatus::running;
  ctx.dist = evaluate(ctx.models, std::vector<std::int64_t>{1010, 990}, "geometric");
  partition_iterate(ctx, kernels, Precision{}, 0.0);
  ASSERT_EQ(ctx.models[0].points().size(), 2u);
  EXPECT_EQ(ctx.models[0].points()[1].d, 1010);
  EXPECT_DOUBLE_EQ(ctx.models[0].points()[1].t, 3.03);
  EXPECT_EQ(ctx.models[1].points().size(), 1u);  // same speed: merged
}

// With noisy measurements the loop still ends by itself, near the true optimum.
TEST(DynamicPartitioning, NoisyDevicesEndNearTheOptimum) {
  const std::int64_t n = 20000;
  std::vector<std::shared_ptr<test::VirtualDevice>> devs;
  for (double s : speeds) {
    devs.push_back(device_with_speed(s));
    devs.back()->noise = 0.06;
  }
  const auto kernels = kernels_for(devs);
  PartitionContext ctx(n, 3);
  const DynamicStatus status = partition_dynamic(ctx, kernels, Precision{}, 0.01, 15);
  EXPECT_NE(status, DynamicStatus::running);
  EXPECT_LE(measured_makespan(ctx.dist), true_optimum(n) * 1.03) << to_string(status);
  // The distribution kept: of those measured, the one the final models predict fastest.
  double predicted_best = std::numeric_limits<double>::infinity();
  std::vector<std::int64_t> kept;
  for (const auto& d : ctx.tried) {
    const double m = evaluate(ctx.models, d).makespan;
    if (m < predicted_best) {
      predicted_best = m;
      kept = d;
    }
  }
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(ctx.best.sizes(), kept);
  if (status == DynamicStatus::not_converged || status == DynamicStatus::cycling) {
    EXPECT_EQ(ctx.dist.sizes(), kept);
  }
}

TEST(DynamicPartitioning, BadUse) {
  EXPECT_THROW(PartitionContext(10, 0), Error);
  EXPECT_THROW(PartitionContext(-1, 2), Error);
  PartitionContext ctx(10, 2);
  const std::vector<BenchmarkKernel> one = {kernel_of(device_with_speed(1))};
  try {
    partition_iterate(ctx, one, Precision{}, 0.01);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 devices but 1"));
  }
  const std::vector<BenchmarkKernel> two = {kernel_of(device_with_speed(1)),
                                            kernel_of(device_with_speed(2))};
  EXPECT_THROW(partition_iterate(ctx, two, Precision{}, -0.1), Error);
  ctx.merge_within = 1.5;
  EXPECT_THROW(partition_iterate(ctx, two, Precision{}, 0.01), Error);
}

TEST(DynamicLoadBalancing, BalancesFromApplicationTimes) {
  const std::int64_t n = 20000;
  BalanceContext ctx(n, 3);
  ctx.eps = 0.02;
  int changes = 0, last_change = 0;
  for (int it = 1; it <= 20; ++it) {
    std::vector<double> t(3);
    for (std::size_t i = 0; i < 3; ++i) {
      // The application's iteration time: the device time with ±0.5 % deterministic jitter.
      t[i] = ctx.dist.parts[i].d > 0 ? device_time(speeds[i], ctx.dist.parts[i].d) *
                                           (1 + 0.005 * std::sin(it * 2.3 + i))
                                     : 0;
    }
    if (balance_iterate(ctx, t)) {
      ++changes;
      last_change = it;
    }
  }
  EXPECT_GE(changes, 1);
  EXPECT_LE(last_change, 8) << "still redistributing late";
  EXPECT_LE(ctx.spread, 0.03);
  EXPECT_LE(measured_makespan(ctx.dist), true_optimum(n) * 1.03);
}

TEST(DynamicLoadBalancing, MigrationCostGatesRedistribution) {
  BalanceContext ctx(20000, 3);
  ctx.migration_cost = 1e9;
  ctx.remaining_iterations = 10;
  const std::vector<std::int64_t> even = ctx.dist.sizes();
  for (int it = 0; it < 5; ++it) {
    std::vector<double> t(3);
    for (std::size_t i = 0; i < 3; ++i) t[i] = device_time(speeds[i], ctx.dist.parts[i].d);
    EXPECT_FALSE(balance_iterate(ctx, t));
  }
  EXPECT_EQ(ctx.dist.sizes(), even);
  EXPECT_GT(ctx.spread, 1);
  // The same with a cheap migration moves at once.
  ctx.migration_cost = 0.1;
  std::vector<double> t(3);
  for (std::size_t i = 0; i < 3; ++i) t[i] = device_time(speeds[i], ctx.dist.parts[i].d);
  EXPECT_TRUE(balance_iterate(ctx, t));
}

TEST(DynamicLoadBalancing, UnitsMovedCountsWhatChangesDevice) {
  // Shares in device order, contiguous: what each device's new range holds outside its old one.
  EXPECT_EQ(units_moved({10, 10, 10}, {10, 10, 10}), 0);
  EXPECT_EQ(units_moved({10, 10, 10}, {12, 8, 10}), 2);   // device 0 takes 2 of device 1's
  EXPECT_EQ(units_moved({10, 10, 10}, {5, 10, 15}), 10);  // every boundary shifts by 5
  EXPECT_EQ(units_moved({30, 0, 0}, {0, 0, 30}), 30);     // all of it, past an idle device
  EXPECT_EQ(units_moved({0, 20}, {10, 10}), 10);          // a device comes back
  EXPECT_EQ(units_moved({}, {}), 0);
}

TEST(DynamicLoadBalancing, PerUnitMigrationCostWeighsTheCandidatesMove) {
  // A cost per unit moved lets a redistribution through whose flat cost would forbid it, and
  // stops one whose units would cost more than the gain.
  const auto first_step = [](double per_unit) {
    BalanceContext ctx(20000, 3);
    ctx.migration_cost = 1e9;  // ignored once a per-unit cost is set
    ctx.migration_cost_per_unit = per_unit;
    ctx.remaining_iterations = 10;
    std::vector<double> t(3);
    for (std::size_t i = 0; i < 3; ++i) t[i] = device_time(speeds[i], ctx.dist.parts[i].d);
    return balance_iterate(ctx, t);
  };
  EXPECT_TRUE(first_step(1e-9));
  EXPECT_FALSE(first_step(1e9));
}

// Two devices at the shares of `ctx`, d / (1000 × speed) seconds each.
std::vector<double> two_devices(const BalanceContext& ctx, double s0, double s1) {
  return {static_cast<double>(ctx.dist.parts[0].d) / (1000 * s0),
          static_cast<double>(ctx.dist.parts[1].d) / (1000 * s1)};
}

TEST(DynamicLoadBalancing, MoveCostReplacesTheOtherCostsWhenSet) {
  using Sizes = std::vector<std::int64_t>;
  std::vector<Sizes> asked;
  const auto first_step = [&](double cost) {
    BalanceContext ctx(20000, 3);
    ctx.migration_cost_per_unit = 1e-12;  // both ignored once move_cost is set
    ctx.migration_cost = 1e-12;
    ctx.remaining_iterations = 10;
    ctx.move_cost = [&asked, cost](const Sizes& from, const Sizes& to) {
      asked = {from, to};
      return cost;
    };
    std::vector<double> t(3);
    for (std::size_t i = 0; i < 3; ++i) t[i] = device_time(speeds[i], ctx.dist.parts[i].d);
    return balance_iterate(ctx, t);
  };
  EXPECT_FALSE(first_step(1e9));
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0], BalanceContext(20000, 3).dist.sizes()) << "from: the distribution measured";
  EXPECT_NE(asked[1], asked[0]) << "to: the candidate";
  EXPECT_TRUE(first_step(0));
}

TEST(DynamicLoadBalancing, ACorrectionWithinEpsKeepsTheWindowScaled) {
  // Device 1 is 15 % faster: the spread exceeds eps = 0.1, the correction (7 % of each share)
  // does not, so each window keeps its time, scaled to the new share.
  BalanceContext ctx(1000, 2);
  ctx.eps = 0.1;
  ASSERT_TRUE(balance_iterate(ctx, two_devices(ctx, 1, 1.15)));
  const std::vector<std::int64_t> rows = ctx.dist.sizes();
  ASSERT_EQ(ctx.recent[0].size(), 1u);
  ASSERT_EQ(ctx.recent[1].size(), 1u);
  EXPECT_NEAR(ctx.recent[0][0], static_cast<double>(rows[0]) / 1000, 1e-12);
  EXPECT_NEAR(ctx.recent[1][0], static_cast<double>(rows[1]) / 1150, 1e-12);
  // A large move (device 1 three times as fast) starts the windows again.
  BalanceContext far(1000, 2);
  far.eps = 0.1;
  ASSERT_TRUE(balance_iterate(far, two_devices(far, 1, 3)));
  EXPECT_TRUE(far.recent[0].empty());
  EXPECT_TRUE(far.recent[1].empty());
}

TEST(DynamicLoadBalancing, TheNoiseEstimateOutlastsAMoveThatRestartsEveryWindow) {
  BalanceContext ctx(1000, 2);
  ctx.window = 3;
  ctx.migration_cost = 1e9;  // no move while the noise is measured
  for (const double jitter : {1.0, 1.2, 0.9}) {
    std::vector<double> t = two_devices(ctx, 1, 3);
    t[0] *= jitter;
    EXPECT_FALSE(balance_iterate(ctx, t));
  }
  // Device 0's times 0.5, 0.6, 0.45: the standard error of their median, from their range
  // (d2 = 1.693 for three), relative to the median.
  const double noise = 1.2533 * (0.6 - 0.45) / 1.693 / std::sqrt(3.0) / 0.5;
  EXPECT_NEAR(ctx.noise, noise, 1e-12);
  ctx.migration_cost = 0;
  ASSERT_TRUE(balance_iterate(ctx, two_devices(ctx, 1, 3)));
  ASSERT_TRUE(ctx.recent[0].empty() && ctx.recent[1].empty());
  static_cast<void>(balance_iterate(ctx, two_devices(ctx, 1, 3)));
  EXPECT_NEAR(ctx.noise, noise, 1e-12) << "one time per window tells nothing of the noise";
}

TEST(DynamicLoadBalancing, ALongWindowsNoiseUsesTheRangeOfThatManyTimes) {
  // Twenty times at one share: the deviation is their range over d2 = 3.735, the expected range
  // of twenty normal times (not ten's 3.078, which would overstate the noise by a fifth).
  BalanceContext ctx(1000, 2);
  ctx.window = 20;
  ctx.migration_cost = 1e9;
  for (int step = 0; step < 20; ++step) {
    std::vector<double> t = two_devices(ctx, 1, 1);
    t[0] *= step == 7 ? 1.1 : step == 12 ? 0.9 : 1.0;
    EXPECT_FALSE(balance_iterate(ctx, t));
  }
  ASSERT_EQ(ctx.recent[0].size(), 20u);
  const double noise = 1.2533 * (0.2 * 0.5) / 3.735 / std::sqrt(20.0) / 0.5;
  EXPECT_NEAR(ctx.noise, noise, 1e-12);
  // A twenty-first time pushes the first out.
  static_cast<void>(balance_iterate(ctx, two_devices(ctx, 1, 1)));
  EXPECT_EQ(ctx.recent[0].size(), 20u);
}

TEST(DynamicLoadBalancing, ASpreadWithinTheRangeOfChanceMovesNothing) {
  // Three devices of equal speed, five times each with a range of 20 % of their median: each
  // median's standard error is 1.2533 · 0.2 / 2.326 / √5 = 4.8 %, and three such medians spread
  // beyond 2.90 of it (14 %) one step in ten. Device 1's median 10 % above the others is within
  // that; 20 % is not.
  const auto fifth_step_moves = [](double slower) {
    BalanceContext ctx(3000, 3);
    ctx.window = 5;
    ctx.migration_cost = 1e9;  // no move while the windows fill
    const double jitter[] = {1.0, 0.9, 1.1, 1.0, 1.0};
    bool moved = false;
    for (int step = 0; step < 5; ++step) {
      if (step == 4) ctx.migration_cost = 0;
      std::vector<double> t(3, jitter[step]);
      t[1] *= slower;
      moved = balance_iterate(ctx, t);
      if (step < 4) {
        EXPECT_FALSE(moved);
      }
    }
    EXPECT_NEAR(ctx.noise, 1.2533 * 0.2 / 2.326 / std::sqrt(5.0), 1e-12);
    return moved;
  };
  EXPECT_FALSE(fifth_step_moves(1.1));
  EXPECT_TRUE(fifth_step_moves(1.2));
}

TEST(DynamicLoadBalancing, TheWindowsSpeedsDecideWhenStaleModelsSeeNothingBetter) {
  // Device 0's points come from a heavier load of the machine: at 300 rows it took as long as at
  // 600, so its model promises nothing from fewer rows. Measured together now, at 500 rows each,
  // device 0 takes 20 % longer than device 1 (within the 50 % that would restart its model): the
  // step moves to the speeds of this window, 500/0.6 : 500/0.5.
  const auto context = [] {
    BalanceContext ctx(1000, 2);
    ctx.models[0] = Model({Point{300, 0.6, 1, 0}, Point{600, 0.61, 1, 0}});
    ctx.models[1] = Model({Point{400, 0.4, 1, 0}, Point{600, 0.6, 1, 0}});
    return ctx;
  };
  BalanceContext ctx = context();
  ASSERT_EQ(ctx.dist.sizes(), (std::vector<std::int64_t>{500, 500}));
  const std::vector<double> drifted = {0.6, 0.5};
  ASSERT_TRUE(balance_iterate(ctx, drifted));
  EXPECT_EQ(ctx.resets, 0);
  const std::vector<std::int64_t> rows = ctx.dist.sizes();
  EXPECT_NEAR(static_cast<double>(rows[0]), 1000.0 * (1 / 0.6) / (1 / 0.6 + 1 / 0.5), 1.0);
  EXPECT_EQ(rows[0] + rows[1], 1000);
  // Times that agree within eps leave the rows as they are.
  BalanceContext quiet = context();
  const std::vector<double> balanced = {0.6, 0.59};
  EXPECT_FALSE(balance_iterate(quiet, balanced));
  EXPECT_EQ(quiet.dist.sizes(), (std::vector<std::int64_t>{500, 500}));
}

TEST(DynamicLoadBalancing, APointOfOneStepIsDroppedWhenTheShareMovesOn) {
  BalanceContext ctx(1000, 2);
  ASSERT_TRUE(balance_iterate(ctx, two_devices(ctx, 1, 3)));
  const std::vector<std::int64_t> first = ctx.dist.sizes();
  // Device 1 is slower than its model says (within the 50 % that would restart the model):
  // another large move, after one step at `first`.
  ASSERT_TRUE(balance_iterate(ctx, two_devices(ctx, 1, 2.2)));
  ASSERT_NE(ctx.dist.sizes(), first);
  for (std::size_t i = 0; i < 2; ++i) {
    for (const Point& p : ctx.models[i].points()) {
      EXPECT_NE(p.d, first[i]) << "device " << i << " kept the point of one step";
    }
    EXPECT_GE(ctx.models[i].points().size(), 1u);
  }
}

// Stored models (one per device) give the first distribution, their partition, and their points
// become the partial models' (of the context's kind); the first time of a device rescales them.
TEST(DynamicLoadBalancing, StoredModelsGiveTheFirstDistribution) {
  const std::vector<Model> stored = {
      Model(std::vector<Point>{{100, 0.1, 1, 0}, {1000, 1.0, 1, 0}}),
      Model(std::vector<Point>{{100, 0.3, 1, 0}, {1000, 3.0, 1, 0}})};
  BalanceContext ctx(1000, 2, "geometric", ModelKind::piecewise);
  start_from_stored(ctx, stored);
  EXPECT_EQ(ctx.dist.sizes(), partition("geometric", stored, 1000).sizes());
  EXPECT_EQ(ctx.dist.sizes()[0], 750);  // speeds 1 : 1/3
  EXPECT_EQ(ctx.models[1].points().size(), 2u);
  EXPECT_EQ(ctx.models[1].kind(), ModelKind::piecewise);
  EXPECT_EQ(ctx.stored, (std::vector<bool>{true, true}));
  // Both run twice as slow as stored: the first step rescales, and nothing moves.
  const std::vector<double> seconds = {2 * 0.75, 2 * 0.75};
  EXPECT_FALSE(balance_iterate(ctx, seconds));
  EXPECT_EQ(ctx.stored, (std::vector<bool>{false, false}));
  EXPECT_NEAR(ctx.models[0].time(1000.0), 2.0, 1e-9);
}

TEST(DynamicLoadBalancing, StoredModelsMustBeOnePerDevice) {
  BalanceContext ctx(100, 3);
  const std::vector<Model> two = {Model(std::vector<Point>{{10, 1.0, 1, 0}}),
                                  Model(std::vector<Point>{{10, 1.0, 1, 0}})};
  try {
    start_from_stored(ctx, two);
    FAIL() << "two models for three devices were taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 stored models for 3 processes"));
  }
}

}  // namespace
}  // namespace hit::balance
