// Measuring a network model (hit::balance::measure_network) at 1, 2 and 4 processes: at 4, two
// ranks per emulated node (HIT_NODES=2), so both link classes are measured; at 2, one node, so
// only `node` is; at 1 there is no pair and the measurement fails on every rank. Tiny sizes and
// few repetitions: the values are checked for sense, not speed.
// hit-test-procs: 1 2 4
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "hit/balance/network_benchmark.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/network_model_file.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {
namespace {

using fpm::LinkClass;
using ::testing::HasSubstr;

// At 4 processes, two emulated nodes of two ranks; otherwise the real node (one machine).
Environment& env_for_test() {
  Environment& env = Environment::current();
  static const bool once = [&] {
    if (env.size() == 4) env.config().set("nodes", "2");
    PhysicalTopology::of(env);
    return true;
  }();
  (void)once;
  return env;
}

NetworkOptions tiny() {
  NetworkOptions o;
  o.sizes = {8, 1024, 16384};
  o.reps = 3;
  o.warmup = 1;
  return o;
}

void expect_sensible(const fpm::LinkCost& c) {
  EXPECT_GT(c.latency, 0);
  EXPECT_TRUE(std::isfinite(c.latency));
  EXPECT_LT(c.latency, 1.0);  // a message of 8 bytes on one machine takes far less than a second
  EXPECT_GT(c.bandwidth, 0);
  EXPECT_TRUE(std::isfinite(c.bandwidth));
  EXPECT_GE(c.latency_spread, 0);
  EXPECT_GE(c.bandwidth_spread, 0);
  EXPECT_GE(c.pairs, 1);
}

TEST(MeasureNetwork, ClassesOfTheRun) {
  Environment& env = env_for_test();
  if (env.size() < 2) GTEST_SKIP() << "needs a pair of ranks";
  const fpm::NetworkModel m = measure_network(env, tiny());
  ASSERT_EQ(m.node_of_rank().size(), static_cast<std::size_t>(env.size()));
  ASSERT_TRUE(m.has(LinkClass::node));
  expect_sensible(m.cost(LinkClass::node));
  if (env.size() == 4) {
    ASSERT_TRUE(m.has(LinkClass::network));
    expect_sensible(m.cost(LinkClass::network));
    EXPECT_EQ(m.cost(LinkClass::node).pairs, 2);     // 0-1, 2-3
    EXPECT_EQ(m.cost(LinkClass::network).pairs, 4);  // 0-2, 0-3, 1-2, 1-3
    EXPECT_EQ(m.ranks_per_node(), 2);
    EXPECT_EQ(m.link(1, 2), LinkClass::network);
    EXPECT_EQ(m.info().at("nodes"), "2");
    EXPECT_EQ(m.info().count("emulated_nodes"), 1u);
  } else {
    EXPECT_FALSE(m.has(LinkClass::network));
    EXPECT_THROW((void)m.seconds(100, LinkClass::network), Error);
    EXPECT_EQ(m.cost(LinkClass::node).pairs, 1);
    EXPECT_EQ(m.info().at("nodes"), "1");
  }
  EXPECT_EQ(m.info().at("processes"), std::to_string(env.size()));
  EXPECT_EQ(m.pairs().size(), static_cast<std::size_t>(env.size() * (env.size() - 1) / 2));
  for (const fpm::PairCost& p : m.pairs()) {
    EXPECT_GT(p.latency, 0);
    EXPECT_GT(p.bandwidth, 0);
    EXPECT_EQ(p.link, m.link(p.rank_a, p.rank_b));
  }
  // Larger messages cost more: the model is a cost, not noise.
  EXPECT_GT(m.seconds(1 << 20, LinkClass::node), m.seconds(8, LinkClass::node));
}

TEST(MeasureNetwork, EveryRankGetsTheSameModelAndItLoadsBack) {
  Environment& env = env_for_test();
  if (env.size() < 2) GTEST_SKIP() << "needs a pair of ranks";
  NetworkOptions o = tiny();
  o.max_pairs = 1;  // one pair per class
  const fpm::NetworkModel m = measure_network(env, o);
  EXPECT_EQ(m.pairs().size(), env.size() == 4 ? 2u : 1u);
  // Rank 0's model file, read back on every rank: the same model, bit for bit.
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("hit-net-mpi-" + std::to_string(env.size()) + "-" + std::to_string(::getpid()) + ".csv"))
          .string();
  std::string shared = path;
  broadcast(shared, 0, env.comm());
  if (env.rank() == 0) fpm::save_network_model(shared, m);
  barrier(env.comm());
  const fpm::NetworkModel back = fpm::load_network_model(shared);
  EXPECT_TRUE(back == m) << "rank " << env.rank() << " measured another model than rank 0";
  barrier(env.comm());
  if (env.rank() == 0) std::filesystem::remove(shared);
}

TEST(MeasureNetwork, OneProcessHasNoPairToMeasure) {
  Environment& env = env_for_test();
  if (env.size() != 1) GTEST_SKIP() << "for one process";
  try {
    (void)measure_network(env, tiny());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("at least 2 processes"));
  }
}

TEST(MeasureNetwork, BadOptionsFailOnEveryRank) {
  Environment& env = env_for_test();
  if (env.size() < 2) GTEST_SKIP() << "needs a pair of ranks";
  NetworkOptions o = tiny();
  o.sizes = {64, 64};
  EXPECT_THROW((void)measure_network(env, o), Error);
  // Nobody was left waiting: a collective still completes.
  barrier(env.comm());
}

}  // namespace
}  // namespace hit::balance
