// The sparse layouts `rows` and `metis` on one process (plans for 2 to 7 processes): coverage,
// shares, METIS's tolerance, the quality figures against brute-force counts, and bad specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "hit/core/environment.hpp"
#include "hit/sparse/sparse_layout.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"
#include "layout_graphs.hpp"
#include "sparse/layout_support.hpp"

namespace {

using hit::index_t;
using hit_test::error_of;
using hit_test::grid_rows;

hit::SparseLayout make(const hit::Setting& spec, int procs, const hit::CsrPattern& g,
                       const hit::SparseLayoutOptions& options = {}) {
  return hit::sparse_layout(spec, hit::topology("array", procs), g, options);
}

// Every row has exactly one owner, and rows_of lists exactly the rows owner() names, ascending.
void expect_covers(const hit::SparseLayout& l, index_t n) {
  ASSERT_EQ(l.rows(), n);
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  index_t total = 0;
  for (int p = 0; p < l.procs(); ++p) {
    const auto rows = l.rows_of(p);
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    EXPECT_EQ(static_cast<index_t>(rows.size()), l.row_count(p));
    for (const index_t r : rows) {
      ++seen[static_cast<std::size_t>(r)];
      EXPECT_EQ(l.owner(r), p);
    }
    total += static_cast<index_t>(rows.size());
  }
  EXPECT_EQ(total, n);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
}

void expect_figures(const hit::SparseLayout& l, const hit::CsrPattern& whole) {
  const hit_test::Figures f = hit_test::brute_force(whole, l.owners(), l.procs());
  ASSERT_EQ(l.stats().size(), f.stats.size());
  for (std::size_t p = 0; p < f.stats.size(); ++p) {
    EXPECT_EQ(l.stats()[p], f.stats[p]) << l.spec() << " process " << p;
  }
  EXPECT_EQ(l.edge_cut(), f.edge_cut) << l.spec();
}

// Rows with the given lengths: row r holds columns 0 .. lengths[r]-1 (a square pattern).
hit::CsrPattern rows_of_lengths(const std::vector<index_t>& lengths) {
  hit::CsrPattern g;
  g.global_rows = g.global_cols = static_cast<index_t>(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    g.names.push_back(static_cast<index_t>(r));
    for (index_t c = 0; c < lengths[r]; ++c) g.cols.push_back(c);
    g.row_ptr.push_back(static_cast<index_t>(g.cols.size()));
  }
  return g;
}

std::vector<index_t> part_nonzeros(const hit::SparseLayout& l, const hit::CsrPattern& g) {
  std::vector<index_t> nnz(static_cast<std::size_t>(l.procs()), 0);
  for (index_t r = 0; r < g.rows(); ++r) {
    nnz[static_cast<std::size_t>(l.owner(r))] += static_cast<index_t>(g.columns(r).size());
  }
  return nnz;
}

TEST(SparseLayoutRows, ContiguousRangesWithinOneRowOfTheWeightedShare) {
  const hit::CsrPattern g = grid_rows(7, 0, 49);
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"rows", {1, 1, 1, 1}},
      {"rows:w=1,2,3,4", {1, 2, 3, 4}},
      {"rows:w=0,1,0,2.5", {0, 1, 0, 2.5}}};
  for (const auto& [spec, w] : cases) {
    const hit::SparseLayout l = make(spec, 4, g);
    expect_covers(l, 49);
    const double sum = std::accumulate(w.begin(), w.end(), 0.0);
    index_t next = 0;
    for (int p = 0; p < 4; ++p) {
      const auto rows = l.rows_of(p);
      for (const index_t r : rows) EXPECT_EQ(r, next++) << spec;  // contiguous, in process order
      EXPECT_LT(
          std::abs(static_cast<double>(rows.size()) - 49 * w[static_cast<std::size_t>(p)] / sum),
          1.0)
          << spec << " process " << p;
      if (w[static_cast<std::size_t>(p)] == 0) {
        EXPECT_FALSE(l.active(p));
      }
    }
    expect_figures(l, g);
  }
}

TEST(SparseLayoutRows, ByNonzerosSharesWithinOneRow) {
  std::mt19937_64 random(7);
  std::vector<index_t> lengths(200);
  for (auto& len : lengths) len = static_cast<index_t>(random() % 40);
  lengths[3] = 150;  // one long row
  lengths[150] = 0;
  const hit::CsrPattern g = rows_of_lengths(lengths);
  const index_t total = std::accumulate(lengths.begin(), lengths.end(), index_t{0});
  const index_t longest = *std::max_element(lengths.begin(), lengths.end());
  for (const auto& [spec, w] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"rows:by=nonzeros", {1, 1, 1, 1, 1}},
           {"rows:by=nonzeros,w=5,1,0,2,2", {5, 1, 0, 2, 2}}}) {
    const hit::SparseLayout l = make(spec, 5, g);
    expect_covers(l, 200);
    const auto nnz = part_nonzeros(l, g);
    const double sum = std::accumulate(w.begin(), w.end(), 0.0);
    for (std::size_t p = 0; p < nnz.size(); ++p) {
      EXPECT_LE(std::abs(static_cast<double>(nnz[p]) - static_cast<double>(total) * w[p] / sum),
                static_cast<double>(longest))
          << spec << " process " << p;
    }
    expect_figures(l, g);
  }
  // Rows by nonzeros with none at all: by rows.
  const hit::SparseLayout empty = make("rows:by=nonzeros", 3, rows_of_lengths({0, 0, 0, 0, 0, 0}));
  for (int p = 0; p < 3; ++p) EXPECT_EQ(empty.row_count(p), 2);
}

// METIS keeps every part within (1 + ufactor/1000) of its target weight (ufactor 30 by default);
// the check allows one vertex more, since a part's weight moves by whole vertices.
void expect_within_metis_tolerance(const hit::SparseLayout& l, const std::vector<double>& w,
                                   double ufactor = 30) {
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (int p = 0; p < l.procs(); ++p) {
    const double target = static_cast<double>(l.rows()) * w[static_cast<std::size_t>(p)] / sum;
    EXPECT_LE(static_cast<double>(l.row_count(p)), target * (1 + ufactor / 1000) + 1)
        << l.spec() << " process " << p;
  }
}

TEST(SparseLayoutMetis, CoversEveryRowWithinTheTolerance) {
  const hit::CsrPattern g = grid_rows(32, 0, 1024);
  for (const auto& [spec, w] :
       std::vector<std::pair<std::string, std::vector<double>>>{{"metis", {1, 1, 1, 1}},
                                                                {"metis:w=1,3", {1, 3}},
                                                                {"metis:w=1,3,ufactor=5", {1, 3}},
                                                                {"metis:w=2,1,1", {2, 1, 1}}}) {
    const hit::SparseLayout l = make(spec, static_cast<int>(w.size()), g);
    expect_covers(l, 1024);
    expect_within_metis_tolerance(l, w, spec.find("ufactor=5") != std::string::npos ? 5 : 30);
    EXPECT_EQ(l.active_count(), static_cast<int>(w.size()));
    expect_figures(l, g);
  }
  // Vertices weighed by their nonzeros: the tolerance holds for the nonzeros.
  const hit::SparseLayout l = make("metis:vw=nonzeros,w=1,3", 2, g);
  const auto nnz = part_nonzeros(l, g);
  EXPECT_LE(static_cast<double>(nnz[0]), static_cast<double>(g.nonzeros()) / 4 * 1.03 + 5);
  EXPECT_LE(static_cast<double>(nnz[1]), static_cast<double>(g.nonzeros()) * 3 / 4 * 1.03 + 5);
  // A fixed seed: the same layout every time.
  EXPECT_EQ(make("metis:w=1,3", 2, g), make("metis:w=1,3", 2, g));
}

TEST(SparseLayoutMetis, CutsFarFewerEdgesThanRowsOnAPermutedGrid) {
  const hit::CsrPattern g = grid_rows(64, 0, 64 * 64, 1);
  const hit::SparseLayout rows = make("rows", 4, g);
  const hit::SparseLayout metis = make("metis", 4, g);
  // A random numbering cuts about 3/4 of the 2*64*63 edges by rows; METIS about 2 grid lines.
  EXPECT_GT(rows.edge_cut(), 5000);
  EXPECT_LT(metis.edge_cut() * 10, rows.edge_cut());
  EXPECT_LT(metis.edge_cut(), 400);
  expect_figures(metis, g);
  expect_figures(rows, g);
}

TEST(SparseLayoutMeasure, CountsANonSymmetricPatternAgainstBruteForce) {
  // Random rows (not symmetric, some entries on the diagonal), random owners over 5 processes.
  std::mt19937_64 random(11);
  const index_t n = 300;
  hit::CsrPattern g;
  g.global_rows = g.global_cols = n;
  for (index_t r = 0; r < n; ++r) {
    std::vector<index_t> cols;
    for (int k = 0; k < 6; ++k) cols.push_back(static_cast<index_t>(random() % n));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    g.names.push_back(r);
    g.cols.insert(g.cols.end(), cols.begin(), cols.end());
    g.row_ptr.push_back(static_cast<index_t>(g.cols.size()));
  }
  std::vector<std::int32_t> owner(static_cast<std::size_t>(n));
  for (auto& o : owner) o = static_cast<std::int32_t>(random() % 5);
  hit::SparseLayout l(hit::topology("array", 5), "given", owner);
  EXPECT_TRUE(l.stats().empty());
  l.measure(g, hit::Environment::current().comm());
  expect_figures(l, g);
  // The same figures from the layouts' own builder on a symmetric graph: each cut edge once.
  const hit::CsrPattern grid = grid_rows(4, 0, 16);
  const hit::SparseLayout halves = make("rows", 2, grid);  // rows 0-7 | 8-15: 4 vertical edges
  EXPECT_EQ(halves.edge_cut(), 4);
  EXPECT_EQ(halves.stats()[0].ghosts, 4);
  EXPECT_EQ(halves.stats()[1].send_values, 4);
}

TEST(SparseLayoutMetis, TheGraphItPartitionsIsThePatternMadeSymmetric) {
  // Random rows given in a shuffled order, against a set of unordered pairs.
  std::mt19937_64 random(5);
  const index_t n = 120;
  std::vector<index_t> names(static_cast<std::size_t>(n));
  std::iota(names.begin(), names.end(), 0);
  std::shuffle(names.begin(), names.end(), random);
  std::vector<index_t> lengths;
  std::vector<index_t> cols;
  std::vector<std::set<index_t>> expected(static_cast<std::size_t>(n));
  for (const index_t r : names) {
    std::set<index_t> row;
    for (int k = 0; k < 4; ++k) row.insert(static_cast<index_t>(random() % n));
    row.insert(r);  // a self loop, dropped
    lengths.push_back(static_cast<index_t>(row.size()));
    for (const index_t c : row) {
      cols.push_back(c);
      if (c == r) continue;
      expected[static_cast<std::size_t>(r)].insert(c);
      expected[static_cast<std::size_t>(c)].insert(r);
    }
  }
  hit::SparseLayoutRequest request{
      hit::topology("array", 2), hit::Spec::parse("metis"), nullptr, {}, MPI_COMM_NULL, 0};
  const auto g = hit::detail::symmetric_graph(names, lengths, cols, n, request);
  ASSERT_EQ(g.xadj.size(), static_cast<std::size_t>(n) + 1);
  for (index_t v = 0; v < n; ++v) {
    const std::vector<index_t> got(g.adjncy.begin() + g.xadj[static_cast<std::size_t>(v)],
                                   g.adjncy.begin() + g.xadj[static_cast<std::size_t>(v) + 1]);
    const auto& want = expected[static_cast<std::size_t>(v)];
    EXPECT_EQ(got, std::vector<index_t>(want.begin(), want.end())) << "vertex " << v;
  }
  EXPECT_EQ(g.adjncy.size(), static_cast<std::size_t>(g.xadj.back()));
  names[1] = names[0];
  EXPECT_NE(error_of([&] {
              (void)hit::detail::symmetric_graph(names, lengths, cols, n, request);
            }).find("is held by two processes"),
            std::string::npos);
}

TEST(SparseLayout, MoreProcessesThanRowsLeavesSomeInactive) {
  const hit::CsrPattern path = rows_of_lengths({2, 3, 2});  // 3 rows
  for (const std::string spec : {"rows", "rows:by=nonzeros", "metis", "metis:w=1,1,1,1,9"}) {
    const hit::SparseLayout l = make(spec, 5, path);
    expect_covers(l, 3);
    EXPECT_LE(l.active_count(), 3) << spec;
    EXPECT_GE(l.active_count(), 1) << spec;
    expect_figures(l, path);
  }
  EXPECT_EQ(make("metis", 5, path).active_count(), 3);  // k-way alone gives one part all three
  // metis gives the parts to the largest weights when there are fewer rows than processes.
  EXPECT_TRUE(make("metis:w=1,1,1,1,9", 5, path).active(4));
  // No rows at all, and no edges at all.
  hit::CsrPattern none;
  for (const std::string spec : {"rows", "metis"}) {
    const hit::SparseLayout l = make(spec, 3, none);
    EXPECT_EQ(l.rows(), 0);
    EXPECT_EQ(l.active_count(), 0);
    EXPECT_EQ(l.imbalance(), 1.0);
  }
  const hit::CsrPattern diagonal = rows_of_lengths(std::vector<index_t>(12, 0));
  const hit::SparseLayout l = make("metis", 3, diagonal);
  expect_covers(l, 12);
  EXPECT_EQ(l.edge_cut(), 0);
}

std::string write_model(const std::string& name, double seconds_per_row) {
  const auto path = std::filesystem::temp_directory_path() / ("sparse_layout_test_" + name);
  std::ofstream out(path);
  out << "d,t\n";
  for (int d : {10, 100, 1000, 10000}) out << d << "," << d * seconds_per_row << "\n";
  return path.string();
}

TEST(SparseLayout, ModelsAndTheBindingSetTheShares) {
  const hit::CsrPattern g = grid_rows(32, 0, 1024);
  const std::string slow = write_model("slow.csv", 3e-3);
  const std::string fast = write_model("fast.csv", 1e-3);
  // Constant speeds 1 : 3: the FPM sizes are 256 and 768 rows; `rows` takes them exactly.
  const hit::SparseLayout rows = make("rows:models=" + slow + "," + fast, 2, g);
  EXPECT_EQ(rows.row_count(0), 256);
  EXPECT_EQ(rows.row_count(1), 768);
  ASSERT_EQ(rows.predicted_time().size(), 2U);
  EXPECT_NEAR(rows.predicted_time()[0], 0.768, 1e-9);
  EXPECT_NEAR(rows.predicted_time()[1], 0.768, 1e-9);
  const hit::SparseLayout metis = make("metis:models=" + slow + "," + fast, 2, g);
  expect_within_metis_tolerance(metis, {1, 3});
  // The binding: an emulated device 3 times slower gets a quarter.
  const auto devices = hit::parse_device_spec("emu:0(slowdown=3),emu:1", 2);
  const hit::SparseLayout bound = make("rows:weights=binding", 2, g, {.devices = devices});
  EXPECT_EQ(bound.row_count(0), 256);
  expect_within_metis_tolerance(make("metis:weights=binding", 2, g, {.devices = devices}), {1, 3});
  EXPECT_EQ(make("rows", 2, g, {.devices = devices}).row_count(0), 512);  // equal by default
}

TEST(SparseLayout, AResolvedSettingReplacesTheSpec) {
  const hit::CsrPattern g = grid_rows(8, 0, 64);
  auto& env = hit::Environment::current();
  env.config().set("layout-sparse-test", "rows:w=1,3");
  const hit::SparseLayout l = make(hit::layout_setting(env, "sparse-test", "metis"), 2, g);
  EXPECT_EQ(l.spec(), "rows:w=1,3");
  EXPECT_EQ(l.requested(), "metis");
  EXPECT_EQ(l.set_by(), "--layout-sparse-test");
  EXPECT_EQ(l.row_count(0), 16);
  env.config().set("layout-sparse-bad", "rows:w=1", "--layout");
  const std::string e =
      error_of([&] { (void)make(hit::layout_setting(env, "sparse-bad", "metis"), 2, g); });
  EXPECT_NE(e.find("set to 'rows:w=1' by --layout: "), std::string::npos) << e;
  EXPECT_NE(e.find("w has 1 weights, expected 2"), std::string::npos) << e;
}

TEST(SparseLayout, BadSpecsAreClearErrors) {
  const hit::CsrPattern g = grid_rows(6, 0, 36);
  const auto expect_error = [&](const std::string& spec, const std::string& words, int procs = 3) {
    const std::string e = error_of([&] { (void)make(spec, procs, g); });
    EXPECT_NE(e.find(words), std::string::npos) << spec << ": " << e;
  };
  expect_error("nosuch", "unknown sparse layout plug-in 'nosuch' (registered: metis, rows)");
  expect_error("rows:w=1,2", "w has 2 weights, expected 3 (one per process)");
  expect_error("metis:w=1,2,3,4", "w has 4 weights, expected 3 (one per process)");
  expect_error("metis:w=1,-2,1", "-2");
  expect_error("rows:w=0,0,0", "every weight is 0");
  expect_error("rows:by=columns", "columns");
  expect_error("metis:ufactor=0", "ufactor");
  expect_error("metis:w=1,1,1,weights=binding", "give one of w=, models= and weights=binding");
  expect_error("metis:models=/nonexistent/a.csv,/nonexistent/b.csv", "one per process");
  expect_error("metis:models=/nonexistent/a.csv,/nonexistent/b.csv", "/nonexistent/a.csv", 2);
  expect_error("rows:models=/nonexistent/a.csv,/nonexistent/b.csv",
               "sparse layout 'rows:models=", 2);
  // The graph: square, every row held once.
  hit::CsrPattern wide = g;
  wide.global_cols = 40;
  EXPECT_NE(error_of([&] { (void)make("rows", 2, wide); }).find("needs a square graph"),
            std::string::npos);
  const hit::CsrPattern half = grid_rows(6, 0, 18);
  EXPECT_NE(error_of([&] { (void)make("metis", 2, half); }).find("hold 18 rows of a graph of 36"),
            std::string::npos);
  hit::CsrPattern unsorted = g;
  std::swap(unsorted.cols[0], unsorted.cols[1]);
  EXPECT_NE(error_of([&] { (void)make("rows", 2, unsorted); }).find("not strictly ascending"),
            std::string::npos);
}

TEST(SparseLayout, TheRegistryListsBothWithTypedParameters) {
  auto& registry = hit::Environment::current().extension<hit::SparseLayoutRegistry>();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"metis", "rows"}));
  for (const auto* plugin : registry.all()) {
    EXPECT_FALSE(plugin->description().empty());
    for (const hit::ParamInfo& p : plugin->params()) EXPECT_FALSE(p.description.empty()) << p.key;
  }
}

}  // namespace
