// hit-test-procs: 1 2 3 4
// Agreeing on failure: an error on one rank becomes the same error on every rank, no hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

struct RankFacts {
  int rank;
  double speed;
  std::int64_t rows;
};

TEST(TypedCollectives, AllgatherOfAStructGivesEveryRanksValueInRankOrder) {
  auto& env = hit::Environment::current();
  const RankFacts mine{env.rank(), 1.5 * env.rank(), 100 + 7 * std::int64_t{env.rank()}};
  const auto all = hit::allgather(mine, env.comm());
  ASSERT_EQ(static_cast<int>(all.size()), env.size());
  for (int r = 0; r < env.size(); ++r) {
    EXPECT_EQ(all[static_cast<std::size_t>(r)].rank, r);
    EXPECT_DOUBLE_EQ(all[static_cast<std::size_t>(r)].speed, 1.5 * r);
    EXPECT_EQ(all[static_cast<std::size_t>(r)].rows, 100 + 7 * r);
  }
}

TEST(TypedCollectives, AllgatherOfStringsKeepsLengthsAndEmptyOnes) {
  auto& env = hit::Environment::current();
  // Rank r sends r copies of a letter: rank 0's string is empty.
  const std::string mine(static_cast<std::size_t>(env.rank()), static_cast<char>('a' + env.rank()));
  const auto all = hit::allgather(mine, env.comm());
  ASSERT_EQ(static_cast<int>(all.size()), env.size());
  for (int r = 0; r < env.size(); ++r) {
    EXPECT_EQ(all[static_cast<std::size_t>(r)],
              std::string(static_cast<std::size_t>(r), static_cast<char>('a' + r)));
  }
}

TEST(TypedCollectives, BroadcastFromTheLastRankResizesStringsAndVectors) {
  auto& env = hit::Environment::current();
  const int root = env.size() - 1;
  std::string text = env.rank() == root ? std::string("from the last rank") : std::string(40, 'x');
  std::vector<double> values;
  if (env.rank() == root) values = {1.0, 2.5, -3.0};
  RankFacts facts{env.rank(), 0.0, 0};
  hit::broadcast(text, root, env.comm());
  hit::broadcast(values, root, env.comm());
  hit::broadcast(facts, root, env.comm());
  EXPECT_EQ(text, "from the last rank");
  EXPECT_EQ(values, (std::vector<double>{1.0, 2.5, -3.0}));
  EXPECT_EQ(facts.rank, root);
}

}  // namespace
