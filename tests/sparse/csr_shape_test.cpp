// CsrShape: name maps, selection and expansion against brute force on random graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/sparse/csr_shape.hpp"

namespace {

using hit::CsrPattern;
using hit::CsrShape;
using hit::index_t;

// A random directed graph of n vertices, every row held, as global adjacency sets.
std::vector<std::set<index_t>> random_graph(index_t n, double density, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::set<index_t>> adj(static_cast<std::size_t>(n));
  for (index_t r = 0; r < n; ++r) {
    for (index_t c = 0; c < n; ++c) {
      if (u(rng) < density) adj[static_cast<std::size_t>(r)].insert(c);
    }
  }
  return adj;
}

CsrPattern rows_of(const std::vector<std::set<index_t>>& adj, const std::vector<index_t>& names) {
  CsrPattern p;
  p.global_rows = p.global_cols = static_cast<index_t>(adj.size());
  for (const index_t g : names) {
    p.names.push_back(g);
    for (const index_t c : adj[static_cast<std::size_t>(g)]) p.cols.push_back(c);
    p.row_ptr.push_back(static_cast<index_t>(p.cols.size()));
  }
  return p;
}

// Every held row's columns, translated back to global names, are the graph's.
void expect_rows_match(const CsrShape& s, const std::vector<std::set<index_t>>& adj) {
  for (index_t r = 0; r < s.rows(); ++r) {
    std::set<index_t> got;
    for (const auto c : s.row(r)) got.insert(s.to_global(c));
    EXPECT_EQ(got, adj[static_cast<std::size_t>(s.to_global(r))]) << "row " << s.to_global(r);
  }
}

TEST(CsrShape, NumbersOwnRowsFirstThenGhostsAscending) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const index_t n = 5 + seed * 7;
    const auto adj = random_graph(n, 0.1, seed);
    std::mt19937_64 rng(seed);
    std::vector<index_t> all(static_cast<std::size_t>(n));
    for (index_t k = 0; k < n; ++k) all[static_cast<std::size_t>(k)] = k;
    std::shuffle(all.begin(), all.end(), rng);
    const std::vector<index_t> mine(all.begin(), all.begin() + n / 3);
    const CsrShape s(rows_of(adj, mine));
    ASSERT_EQ(s.rows(), static_cast<index_t>(mine.size()));
    EXPECT_EQ(s.owned(), s.rows());
    std::set<index_t> ghosts;
    for (const index_t g : mine) {
      for (const index_t c : adj[static_cast<std::size_t>(g)]) {
        if (std::find(mine.begin(), mine.end(), c) == mine.end()) ghosts.insert(c);
      }
    }
    EXPECT_EQ(std::vector<index_t>(ghosts.begin(), ghosts.end()),
              std::vector<index_t>(s.ghost_names().begin(), s.ghost_names().end()));
    for (std::size_t k = 0; k < mine.size(); ++k) {
      EXPECT_EQ(s.to_global(static_cast<index_t>(k)), mine[k]);
    }
    for (index_t g = 0; g < n; ++g) {
      const index_t l = s.to_local(g);
      const bool held = std::find(mine.begin(), mine.end(), g) != mine.end() || ghosts.count(g);
      EXPECT_EQ(l >= 0, held) << "vertex " << g;
      if (l >= 0) {
        EXPECT_EQ(s.to_global(l), g);
      }
    }
    expect_rows_match(s, adj);
    EXPECT_EQ(CsrShape(s.pattern()), s);
  }
}

// A process holding few of many vertices uses sorted names instead of a table: same answers.
TEST(CsrShape, SparseNameIndexAnswersLikeTable) {
  CsrPattern p;
  p.global_rows = p.global_cols = 1'000'000'000'000;
  p.names = {999'999'999'999, 5, 123'456'789'012};
  p.cols = {0, 5, 4, 7, 999'999'999'999};
  p.row_ptr = {0, 2, 3, 5};
  const CsrShape s(p);
  EXPECT_EQ(s.rows(), 3);
  EXPECT_EQ(s.ghosts(), 3);  // 0, 4, 7
  EXPECT_EQ(s.to_local(999'999'999'999), 0);
  EXPECT_EQ(s.to_local(123'456'789'012), 2);
  EXPECT_EQ(s.to_local(4), 4);
  EXPECT_EQ(s.to_local(6), -1);
  EXPECT_EQ(s.to_local(-3), -1);
  EXPECT_EQ(s.row(2)[1], 0);
}

TEST(CsrShape, SelectKeepsNamesAndRederivesGhosts) {
  const auto adj = random_graph(40, 0.08, 7);
  std::vector<index_t> mine;
  for (index_t g = 0; g < 40; g += 2) mine.push_back(g);
  const CsrShape s(rows_of(adj, mine));
  const std::vector<index_t> pick = {3, 0, 7};
  const CsrShape sub = s.select(pick);
  ASSERT_EQ(sub.rows(), 3);
  const CsrShape direct(rows_of(adj, {mine[3], mine[0], mine[7]}));
  EXPECT_EQ(sub, direct);
  expect_rows_match(sub, adj);
}

// Brute force: the vertices within d edges of a set, by repeated relaxation.
std::set<index_t> within(const std::vector<std::set<index_t>>& adj, std::set<index_t> from, int d) {
  for (int k = 0; k < d; ++k) {
    std::set<index_t> next = from;
    for (const index_t v : from)
      next.insert(adj[static_cast<std::size_t>(v)].begin(), adj[static_cast<std::size_t>(v)].end());
    from = next;
  }
  return from;
}

TEST(CsrShape, ExpandAddsHaloRowsWithinDistance) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const index_t n = 60;
    const auto adj = random_graph(n, 0.03, seed);
    std::vector<index_t> all(static_cast<std::size_t>(n));
    for (index_t k = 0; k < n; ++k) all[static_cast<std::size_t>(k)] = k;
    const CsrShape whole(rows_of(adj, all));
    const std::vector<index_t> mine = {1, 17, 33};
    const CsrShape own(rows_of(adj, mine));
    for (int d = 1; d <= 3; ++d) {
      const CsrShape e = own.expand(whole, d);
      EXPECT_EQ(e.owned(), 3);
      const auto rows_expected = within(adj, {mine.begin(), mine.end()}, d - 1);
      std::set<index_t> rows_got;
      for (index_t r = 0; r < e.rows(); ++r) rows_got.insert(e.to_global(r));
      EXPECT_EQ(rows_got, rows_expected) << "distance " << d;
      const auto all_expected = within(adj, {mine.begin(), mine.end()}, d);
      std::set<index_t> all_got(e.names().begin(), e.names().end());
      EXPECT_EQ(all_got, all_expected) << "distance " << d;
      expect_rows_match(e, adj);
    }
    EXPECT_EQ(own.expand(whole, 1), own);
    EXPECT_THROW((void)own.expand(whole, 0), hit::Error);
  }
}

TEST(CsrShape, RejectsMalformedRows) {
  CsrPattern p;
  p.global_rows = p.global_cols = 4;
  p.names = {1, 1};
  p.row_ptr = {0, 0, 0};
  EXPECT_THROW(CsrShape{p}, hit::Error);  // a row twice
  p.names = {1, 2};
  p.cols = {5};
  p.row_ptr = {0, 1, 1};
  EXPECT_THROW(CsrShape{p}, hit::Error);  // a column outside
  p.cols = {3, 2};
  p.row_ptr = {0, 2, 2};
  EXPECT_THROW(CsrShape{p}, hit::Error);  // columns not ascending
  EXPECT_THROW((void)CsrShape{}.to_global(0), hit::Error);
  EXPECT_EQ(CsrShape{}.vertices(), 0);
}

}  // namespace
