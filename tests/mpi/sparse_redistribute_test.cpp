// hit-test-procs: 1 2 3 4
// Redistribution of sparse rows and vertex values between layouts: rows land where the new
// owners say, sorted by name, with the global graph's columns and values; A -> B -> A gives the
// original back; values follow their vertices into any order the receiver asks; inactive
// processes; the large-count path of the all-to-all-v; agreed errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/sparse/sparse_redistribute.hpp"
#include "sparse_test_graphs.hpp"

namespace {

using hit::CsrPattern;
using hit::CsrRows;
using hit::index_t;
using sparse_test::comm;
using sparse_test::Graph;
using sparse_test::procs;
using sparse_test::rank;

template <class T>
T entry(index_t r, index_t c) {
  return static_cast<T>(static_cast<double>(r % 97) + 0.125 * static_cast<double>(c % 13));
}

template <class T>
CsrRows<T> with_values(const CsrPattern& p) {
  CsrRows<T> rows;
  static_cast<CsrPattern&>(rows) = p;
  for (index_t r = 0; r < p.rows(); ++r) {
    for (const index_t c : p.columns(r)) rows.values.push_back(entry<T>(p.names[r], c));
  }
  return rows;
}

// `rows` are exactly the rows `owners` gives this process, ascending, with the graph's columns
// and entry() values.
template <class T>
void expect_placed(const CsrRows<T>& rows, const Graph& g, const std::vector<std::int32_t>& owners,
                   const std::string& what) {
  std::vector<index_t> want;
  for (std::size_t v = 0; v < owners.size(); ++v) {
    if (owners[v] == rank()) want.push_back(static_cast<index_t>(v));
  }
  EXPECT_EQ(rows.names, want) << what;
  EXPECT_EQ(rows.global_rows, static_cast<index_t>(g.size())) << what;
  EXPECT_NO_THROW(rows.check(what));
  if (rows.names != want) return;
  for (index_t r = 0; r < rows.rows(); ++r) {
    const auto& cols = g[static_cast<std::size_t>(rows.names[r])];
    const std::span<const index_t> got = rows.columns(r);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), cols.begin(), cols.end())) << what;
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(rows.row_values(r)[k], entry<T>(rows.names[r], got[k])) << what;
    }
  }
}

template <class T>
void round_trip(const Graph& g, const std::vector<std::int32_t>& a,
                const std::vector<std::int32_t>& b, unsigned seed, const std::string& what) {
  const CsrRows<T> mine = with_values<T>(sparse_test::rows_of(g, a, rank(), seed));
  const CsrRows<T> at_b = hit::redistribute(mine, b, comm());
  expect_placed(at_b, g, b, what + ", at B");
  const CsrRows<T> back = hit::redistribute(at_b, a, comm());
  expect_placed(back, g, a, what + ", back at A");
  const CsrRows<T> sorted = with_values<T>(sparse_test::rows_of(g, a, rank()));
  EXPECT_EQ(back.names, sorted.names) << what;
  EXPECT_EQ(back.row_ptr, sorted.row_ptr) << what;
  EXPECT_EQ(back.cols, sorted.cols) << what;
  EXPECT_EQ(back.values, sorted.values) << what;
}

TEST(SparseRedistribute, RowsGoToTheirNewOwnersAndBack) {
  const int p = procs();
  const Graph grid = sparse_test::grid_graph(11);
  const auto n = static_cast<index_t>(grid.size());
  const auto blocks = sparse_test::block_owners(n, p);
  const auto random = sparse_test::random_owners(n, p, 3);
  round_trip<double>(grid, blocks, random, 0, "grid, blocks to random");
  round_trip<float>(grid, random, blocks, 17, "grid, random (shuffled) to blocks, float");
  const Graph directed = sparse_test::random_graph(130, 0.03, 4, false, 6);
  round_trip<double>(directed, sparse_test::random_owners(130, p, 5),
                     sparse_test::random_owners(130, p, 6, 1), 2, "directed, rank 1 emptied");
  round_trip<float>(directed, std::vector<std::int32_t>(130, 0), sparse_test::block_owners(130, p),
                    0, "all on rank 0 to blocks");
}

TEST(SparseRedistribute, PatternAlone) {
  const Graph g = sparse_test::random_graph(80, 0.05, 8, true, 3);
  const auto a = sparse_test::random_owners(80, procs(), 9);
  const auto b = sparse_test::random_owners(80, procs(), 10);
  const CsrPattern at_b = hit::redistribute(sparse_test::rows_of(g, a, rank()), b, comm());
  const CsrPattern want = sparse_test::rows_of(g, b, rank());
  EXPECT_EQ(at_b.names, want.names);
  EXPECT_EQ(at_b.row_ptr, want.row_ptr);
  EXPECT_EQ(at_b.cols, want.cols);
}

// A process that holds nothing may pass an empty pattern without extents.
TEST(SparseRedistribute, EmptyProcessesWithoutExtents) {
  const Graph g = sparse_test::grid_graph(6);
  const std::vector<std::int32_t> a(36, 0);
  const auto b = sparse_test::block_owners(36, procs());
  const CsrRows<double> mine =
      rank() == 0 ? with_values<double>(sparse_test::rows_of(g, a, 0)) : CsrRows<double>{};
  expect_placed(hit::redistribute(mine, b, comm()), g, b, "from rank 0 alone");
}

TEST(SparseRedistribute, ValuesFollowTheirVertices) {
  const int p = procs();
  const index_t n = 300;
  const auto a = sparse_test::random_owners(n, p, 11);
  const auto b = sparse_test::random_owners(n, p, 12, 0);
  auto value = [](index_t g) { return 0.5 * static_cast<double>(g) - 7; };
  std::vector<index_t> names_a;
  std::vector<double> values_a;
  for (index_t v = n - 1; v >= 0; --v) {
    if (a[static_cast<std::size_t>(v)] != rank()) continue;
    names_a.push_back(v);
    values_a.push_back(value(v));
  }
  // The receiver's order: its rows shuffled, as an interior-first order would have them.
  std::vector<index_t> names_b;
  for (index_t v = 0; v < n; ++v) {
    if (b[static_cast<std::size_t>(v)] == rank()) names_b.push_back(v);
  }
  std::shuffle(names_b.begin(), names_b.end(), std::mt19937(5));
  const std::vector<double> at_b =
      hit::redistribute_values<double>(names_a, values_a, b, names_b, comm());
  ASSERT_EQ(at_b.size(), names_b.size());
  for (std::size_t i = 0; i < at_b.size(); ++i) EXPECT_EQ(at_b[i], value(names_b[i]));
  const std::vector<double> back =
      hit::redistribute_values<double>(names_b, at_b, a, names_a, comm());
  EXPECT_EQ(back, values_a);
  const std::vector<float> as_float = hit::redistribute_values<float>(
      names_a, std::vector<float>(values_a.begin(), values_a.end()), b, names_b, comm());
  for (std::size_t i = 0; i < as_float.size(); ++i) {
    EXPECT_EQ(as_float[i], static_cast<float>(value(names_b[i])));
  }
}

// The MPI_Alltoallv_c path (forced by a tiny limit) moves what the int path moves.
TEST(SparseRedistribute, LargeCountPathMatches) {
  const int p = procs();
  std::vector<index_t> send_counts(static_cast<std::size_t>(p));
  std::vector<index_t> receive_counts(static_cast<std::size_t>(p));
  std::vector<index_t> send;
  for (int q = 0; q < p; ++q) {
    send_counts[static_cast<std::size_t>(q)] = 2 * rank() + q + 1;
    receive_counts[static_cast<std::size_t>(q)] = 2 * q + rank() + 1;
    for (index_t i = 0; i < 2 * rank() + q + 1; ++i) send.push_back(1000 * rank() + 100 * q + i);
  }
  std::vector<index_t> want;
  for (int q = 0; q < p; ++q) {
    for (index_t i = 0; i < 2 * q + rank() + 1; ++i) want.push_back(1000 * q + 100 * rank() + i);
  }
  for (const index_t limit : {index_t{INT_MAX}, index_t{3}}) {
    std::vector<index_t> got(want.size(), -1);
    hit::detail::alltoallv(send.data(), send_counts, got.data(), receive_counts, MPI_INT64_T,
                           comm(), limit);
    EXPECT_EQ(got, want) << "limit " << limit;
  }
}

template <class F>
void expect_error_everywhere(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error (wanted one saying '" << fragment << "')";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SparseRedistribute, BadInputsAreErrorsEverywhere) {
  const Graph g = sparse_test::grid_graph(5);
  const auto a = sparse_test::block_owners(25, procs());
  const CsrRows<double> mine = with_values<double>(sparse_test::rows_of(g, a, rank()));
  auto short_owners = a;
  if (rank() == procs() - 1) short_owners.pop_back();
  expect_error_everywhere([&] { (void)hit::redistribute(mine, short_owners, comm()); },
                          "owners has 24 entries");
  auto outside = a;
  outside[3] = procs();
  expect_error_everywhere([&] { (void)hit::redistribute(mine, outside, comm()); },
                          "outside the " + std::to_string(procs()) + " processes");
  // Row 0 held twice (by every process).
  CsrRows<double> twice = mine;
  if (a[0] != rank()) {
    twice = with_values<double>(sparse_test::rows_of(g, std::vector<std::int32_t>(25, 0), 0));
    twice.names.resize(1);
    twice.row_ptr.resize(2);
    twice.cols.resize(static_cast<std::size_t>(twice.row_ptr[1]));
    twice.values.resize(twice.cols.size());
  }
  if (procs() > 1) {
    expect_error_everywhere([&] { (void)hit::redistribute(twice, a, comm()); },
                            "row 0 is held by two processes");
  }
  std::vector<index_t> names;
  std::vector<double> values;
  for (std::size_t v = 0; v < a.size(); ++v) {
    if (a[v] == rank()) names.push_back(static_cast<index_t>(v));
  }
  values.assign(names.size() + (rank() == 0 ? 1 : 0), 1.0);
  expect_error_everywhere(
      [&] { (void)hit::redistribute_values<double>(names, values, a, names, comm()); },
      "values for");
  values.resize(names.size());
  const std::vector<index_t> not_mine{rank() == 0 ? index_t{24} : index_t{0}};
  if (procs() > 1) {
    expect_error_everywhere(
        [&] { (void)hit::redistribute_values<double>(names, values, a, not_mine, comm()); },
        "among its new names");
  }
  // Vertex 0 given by nobody.
  std::vector<index_t> fewer = names;
  if (!fewer.empty() && fewer.front() == 0) fewer.erase(fewer.begin());
  const std::vector<double> fewer_values(fewer.size(), 1.0);
  expect_error_everywhere(
      [&] { (void)hit::redistribute_values<double>(fewer, fewer_values, a, names, comm()); },
      "no process gives vertex 0");
}

}  // namespace
