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

// A stretch in which the last rank fails alone, as a dry run of the advisor on a layout only that
// rank refuses: the others, waiting for it in a reduction, learn of it from its announcement;
// once settled, nothing of the stretch is left on the run's communicator, which works as before.
TEST(Isolation, AFailureOnOneRankStaysInItsStretch) {
  auto& env = hit::Environment::current();
  const MPI_Comm run = env.comm();
  const int last = env.size() - 1;
  bool failed = false;
  int announced = 0;
  int taken = 0;
  {
    hit::Environment::Isolation isolated(env);
    EXPECT_NE(env.comm(), run);
    try {
      if (env.rank() == last) {
        env.announce_failure(hit::ErrorKind::invalid_argument, "refused on purpose");
        throw hit::Error(hit::ErrorKind::invalid_argument, "refused on purpose");
      }
      int one = 1;
      hit::allreduce_in_place(&one, 1, MPI_INT, MPI_SUM, env.comm());
      FAIL() << "rank " << env.rank() << " finished a reduction rank " << last << " never joined";
    } catch (const hit::Error& e) {
      failed = true;
      EXPECT_THAT(e.what(), HasSubstr("refused on purpose"));
      if (env.rank() != last) {
        EXPECT_THAT(e.what(), HasSubstr("rank " + std::to_string(last)));
      }
    }
    isolated.end();
    EXPECT_EQ(env.comm(), run);
    EXPECT_FALSE(env.announced());  // the run itself has not failed
    announced = isolated.announced() ? 1 : 0;
    taken = isolated.notices_taken();
    EXPECT_EQ(announced, env.size() > 1 && env.rank() == last ? 1 : 0);
    int announcements = announced;
    hit::allreduce_in_place(&announcements, 1, MPI_INT, MPI_SUM, run);
    isolated.settle(announcements - announced - taken, true);
  }
  EXPECT_EQ(failed, env.size() > 1 || env.rank() == last);
  // The run's communicator is untouched: a reduction over it completes with every rank's part.
  int ranks = 1;
  hit::allreduce_in_place(&ranks, 1, MPI_INT, MPI_SUM, env.comm());
  EXPECT_EQ(ranks, env.size());
  hit::collectively(env.comm(), [] {});
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
