// The sparse layouts over several processes: the graph's rows spread over the run, the layout the
// same on every process whatever the spread, every row covered once, the figures against a
// brute-force count of the whole graph, inactive processes, and errors on every rank.
// hit-test-procs: 1 2 3 4
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/sparse/sparse_layout.hpp"
#include "hit/topology.hpp"
#include "layout_graphs.hpp"

namespace {

using hit::index_t;

constexpr index_t k_side = 24;  // a 24 x 24 grid: 576 rows

// The rows of the (permuted) grid that this rank holds when row i goes to rank i mod size.
hit::CsrPattern cyclic_rows(index_t k, std::uint64_t seed, int rank, int size) {
  const hit::CsrPattern whole = hit_test::grid_rows(k, 0, k * k, seed);
  hit::CsrPattern mine;
  mine.global_rows = mine.global_cols = whole.global_rows;
  for (index_t i = rank; i < whole.rows(); i += size) {
    const auto cols = whole.columns(i);
    mine.names.push_back(i);
    mine.cols.insert(mine.cols.end(), cols.begin(), cols.end());
    mine.row_ptr.push_back(static_cast<index_t>(mine.cols.size()));
  }
  return mine;
}

// Every rank's hash of the layout, equal to rank 0's.
void expect_same_everywhere(const hit::SparseLayout& l, MPI_Comm comm) {
  const auto all = hit::allgather(hit_test::owner_hash(l.owners()), comm);
  for (std::size_t r = 0; r < all.size(); ++r)
    EXPECT_EQ(all[r], all[0]) << l.spec() << " rank " << r;
}

TEST(SparseLayoutAcrossRanks, SameLayoutAndFiguresWhateverTheSpread) {
  auto& env = hit::Environment::current();
  const hit::CsrPattern whole = hit_test::grid_rows(k_side, 0, k_side * k_side, 3);
  const hit::CsrPattern block = hit_test::grid_block(k_side, env.size(), env.rank(), 3);
  const hit::CsrPattern cyclic = cyclic_rows(k_side, 3, env.rank(), env.size());
  const std::vector<std::string> specs = {"rows",
                                          "rows:by=nonzeros,w=1,2,3,4",
                                          "metis",
                                          "metis:w=1,3,1,3",
                                          "metis:vw=nonzeros",
                                          "rows:w=0,1,1,0"};
  for (const int procs : {env.size(), 4}) {
    const hit::Topology topo = hit::topology("array", procs);
    for (const std::string& spec : specs) {
      if (spec.find("w=") != std::string::npos && procs != 4) continue;
      const hit::SparseLayout a = hit::sparse_layout(spec, topo, block);
      const hit::SparseLayout b = hit::sparse_layout(spec, topo, cyclic);
      expect_same_everywhere(a, env.comm());
      EXPECT_EQ(a, b) << spec << ": the layout depends on how the rows were spread";
      // Every row once, and the figures of the whole graph counted here alone.
      std::vector<int> seen(static_cast<std::size_t>(whole.rows()), 0);
      for (int p = 0; p < procs; ++p) {
        for (const index_t r : a.rows_of(p)) ++seen[static_cast<std::size_t>(r)];
      }
      for (const int s : seen) ASSERT_EQ(s, 1) << spec;
      const hit_test::Figures f = hit_test::brute_force(whole, a.owners(), procs);
      EXPECT_EQ(a.edge_cut(), f.edge_cut) << spec;
      EXPECT_EQ(b.edge_cut(), f.edge_cut) << spec;
      for (std::size_t p = 0; p < f.stats.size(); ++p) {
        EXPECT_EQ(a.stats()[p], f.stats[p]) << spec << " process " << p;
        EXPECT_EQ(b.stats()[p], f.stats[p]) << spec << " process " << p;
      }
      const auto local = a.local_rows();
      if (env.rank() < procs) {
        EXPECT_EQ(std::vector<index_t>(local.begin(), local.end()),
                  std::vector<index_t>(a.rows_of(env.rank()).begin(), a.rows_of(env.rank()).end()));
      } else {
        EXPECT_TRUE(local.empty());
      }
    }
  }
}

TEST(SparseLayoutAcrossRanks, MetisCutsFewerEdgesThanRowsOnAPermutedGrid) {
  auto& env = hit::Environment::current();
  const hit::CsrPattern block = hit_test::grid_block(48, env.size(), env.rank(), 1);
  const hit::Topology topo = hit::topology("array", 4);
  const hit::SparseLayout rows = hit::sparse_layout("rows", topo, block);
  const hit::SparseLayout metis = hit::sparse_layout("metis", topo, block);
  EXPECT_LT(metis.edge_cut() * 10, rows.edge_cut());
  index_t rows_ghosts = 0;
  index_t metis_ghosts = 0;
  for (int p = 0; p < 4; ++p) {
    rows_ghosts += rows.stats()[static_cast<std::size_t>(p)].ghosts;
    metis_ghosts += metis.stats()[static_cast<std::size_t>(p)].ghosts;
  }
  EXPECT_LT(metis_ghosts * 10, rows_ghosts);
}

TEST(SparseLayoutAcrossRanks, MoreProcessesThanRows) {
  auto& env = hit::Environment::current();
  // Two rows (a single edge), held by rank 0; the others hold none.
  hit::CsrPattern mine;
  mine.global_rows = mine.global_cols = 2;
  if (env.rank() == 0) {
    mine.names = {0, 1};
    mine.row_ptr = {0, 2, 4};
    mine.cols = {0, 1, 0, 1};
  }
  for (const std::string spec : {"rows", "metis", "rows:by=nonzeros"}) {
    const hit::SparseLayout l = hit::sparse_layout(spec, hit::topology("array"), mine);
    expect_same_everywhere(l, env.comm());
    EXPECT_EQ(l.active_count(), std::min(2, env.size())) << spec;
    EXPECT_EQ(l.edge_cut(), env.size() > 1 ? 1 : 0) << spec;
    EXPECT_EQ(l.local_rows().empty(), !l.active(env.rank())) << spec;
    if (env.rank() >= 2 && spec != "rows:by=nonzeros") {  // by nonzeros: any 2 of them
      EXPECT_FALSE(l.active(env.rank())) << spec;
    }
  }
}

// Every rank throws, with the same text once the rank prefix is dropped.
void expect_error_everywhere(const std::string& spec, const hit::CsrPattern& g,
                             const std::string& words) {
  auto& env = hit::Environment::current();
  const std::string e =
      hit_test::error_of([&] { (void)hit::sparse_layout(spec, hit::topology("array", 3), g); });
  EXPECT_NE(e.find(words), std::string::npos) << spec << " on rank " << env.rank() << ": " << e;
  const auto all = hit::allgather(e, env.comm());
  for (const std::string& other : all) EXPECT_EQ(other, all[0]) << spec;
}

TEST(SparseLayoutAcrossRanks, BadSpecsFailOnEveryRank) {
  auto& env = hit::Environment::current();
  const hit::CsrPattern block = hit_test::grid_block(8, env.size(), env.rank());
  expect_error_everywhere("nosuch", block, "unknown sparse layout plug-in 'nosuch'");
  expect_error_everywhere("metis:w=1,2", block, "w has 2 weights, expected 3");
  expect_error_everywhere("rows:w=1,-1,1", block, "-1");
  expect_error_everywhere("metis:models=/nonexistent/a.csv,/nonexistent/b.csv,/nonexistent/c.csv",
                          block, "/nonexistent/a.csv");
  // A graph whose rows are not all held: found from the counts, on every rank.
  hit::CsrPattern partial = block;
  if (env.rank() == 0 && partial.rows() > 0) {
    partial.names.pop_back();
    partial.row_ptr.pop_back();
    partial.cols.resize(static_cast<std::size_t>(partial.row_ptr.back()));
  }
  expect_error_everywhere("metis", partial, "rows of a graph of 64");
  // A malformed row on one rank only.
  hit::CsrPattern broken = block;
  if (env.rank() == env.size() - 1 && broken.rows() > 0) broken.cols[0] = 99;
  expect_error_everywhere("rows", broken, "column 99");
}

}  // namespace
