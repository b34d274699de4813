// Partitioners against known optima (computed independently by enumeration or by hand) and
// properties over random models. Makespans are compared, not vectors: optima are rarely unique.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "fpm_test_util.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::fpm {
namespace {

using test::brute_force_makespan;
using test::sampled;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<std::string> optimal_algorithms = {
    "geometric", "geometric:bisection=angle", "geometric:bisection=linear", "numerical", "exact",
    "dp"};
const std::vector<std::string> all_algorithms = {"even",
                                                 "proportional",
                                                 "proportional:rounding=largest_remainder",
                                                 "geometric",
                                                 "geometric:bisection=angle",
                                                 "geometric:bisection=linear",
                                                 "numerical",
                                                 "exact",
                                                 "dp"};

// Every distribution must be well formed whatever the algorithm.
void expect_valid(const Distribution& dist, const std::vector<Model>& models, std::int64_t n) {
  ASSERT_EQ(dist.parts.size(), models.size()) << dist.algorithm;
  EXPECT_EQ(dist.n, n);
  std::int64_t sum = 0;
  double worst = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Part& p = dist.parts[i];
    EXPECT_GE(p.d, 0) << dist.algorithm << " device " << i;
    EXPECT_LE(p.d, models[i].capacity()) << dist.algorithm << " device " << i;
    if (p.d > 0) {
      EXPECT_DOUBLE_EQ(p.t, models[i].time(static_cast<double>(p.d))) << dist.algorithm;
    } else {
      EXPECT_EQ(p.t, 0);
    }
    sum += p.d;
    worst = std::max(worst, p.t);
  }
  EXPECT_EQ(sum, n) << dist.algorithm;
  EXPECT_DOUBLE_EQ(dist.makespan, worst) << dist.algorithm;
}

void expect_optimal(const std::vector<Model>& models, std::int64_t n, double optimum,
                    const std::string& what) {
  for (const std::string& algo : optimal_algorithms) {
    const Distribution d = partition(algo, models, n);
    expect_valid(d, models, n);
    EXPECT_NEAR(d.makespan, optimum, 1e-9 * optimum) << what << ": " << algo;
  }
}

TEST(Partition, EqualDevicesSplitEvenly) {
  const std::vector<Model> models(3, sampled([](double x) { return 0.1 * x; }, {1, 100}));
  // 10 units on 3 equal devices: 4, 3, 3 (the first n mod p get one more, as `blocks`).
  for (const std::string& algo : all_algorithms) {
    const Distribution d = partition(algo, models, 10);
    expect_valid(d, models, 10);
    EXPECT_NEAR(d.makespan, 0.4, 1e-12) << algo;
  }
  EXPECT_EQ(partition_even(models, 10).sizes(), (std::vector<std::int64_t>{4, 3, 3}));
  EXPECT_EQ(partition_exact(models, 10).sizes(), (std::vector<std::int64_t>{4, 3, 3}));
  EXPECT_EQ(partition_geometric(models, 10).sizes(), (std::vector<std::int64_t>{4, 3, 3}));
}

TEST(Partition, ConstantSpeedsAndTheRoundingExample) {
  // Speeds 1, 1, 5 and n = 3 (docs/fpm.md, `proportional` rounding): largest remainder gives
  // (1, 0, 2), 1 s; the optimum is (0, 0, 3), 0.6 s.
  const std::vector<Model> models = {Model::constant_speed(1), Model::constant_speed(1),
                                     Model::constant_speed(5)};
  expect_optimal(models, 3, 0.6, "speeds 1,1,5");
  EXPECT_NEAR(partition_proportional(models, 3).makespan, 0.6, 1e-12);
  const Distribution r2 = partition_proportional(models, 3, Rounding::largest_remainder);
  EXPECT_EQ(r2.sizes(), (std::vector<std::int64_t>{1, 0, 2}));
  EXPECT_NEAR(r2.makespan, 1.0, 1e-12);
  // Large n: shares proportional to speed, exactly n in total, without walking unit by unit.
  const std::int64_t big = 700'000'000'007;
  const Distribution d = partition_proportional(models, big);
  expect_valid(d, models, big);
  EXPECT_NEAR(static_cast<double>(d.parts[2].d) / static_cast<double>(big), 5.0 / 7.0, 1e-9);
  EXPECT_NEAR(partition_geometric(models, big).makespan, d.makespan, 1e-12 * d.makespan);
}

TEST(Partition, LinearTimesWithStartUpCosts) {
  // t_i(d) = a_i + b_i·d for d >= 1: the fast device has a large start-up cost, so at small n it
  // should get nothing although it is the fastest per unit.
  const std::vector<std::int64_t> ds = {1, 1000};
  const std::vector<Model> models = {sampled([](double x) { return 0.5 + 0.001 * x; }, ds),
                                     sampled([](double x) { return 0.01 + 0.02 * x; }, ds),
                                     sampled([](double x) { return 0.05 + 0.01 * x; }, ds)};
  for (std::int64_t n : {1, 2, 5, 17, 30, 60}) {
    const double optimum = brute_force_makespan(models, n);
    expect_optimal(models, n, optimum, "start-up n=" + std::to_string(n));
    EXPECT_GE(partition_even(models, n).makespan, optimum * (1 - 1e-12));
  }
  // Hand-checked at n = 5: (0, 3, 2) takes max(0.07, 0.07) = 0.07 s, (0, 2, 3) 0.08 s, and any
  // unit on device 0 costs at least 0.501 s.
  EXPECT_NEAR(partition_exact(models, 5).makespan, 0.07, 1e-12);
  EXPECT_EQ(partition_exact(models, 5).sizes(), (std::vector<std::int64_t>{0, 3, 2}));
  EXPECT_EQ(partition_geometric(models, 5).parts[0].d, 0);
  // Large n: the start-up cost no longer matters and device 0 takes most of the work.
  EXPECT_GT(partition_geometric(models, 100000).parts[0].d, 80000);
}

TEST(Partition, OneDeviceFarSlower) {
  const std::vector<Model> models = {Model::constant_speed(1000), Model::constant_speed(1)};
  for (const std::string& algo : optimal_algorithms) {
    const Distribution d = partition(algo, models, 100);
    EXPECT_EQ(d.parts[1].d, 0) << algo;
    EXPECT_NEAR(d.makespan, 0.1, 1e-12) << algo;
  }
  // At n = 2000 the slow device is worth one unit: 1999/1000 > 1 s would be worse than 1 s each.
  expect_optimal(models, 2000, std::max(1999.0 / 1000.0, 1.0), "far slower n=2000");
  EXPECT_NEAR(partition_even(models, 100).makespan, 50, 1e-9);
}

TEST(Partition, SpeedCollapsesBeyondMemory) {
  // Device 0 is fast until 40 units, then out of core and ten times slower (Clarke et al.
  // Fig. 1.4b); device 1 is steady.
  const Model gpu({{10, 0.01, 1, 0}, {40, 0.04, 1, 0}, {41, 0.41, 1, 0}, {200, 2.0, 1, 0}});
  const Model cpu = sampled([](double x) { return 0.005 * x; }, {1, 200});
  const std::vector<Model> models = {gpu, cpu};
  for (std::int64_t n : {10, 40, 48, 100, 150}) {
    const double optimum = brute_force_makespan(models, n);
    expect_optimal(models, n, optimum, "collapse n=" + std::to_string(n));
  }
  // n = 100: the GPU keeps to its memory (40 units, 0.04 s) and the CPU takes 60 (0.3 s) — giving
  // the GPU a 41st unit would cost 0.41 s.
  const Distribution d = partition_exact(models, 100);
  EXPECT_EQ(d.parts[0].d, 40);
  EXPECT_NEAR(d.makespan, 0.3, 1e-12);
}

TEST(Partition, HardCapacityIsNeverExceeded) {
  const std::vector<Model> models = {Model::constant_speed(100, 7), Model::constant_speed(1),
                                     Model::constant_speed(2, 20)};
  for (std::int64_t n : {5, 7, 20, 40}) {
    const double optimum = brute_force_makespan(models, n);
    expect_optimal(models, n, optimum, "capacity n=" + std::to_string(n));
    for (const std::string& algo : all_algorithms) {
      expect_valid(partition(algo, models, n), models, n);
    }
  }
  EXPECT_EQ(partition_exact(models, 40).parts[0].d, 7);
  // Even within capacities: 27 units over caps (7, unlimited, 20) → 7, 10, 10.
  EXPECT_EQ(partition_even(models, 27).sizes(), (std::vector<std::int64_t>{7, 10, 10}));
}

TEST(Partition, FewerUnitsThanDevices) {
  const std::vector<Model> equal(5, Model::constant_speed(1));
  for (const std::string& algo : all_algorithms) {
    const Distribution d = partition(algo, equal, 2);
    expect_valid(d, equal, 2);
    EXPECT_NEAR(d.makespan, 1.0, 1e-12) << algo;
  }
  EXPECT_EQ(partition_even(equal, 2).sizes(), (std::vector<std::int64_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(partition_exact(equal, 2).sizes(), (std::vector<std::int64_t>{1, 1, 0, 0, 0}));
  // Unequal devices: the units go to the smallest t(1), ties to the lower index.
  const std::vector<Model> mixed = {Model::constant_speed(1), Model::constant_speed(3),
                                    Model::constant_speed(2), Model::constant_speed(3)};
  for (const std::string& algo : optimal_algorithms) {
    EXPECT_EQ(partition(algo, mixed, 2).sizes(), (std::vector<std::int64_t>{0, 1, 0, 1})) << algo;
  }
}

TEST(Partition, NothingToDistribute) {
  const std::vector<Model> models = {Model::constant_speed(1), Model::constant_speed(2)};
  for (const std::string& algo : all_algorithms) {
    const Distribution d = partition(algo, models, 0);
    EXPECT_EQ(d.sizes(), (std::vector<std::int64_t>{0, 0})) << algo;
    EXPECT_EQ(d.makespan, 0) << algo;
  }
}

TEST(Partition, BadRequestsAreClearErrors) {
  const std::vector<Model> models = {Model::constant_speed(1, 10), Model::constant_speed(1, 5)};
  for (const std::string& algo : all_algorithms) {
    try {
      partition(algo, models, -3);
      ADD_FAILURE() << algo;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_THAT(e.what(), AllOf(HasSubstr("n = -3"), HasSubstr("negative")));
    }
    try {
      partition(algo, std::span<const Model>(), 3);
      ADD_FAILURE() << algo;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("no devices"));
    }
    try {
      partition(algo, models, 16);
      ADD_FAILURE() << algo;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_THAT(e.what(), AllOf(HasSubstr("total capacity"), HasSubstr("15 units"),
                                  HasSubstr("n = 16"), HasSubstr("10, 5")));
    }
  }
  const std::vector<Model> unmeasured = {Model::constant_speed(1), Model()};
  try {
    partition("geometric", unmeasured, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::model);
    EXPECT_THAT(e.what(), HasSubstr("device 1 has no points"));
  }
  // Even needs no measurements.
  EXPECT_EQ(partition("even", unmeasured, 4).sizes(), (std::vector<std::int64_t>{2, 2}));
  // A device of capacity 0 is unusable and gets nothing.
  const std::vector<Model> with_dead = {Model(ModelKind::piecewise, 0), Model::constant_speed(1)};
  for (const std::string& algo : all_algorithms) {
    EXPECT_EQ(partition(algo, with_dead, 3).sizes(), (std::vector<std::int64_t>{0, 3})) << algo;
  }
}

TEST(Partition, ChosenByNameFromTheRegistry) {
  const std::vector<Model> models = {Model::constant_speed(1), Model::constant_speed(2)};
  EXPECT_EQ(partition("geometric:bisection=angle,max_iterations=50", models, 9).algorithm,
            "geometric:bisection=angle,max_iterations=50");
  try {
    partition("best", models, 9);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::plugin);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("'best'"), HasSubstr("geometric"), HasSubstr("exact")));
  }
  try {
    partition("geometric:angle=1", models, 9);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bisection"));
  }
  EXPECT_THROW(partition("geometric:bisection=golden", models, 9), Error);
  EXPECT_THROW(partition("numerical:tolerance=2", models, 9), Error);
  EXPECT_EQ(builtin_partitioners(), (std::vector<std::string>{"even", "proportional", "geometric",
                                                              "numerical", "exact", "dp"}));
}

// Names, keys and values are checked before any model exists, with the error partition() gives.
TEST(Partition, NamesAreCheckedUpFront) {
  for (const std::string& algo : all_algorithms) EXPECT_NO_THROW(check_partitioner(algo)) << algo;
  try {
    check_partitioner("magic");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::plugin);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("'magic'"), HasSubstr("geometric")));
  }
  for (const std::string bad :
       {"geometric:bisection=golden", "numerical:tolerance=2", "geometric:angle=1", "dp:x=1"}) {
    EXPECT_THROW(check_partitioner(bad), Error) << bad;
  }
}

TEST(Partition, RandomMonotoneModels) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> devices(1, 6);
  std::uniform_int_distribution<std::int64_t> units(0, 400);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<Model> models;
    const int p = devices(rng);
    for (int i = 0; i < p; ++i) models.push_back(test::random_monotone(rng));
    const std::int64_t n = std::min(units(rng), test::total_capacity(models, 400));
    const Distribution exact = partition_exact(models, n);
    expect_valid(exact, models, n);
    const Distribution even = partition_even(models, n);
    for (const std::string& algo : all_algorithms) {
      if (algo == "even") continue;
      // Models of devices without points are capacity-0 here, so every algorithm applies.
      const Distribution d = partition(algo, models, n);
      expect_valid(d, models, n);
      EXPECT_GE(d.makespan, exact.makespan * (1 - 1e-9)) << algo << " beat the optimum";
      if (algo.rfind("proportional", 0) != 0) {
        // Optimal on exact (monotone) models: within 1e-9 of the exact solver, never worse than
        // even.
        EXPECT_LE(d.makespan, exact.makespan * (1 + 1e-9)) << algo << " trial " << trial;
        EXPECT_LE(d.makespan, even.makespan * (1 + 1e-9)) << algo << " trial " << trial;
      }
    }
    if (n <= 40 && p <= 4) {
      EXPECT_NEAR(exact.makespan, brute_force_makespan(models, n), 1e-9 * exact.makespan)
          << "trial " << trial;
    }
  }
}

TEST(Partition, RandomAkimaModelsNumericalMatchesExact) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 150; ++trial) {
    std::vector<Model> models;
    for (int i = 0; i < 1 + trial % 5; ++i) {
      models.push_back(test::random_monotone(rng, ModelKind::akima));
    }
    const std::int64_t n = std::min<std::int64_t>(1 + trial * 3, test::total_capacity(models, 500));
    const Distribution exact = partition_exact(models, n);
    const Distribution num = partition_numerical(models, n);
    expect_valid(num, models, n);
    // Both balance the running-maximum envelope; on monotone models that is the model itself.
    bool monotone = true;
    for (const Model& m : models) monotone = monotone && m.monotone();
    if (monotone) {
      EXPECT_NEAR(num.makespan, exact.makespan, 1e-9 * exact.makespan) << "trial " << trial;
    }
    if (n <= 40 && models.size() <= 3 && monotone) {
      EXPECT_NEAR(exact.makespan, brute_force_makespan(models, n), 1e-9 * exact.makespan);
    }
  }
}

TEST(Partition, NonMonotoneModelsDpIsExactAndFpmIsConservative) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<Model> models;
    for (int i = 0; i < 2 + trial % 2; ++i) models.push_back(test::random_bumpy(rng));
    const std::int64_t n = 1 + trial % 30;
    const double optimum = brute_force_makespan(models, n);
    const Distribution dp = partition_dp(models, n);
    expect_valid(dp, models, n);
    EXPECT_NEAR(dp.makespan, optimum, 1e-9 * optimum) << "trial " << trial;
    for (const char* algo : {"geometric", "numerical", "exact"}) {
      const Distribution d = partition(algo, models, n);
      expect_valid(d, models, n);
      EXPECT_GE(d.makespan, optimum * (1 - 1e-9)) << algo;
    }
  }
}

TEST(Partition, DeterministicAndTiesToTheLowerIndex) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Model> models;
    for (int i = 0; i < 4; ++i) models.push_back(test::random_monotone(rng));
    const std::int64_t n = std::min<std::int64_t>(123, test::total_capacity(models, 123));
    for (const std::string& algo : all_algorithms) {
      EXPECT_EQ(partition(algo, models, n).sizes(), partition(algo, models, n).sizes()) << algo;
    }
  }
  const std::vector<Model> same(3, Model::constant_speed(2));
  for (const char* algo : {"geometric", "numerical", "exact", "proportional", "even"}) {
    EXPECT_EQ(partition(algo, same, 5).sizes(), (std::vector<std::int64_t>{2, 2, 1})) << algo;
  }
}

TEST(Partition, EvaluateChecksAGivenDistribution) {
  const std::vector<Model> models = {Model::constant_speed(2), Model::constant_speed(4, 3)};
  const std::vector<std::int64_t> d = {4, 2};
  const Distribution dist = evaluate(models, d);
  EXPECT_EQ(dist.n, 6);
  EXPECT_DOUBLE_EQ(dist.makespan, 2.0);
  // Times 2 and 0.5: spread (max − min) / min, imbalance max / mean.
  EXPECT_NEAR(spread(dist.parts), (2.0 - 0.5) / 0.5, 1e-12);
  EXPECT_NEAR(imbalance(dist.parts), 2.0 / 1.25, 1e-12);
  const std::vector<std::int64_t> over = {1, 4};
  EXPECT_THROW(evaluate(models, over), Error);
}

}  // namespace
}  // namespace hit::fpm
