// hit-test-procs: 1 2 3 4
// Agreeing on failure: an error on one rank becomes the same error on every rank, no hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"

namespace {

using ::testing::HasSubstr;

TEST(Collectively, FailureOnTheLastRankReachesEveryRank) {
  auto& env = hit::Environment::current();
  const int last = env.size() - 1;
  try {
    hit::collectively(env.comm(), [&] {
      if (env.rank() == last) throw hit::Error(hit::ErrorKind::io, "disk full on purpose");
    });
    FAIL() << "expected an error on rank " << env.rank();
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr("disk full on purpose"));
    if (env.size() > 1 && last != 0) {
      EXPECT_THAT(e.what(), HasSubstr("rank " + std::to_string(last)));
    }
  }
}

TEST(Collectively, LowestFailingRankWins) {
  auto& env = hit::Environment::current();
  try {
    hit::collectively(env.comm(), [&] {
      throw hit::Error(hit::ErrorKind::parse, "bad on " + std::to_string(env.rank()));
    });
    FAIL();
  } catch (const hit::Error& e) {
    EXPECT_EQ(std::string(e.what()), "bad on 0");
  }
}

TEST(Collectively, SuccessEverywhereReturns) {
  auto& env = hit::Environment::current();
  int ran = 0;
  EXPECT_NO_THROW(hit::collectively(env.comm(), [&] { ran = 1; }));
  EXPECT_EQ(ran, 1);
}

}  // namespace
