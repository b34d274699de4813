// Akima spline against values computed by hand with Akima's slope rule (src/fpm/akima.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "hit/core/error.hpp"
#include "hit/fpm/akima.hpp"

namespace hit::fpm {
namespace {

using ::testing::HasSubstr;

TEST(Akima, HandComputedStepData) {
  // y = 1,1,1,2,3,3,3 at x = 0..6. Secants 0,0,1,1,0,0. At x = 2 both weights vanish, so the
  // slope is the mean of the neighbouring secants, 1/2; at x = 1 the right weight is 1 and the
  // left 0, so the slope is the left secant, 0. On (1, 2): y = 1 − u²/2 + u³/2.
  const std::vector<double> x = {0, 1, 2, 3, 4, 5, 6};
  const std::vector<double> y = {1, 1, 1, 2, 3, 3, 3};
  const AkimaSpline s(x, y);
  const std::vector<double> slopes = {0, 0, 0.5, 1, 0.5, 0, 0};
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(s.node_slopes()[i], slopes[i], 1e-15) << "node " << i;
    EXPECT_DOUBLE_EQ(s(x[i]), y[i]);
  }
  for (double u : {0.1, 0.25, 0.5, 0.8}) {
    EXPECT_NEAR(s(1 + u), 1 - u * u / 2 + u * u * u / 2, 1e-15) << u;
    EXPECT_NEAR(s.derivative(1 + u), -u + 1.5 * u * u, 1e-15) << u;
  }
  // Not monotonicity-preserving: it dips to 25/27 at x = 5/3.
  EXPECT_NEAR(s(5.0 / 3.0), 25.0 / 27.0, 1e-15);
  // By symmetry of the data, on (4, 5) it rises above 3: y(4 + u) = 3 + ... mirrored.
  EXPECT_NEAR(s(4 + 1.0 / 3.0), 3 + 2.0 / 27.0, 1e-14);
}

TEST(Akima, ReproducesStraightLinesAndIsC1) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> gap(0.1, 3.0), val(-5, 5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> x(3 + trial % 6), y(x.size()), line(x.size());
    double at = val(rng);
    const double a = val(rng), b = val(rng);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = at;
      at += gap(rng);
      y[i] = val(rng);
      line[i] = a + b * x[i];
    }
    const AkimaSpline straight(x, line);
    for (double f = x.front(); f <= x.back(); f += 0.05) EXPECT_NEAR(straight(f), a + b * f, 1e-9);
    const AkimaSpline s(x, y);
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
      const Cubic& left = s.pieces()[i];
      EXPECT_NEAR(left.value(left.h), y[i + 1], 1e-9);  // continuous
      if (i + 2 < x.size()) {
        EXPECT_NEAR(left.slope(left.h), s.pieces()[i + 1].slope(0), 1e-9);  // C¹
      }
    }
  }
}

TEST(Akima, TwoPointsAreALineAndBadInputIsAnError) {
  const std::vector<double> x = {1, 3}, y = {2, 6};
  const AkimaSpline s(x, y);
  EXPECT_DOUBLE_EQ(s(2), 4);
  EXPECT_DOUBLE_EQ(s.derivative(2.5), 2);
  const std::vector<double> bad_x = {1, 1, 2}, bad_y = {1, 2, 3};
  try {
    AkimaSpline(bad_x, bad_y);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("increase strictly"));
  }
  const std::vector<double> one = {1};
  EXPECT_THROW(AkimaSpline(one, one), Error);
}

}  // namespace
}  // namespace hit::fpm
