// Models: interpolation rules (docs/fpm.md, "The model"), capacity, envelope and inverse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fpm_test_util.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/model.hpp"

namespace hit::fpm {
namespace {

using ::testing::HasSubstr;
constexpr double inf = std::numeric_limits<double>::infinity();

TEST(Model, PiecewiseInterpolatesTimeFromTheOrigin) {
  const Model m({{10, 1.0, 1, 0}, {20, 3.0, 1, 0}, {40, 4.0, 1, 0}});
  EXPECT_EQ(m.time(0), 0);
  EXPECT_DOUBLE_EQ(m.time(5), 0.5);   // constant speed below the first point
  EXPECT_DOUBLE_EQ(m.time(15), 2.0);  // linear between points
  EXPECT_DOUBLE_EQ(m.time(30), 3.5);
  EXPECT_DOUBLE_EQ(m.time(60), 5.0);  // the last segment extended: slope 1/20
  EXPECT_DOUBLE_EQ(m.speed(10), 10.0);
  EXPECT_DOUBLE_EQ(m.speed(0), 10.0);  // the limit at 0
  EXPECT_DOUBLE_EQ(m.slope(25), 0.05);
  EXPECT_TRUE(m.monotone());
}

TEST(Model, DecreasingLastSegmentContinuesAtConstantSpeed) {
  const Model m({{10, 2.0, 1, 0}, {20, 1.5, 1, 0}});
  EXPECT_DOUBLE_EQ(m.time(15), 1.75);
  EXPECT_DOUBLE_EQ(m.time(40), 3.0);  // speed 20/1.5 beyond d = 20
  EXPECT_FALSE(m.monotone());
  // The envelope keeps the 2.0 s reached at d = 10 until the time rises above it again.
  EXPECT_DOUBLE_EQ(m.envelope_time(15), 2.0);
  EXPECT_DOUBLE_EQ(m.envelope_time(25), 2.0);
  EXPECT_DOUBLE_EQ(m.inverse(2.0), 20.0 * 2.0 / 1.5);  // first crossing above 2 s
  EXPECT_DOUBLE_EQ(m.inverse(1.0), 5.0);
}

TEST(Model, ConstantUsesTheNewestPoint) {
  Model m({{10, 1.0, 1, 0}, {100, 20.0, 1, 0}}, ModelKind::constant);
  EXPECT_DOUBLE_EQ(m.time(50), 10.0);  // speed 5 from the last observation (d = 100)
  m.add({20, 1.0, 1, 0});              // newest: speed 20
  EXPECT_DOUBLE_EQ(m.time(50), 2.5);
  EXPECT_DOUBLE_EQ(Model::constant_speed(4).time(10), 2.5);
}

TEST(Model, AkimaKindUsesSplineInsideAndLinesOutside) {
  const Model m({{1, 1, 1, 0},
                 {2, 1, 1, 0},
                 {3, 1, 1, 0},
                 {4, 2, 1, 0},
                 {5, 3, 1, 0},
                 {6, 3, 1, 0},
                 {7, 3, 1, 0}},
                ModelKind::akima);
  // The data of the hand-computed example shifted by one: on (2, 3) the spline dips to 25/27.
  EXPECT_NEAR(m.time(2 + 2.0 / 3.0), 25.0 / 27.0, 1e-14);
  EXPECT_DOUBLE_EQ(m.time(0.5), 0.5);        // constant speed 1 below the first point
  EXPECT_DOUBLE_EQ(m.time(9), 3.0 * 9 / 7);  // the last secant is flat: constant speed beyond
  EXPECT_FALSE(m.monotone());
  // The envelope and the first crossing treat the dip as the 1 s plateau.
  EXPECT_DOUBLE_EQ(m.envelope_time(2 + 2.0 / 3.0), 1.0);
  EXPECT_NEAR(m.inverse(1.0), 3.0, 1e-12);
  EXPECT_NEAR(m.time(m.inverse(1.5)), 1.5, 1e-12);
}

TEST(Model, CapacityMakesTimeInfinite) {
  Model m({{10, 1.0, 1, 0}}, ModelKind::piecewise, 50);
  EXPECT_DOUBLE_EQ(m.time(50), 5.0);
  EXPECT_EQ(m.time(51), inf);
  EXPECT_EQ(m.speed(51), 0);
  EXPECT_DOUBLE_EQ(m.inverse(100), 50);
  EXPECT_DOUBLE_EQ(m.inverse(inf), 50);
  m.add({40, 2.0, 1, 0});
  m.set_capacity(30);  // drops the point beyond
  ASSERT_EQ(m.points().size(), 1u);
  EXPECT_EQ(m.points()[0].d, 10);
  EXPECT_THROW(m.add({31, 1.0, 1, 0}), Error);
}

TEST(Model, AddReplacesThePointAtTheSameSize) {
  Model m;
  EXPECT_FALSE(m.usable());
  EXPECT_THROW(m.time(1), Error);
  m.add({20, 2.0, 1, 0});
  m.add({10, 1.0, 1, 0});
  m.add({20, 4.0, 3, 0.1});
  ASSERT_EQ(m.points().size(), 2u);
  EXPECT_EQ(m.points()[1], (Point{20, 4.0, 3, 0.1}));
  EXPECT_DOUBLE_EQ(m.time(15), 2.5);
}

TEST(Model, RemoveDropsOnePoint) {
  Model m({{10, 1.0, 1, 0}, {20, 4.0, 1, 0}, {40, 6.0, 1, 0}}, ModelKind::constant);
  m.remove(15);  // none there: nothing changes
  EXPECT_EQ(m.points().size(), 3u);
  m.add({30, 1.0, 1, 0});  // newest: speed 30
  EXPECT_DOUBLE_EQ(m.time(60), 2.0);
  m.remove(20);  // an older point: the newest stays the newest
  EXPECT_DOUBLE_EQ(m.time(60), 2.0);
  m.remove(30);  // the newest: the last point speaks for the device
  ASSERT_EQ(m.points().size(), 2u);
  EXPECT_DOUBLE_EQ(m.time(60), 9.0);                                  // speed 40/6
  EXPECT_DOUBLE_EQ(m.with_kind(ModelKind::piecewise).time(25), 3.5);  // 10..40 now one segment
}

TEST(Model, RejectsBadPoints) {
  auto message = [](auto&& make) {
    try {
      make();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::model);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message([] { Model({{0, 1.0, 1, 0}}); }), HasSubstr("d = 0"));
  EXPECT_THAT(message([] { Model({{5, -1.0, 1, 0}}); }), HasSubstr("t = -1"));
  EXPECT_THAT(message([] {
                Model({{5, 1.0, 1, 0}, {5, 2.0, 1, 0}});
              }),
              HasSubstr("does not increase"));
  EXPECT_THAT(message([] {
                Model({{5, 1.0, 1, 0}}, ModelKind::piecewise, 4);
              }),
              HasSubstr("beyond the capacity"));
  EXPECT_THAT(message([] { Model::constant_speed(0); }), HasSubstr("constant speed"));
}

TEST(Model, InverseAndEnvelopeAgreeOnRandomModels) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const Model m =
        trial % 3 == 0
            ? test::random_bumpy(rng)
            : test::random_monotone(rng, trial % 3 == 1 ? ModelKind::piecewise : ModelKind::akima);
    if (m.empty()) continue;
    const double top = static_cast<double>(std::min<std::int64_t>(m.capacity(), 400));
    double previous = 0;
    for (double x = 0.37; x < top; x += top / 37) {
      const double env = m.envelope_time(x);
      EXPECT_GE(env, m.time(x) - 1e-12 * env);
      EXPECT_GE(env, previous - 1e-12 * env) << "the envelope never decreases";
      previous = env;
      // X(t̂(x)) >= x: the device finishes x units by t̂(x) ...
      EXPECT_GE(m.inverse(env), x * (1 - 1e-9));
      // ... X(T) is where the envelope reaches T: at most T there, at least T just beyond.
      const double level = env * 1.3;
      const double cross = m.inverse(level);
      EXPECT_LE(m.envelope_time(cross), level * (1 + 1e-9));
      if (cross < static_cast<double>(m.capacity())) {
        EXPECT_GE(m.envelope_time(cross + 1e-6 * std::max(1.0, cross)), level * (1 - 1e-9));
      }
    }
    if (m.monotone()) {
      // Inverse of the time itself; on a flat stretch, its far end.
      for (double x = 1; x < top; x *= 1.7) {
        const double back = m.inverse(m.time(x));
        EXPECT_GE(back, x * (1 - 1e-9));
        EXPECT_NEAR(m.time(back), m.time(x), 1e-9 * m.time(x));
      }
    }
  }
}

TEST(Model, CoarsenedIsAStrictlyIncreasingEnvelope) {
  const Model m({{1, 1.0, 1, 0}, {2, 3.0, 1, 0}, {3, 2.0, 1, 0}, {4, 3.0, 1, 0}, {5, 2.5, 1, 0}});
  const Model c = m.coarsened();
  ASSERT_EQ(c.points().size(), 5u);
  EXPECT_DOUBLE_EQ(c.points()[0].t, 1.0);
  EXPECT_DOUBLE_EQ(c.points()[1].t, 3.0);
  for (std::size_t i = 1; i < 5; ++i) {
    EXPECT_GT(c.points()[i].t, c.points()[i - 1].t);
    EXPECT_NEAR(c.points()[i].t, 3.0, 3e-11 * static_cast<double>(i));
    EXPECT_GE(c.time(static_cast<double>(c.points()[i].d)),
              m.time(static_cast<double>(m.points()[i].d)));
  }
  EXPECT_TRUE(c.monotone());
  // The envelope's last segment is flat: constant speed 5/3 beyond the last point.
  EXPECT_NEAR(c.time(10), 10 * c.points()[4].t / 5, 1e-12);
  // Coarsening a monotone model changes nothing.
  const Model mono({{2, 1.0, 1, 0}, {4, 1.5, 1, 0}});
  EXPECT_EQ(mono.coarsened().points(), mono.points());
}

TEST(Model, KindNames) {
  EXPECT_EQ(parse_model_kind("akima"), ModelKind::akima);
  EXPECT_EQ(parse_model_kind("pwl"), ModelKind::piecewise);
  EXPECT_EQ(parse_model_kind("cpm"), ModelKind::constant);
  try {
    parse_model_kind("spline");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("constant, piecewise, akima"));
  }
}

}  // namespace
}  // namespace hit::fpm
