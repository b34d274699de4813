// The pure parts of measuring a network model (hit/balance/network_benchmark.hpp): which pairs are
// measured, and the Hockney fit of their times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "hit/balance/network_benchmark.hpp"
#include "hit/core/error.hpp"

namespace hit::balance {
namespace {

using fpm::LinkClass;

int count(const std::vector<fpm::PairCost>& pairs, LinkClass c) {
  int n = 0;
  for (const auto& p : pairs) n += p.link == c ? 1 : 0;
  return n;
}

TEST(NetworkPairs, AllPairsOfSmallRunsWithTheirClass) {
  const auto pairs = network_pairs({0, 0, 1, 1}, 16);
  ASSERT_EQ(pairs.size(), 6u);
  EXPECT_EQ(count(pairs, LinkClass::node), 2);  // 0-1, 2-3
  EXPECT_EQ(count(pairs, LinkClass::network), 4);
  for (const auto& p : pairs) {
    EXPECT_LT(p.rank_a, p.rank_b);
    EXPECT_EQ(p.link, p.rank_a / 2 == p.rank_b / 2 ? LinkClass::node : LinkClass::network);
  }
  // One node: only node pairs.
  const auto one = network_pairs({0, 0}, 16);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].link, LinkClass::node);
  EXPECT_TRUE(network_pairs({0}, 16).empty());
}

TEST(NetworkPairs, LargeRunsAreSampledDeterministicallyAndSpread) {
  std::vector<int> nodes;
  for (int r = 0; r < 64; ++r) nodes.push_back(r / 8);  // 8 nodes of 8 ranks
  const auto pairs = network_pairs(nodes, 16);
  EXPECT_EQ(count(pairs, LinkClass::node), 16);
  EXPECT_EQ(count(pairs, LinkClass::network), 16);
  EXPECT_EQ(pairs, network_pairs(nodes, 16));  // every rank computes the same list
  std::set<std::pair<int, int>> distinct;
  std::set<int> first_ranks;
  for (const auto& p : pairs) {
    distinct.insert({p.rank_a, p.rank_b});
    first_ranks.insert(p.rank_a);
    EXPECT_EQ(p.link,
              nodes[static_cast<std::size_t>(p.rank_a)] == nodes[static_cast<std::size_t>(p.rank_b)]
                  ? LinkClass::node
                  : LinkClass::network);
  }
  EXPECT_EQ(distinct.size(), pairs.size());
  // Spread over the run, not the first 16 pairs of rank 0.
  EXPECT_GT(first_ranks.size(), 8u);
  EXPECT_THROW((void)network_pairs(nodes, 0), Error);
}

TEST(HockneyFit, RecoversExactLatencyAndBandwidth) {
  // t = 2 µs + n / 5 GB/s, exactly.
  const std::vector<std::int64_t> sizes = {8, 4096, 65536, 1 << 20, 4 << 20};
  std::vector<double> t;
  for (auto s : sizes) t.push_back(2e-6 + static_cast<double>(s) / 5e9);
  const HockneyFit fit = fit_hockney(sizes, t);
  EXPECT_NEAR(fit.bandwidth, 5e9, 5e9 * 1e-9);
  EXPECT_NEAR(fit.latency, 2e-6, 1e-15);
}

TEST(HockneyFit, NoiseCannotMakeLatencyNegativeOrBandwidthInvalid) {
  // Times that fall with size (noise at tiny sizes): β falls back to size / time.
  const HockneyFit flat =
      fit_hockney(std::vector<std::int64_t>{8, 64}, std::vector<double>{2e-6, 1e-6});
  EXPECT_DOUBLE_EQ(flat.bandwidth, 64 / 1e-6);
  EXPECT_GE(flat.latency, 0);
  EXPECT_NEAR(flat.latency, 2e-6 - 8 / (64 / 1e-6), 1e-18);
  // A line whose intercept is negative: α is the smallest time less its bytes, at least 0.
  const HockneyFit steep =
      fit_hockney(std::vector<std::int64_t>{100, 200}, std::vector<double>{1e-9, 1e-6});
  EXPECT_GT(steep.bandwidth, 0);
  EXPECT_EQ(steep.latency, 0.0);
}

TEST(HockneyFit, BadInputIsAnError) {
  EXPECT_THROW((void)fit_hockney(std::vector<std::int64_t>{8}, std::vector<double>{1e-6}), Error);
  EXPECT_THROW((void)fit_hockney(std::vector<std::int64_t>{8, 16}, std::vector<double>{1e-6}),
               Error);
  EXPECT_THROW((void)fit_hockney(std::vector<std::int64_t>{8, 16}, std::vector<double>{1e-6, 0}),
               Error);
  EXPECT_THROW((void)fit_hockney(std::vector<std::int64_t>{16, 8}, std::vector<double>{1e-6, 2e-6}),
               Error);
}

TEST(NetworkOptions, Checked) {
  NetworkOptions o;
  EXPECT_NO_THROW(check_network_options(o));
  o.sizes = {8, 8};
  EXPECT_THROW(check_network_options(o), Error);  // one distinct size cannot fit β
  o.sizes = {0, 8};
  EXPECT_THROW(check_network_options(o), Error);
  o.sizes = {8, (std::int64_t{1} << 30) + 1};
  EXPECT_THROW(check_network_options(o), Error);
  o = NetworkOptions{};
  o.reps = 0;
  EXPECT_THROW(check_network_options(o), Error);
  o = NetworkOptions{};
  o.max_pairs = 0;
  EXPECT_THROW(check_network_options(o), Error);
}

}  // namespace
}  // namespace hit::balance
