// Benchmark statistics: Student-t quantiles against tabulated values, the median rule for spikes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hit/core/error.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::fpm {
namespace {

TEST(Statistics, StudentTQuantilesMatchTables) {
  // Two-sided 95 % critical values (the 0.975 quantile) from standard tables.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706204736, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302652730, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445105, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228138852, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272456, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.995, 5), 4.032142984, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.95, 3), 2.353363435, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.959963985, 1e-6);  // the normal limit
  EXPECT_NEAR(student_t_quantile(0.025, 10), -2.228138852, 1e-8);
  EXPECT_EQ(student_t_quantile(0.5, 3), 0);
  // df = 1 is the Cauchy distribution: CDF = 1/2 + atan(x)/π.
  for (double x : {-3.0, -0.5, 0.2, 1.0, 7.0}) {
    EXPECT_NEAR(student_t_cdf(x, 1), 0.5 + std::atan(x) / M_PI, 1e-13);
  }
  EXPECT_THROW(student_t_quantile(1.0, 3), Error);
  EXPECT_THROW(student_t_quantile(0.9, 0), Error);
}

TEST(Statistics, NormalRangeQuantilesMatchTheStudentizedRangeTables) {
  // Two variables: the range is √2 |Z|, so its p-quantile is √2 Φ⁻¹((1 + p) / 2).
  EXPECT_NEAR(normal_range_quantile(0.90, 2), std::sqrt(2.0) * 1.6448536270, 1e-6);
  EXPECT_NEAR(normal_range_quantile(0.95, 2), std::sqrt(2.0) * 1.9599639845, 1e-6);
  // Tukey's studentized range with infinite degrees of freedom (tables to three decimals).
  EXPECT_NEAR(normal_range_quantile(0.90, 3), 2.902, 2e-3);
  EXPECT_NEAR(normal_range_quantile(0.90, 4), 3.240, 2e-3);
  EXPECT_NEAR(normal_range_quantile(0.90, 10), 4.129, 2e-3);
  EXPECT_NEAR(normal_range_quantile(0.95, 3), 3.314, 2e-3);
  EXPECT_NEAR(normal_range_quantile(0.95, 5), 3.858, 2e-3);
  EXPECT_NEAR(normal_range_quantile(0.95, 10), 4.474, 2e-3);
  EXPECT_LT(normal_range_quantile(0.5, 3), normal_range_quantile(0.9, 3));
  EXPECT_THROW(normal_range_quantile(0.9, 1), Error);
  EXPECT_THROW(normal_range_quantile(1.0, 3), Error);
  EXPECT_THROW(normal_range_quantile(0.0, 3), Error);
}

TEST(Statistics, MedianAndSummary) {
  const std::vector<double> odd = {5, 1, 3}, even = {4, 1, 3, 2};
  EXPECT_EQ(median(odd), 3);
  EXPECT_EQ(median(even), 2.5);
  const std::vector<double> s = {1.0, 2.0, 3.0, 4.0};
  const Summary sum = summarize(s, 0.95);
  EXPECT_EQ(sum.count, 4);
  EXPECT_DOUBLE_EQ(sum.mean, 2.5);
  EXPECT_NEAR(sum.stddev, std::sqrt(5.0 / 3.0), 1e-15);
  EXPECT_NEAR(sum.ci, 3.182446305 * std::sqrt(5.0 / 3.0) / 2, 1e-8);  // t(0.975, 3) · s / √4
  const std::vector<double> one = {2.0};
  EXPECT_EQ(summarize(one).ci, 0);
}

TEST(Statistics, SpikesAreRejectedOrdinaryNoiseIsNot) {
  // A spike among identical timings (MAD = 0): the floor keeps the others, the spike goes.
  const std::vector<double> flat = {1.0, 1.0, 10.0, 1.0};
  EXPECT_EQ(reject_outliers(flat), (std::vector<double>{1.0, 1.0, 1.0}));
  // Ordinary noise: nothing is rejected.
  const std::vector<double> noisy = {1.00, 1.02, 0.98, 1.01, 0.99, 1.03};
  EXPECT_EQ(reject_outliers(noisy).size(), noisy.size());
  // A spike in noisy data: median 1.005, MAD 0.015 → limit max(3·1.4826·0.015, 0.05) ≈ 0.067.
  const std::vector<double> spiky = {1.00, 1.02, 0.98, 1.01, 0.99, 1.30};
  EXPECT_EQ(reject_outliers(spiky), (std::vector<double>{1.00, 1.02, 0.98, 1.01, 0.99}));
  // Fewer than three samples cannot tell a spike from the rest.
  const std::vector<double> two = {1.0, 10.0};
  EXPECT_EQ(reject_outliers(two).size(), 2u);
}

}  // namespace
}  // namespace hit::fpm
