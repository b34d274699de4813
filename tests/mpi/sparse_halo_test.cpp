// hit-test-procs: 1 2 3 4
// SparseHalo against a serial gather of the global vector: after update() every ghost (and halo
// row) holds its owner's value, on grid and random graphs, random and block owners, both
// transports, float, double and a 12-byte struct, inactive processes, isolated vertices;
// start/wait with computation between (SpMV and repeated mean iterations against serial runs);
// traffic figures against counts from the global graph; agreed errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/sparse/sparse_halo.hpp"
#include "sparse_test_graphs.hpp"

namespace {

using hit::CsrPattern;
using hit::CsrShape;
using hit::index_t;
using hit::SparseHalo;
using hit::SparseTransport;
using sparse_test::comm;
using sparse_test::Graph;
using sparse_test::procs;
using sparse_test::rank;

const SparseTransport transports[] = {SparseTransport::neighbour, SparseTransport::persistent};

// A value no other vertex or round shares, exact in float.
template <class T>
T value_of(index_t g, int round) {
  return static_cast<T>(static_cast<double>(g % 4096) * 0.5 + 1000.0 * round + 0.25);
}

struct Triple {
  float a;
  std::int32_t b;
  float c;
  friend bool operator==(const Triple&, const Triple&) = default;
};
template <>
Triple value_of<Triple>(index_t g, int round) {
  return {static_cast<float>(g), static_cast<std::int32_t>(-g - round), static_cast<float>(round)};
}

// Checks every non-owned local vertex against the gathered global vector.
template <class T>
void expect_refreshed(const CsrShape& shape, const std::vector<T>& x, const std::string& what) {
  const auto owned = static_cast<std::size_t>(shape.owned());
  const std::vector<T> global = sparse_test::gather_global<T>(
      shape.names().first(owned), std::span<const T>(x).first(owned), shape.global_vertices());
  int wrong = 0;
  for (auto v = static_cast<index_t>(owned); v < shape.vertices(); ++v) {
    const index_t g = shape.to_global(v);
    if (!(x[static_cast<std::size_t>(v)] == global[static_cast<std::size_t>(g)]) && ++wrong < 4) {
      ADD_FAILURE() << what << ": vertex " << g << " (local " << v << ") not refreshed";
    }
  }
  EXPECT_EQ(wrong, 0) << what;
}

// What the halo of `me` must move, counted from the global graph: per peer, values sent (own
// rows the peer's rows reference) and received (ghosts the peer owns).
std::vector<hit::PeerTraffic> expected_traffic(const Graph& g,
                                               const std::vector<std::int32_t>& owners, int me) {
  std::map<int, std::set<index_t>> sent;
  std::map<int, std::set<index_t>> received;
  for (std::size_t u = 0; u < g.size(); ++u) {
    for (const index_t c : g[u]) {
      const int ou = owners[u];
      const int oc = owners[static_cast<std::size_t>(c)];
      if (ou == oc) continue;
      if (oc == me) sent[ou].insert(c);
      if (ou == me) received[oc].insert(c);
    }
  }
  std::map<int, hit::PeerTraffic> by_peer;
  for (const auto& [p, s] : sent) by_peer[p] = {p, static_cast<index_t>(s.size()), 0};
  for (const auto& [p, s] : received) {
    by_peer[p].peer = p;
    by_peer[p].received = static_cast<index_t>(s.size());
  }
  std::vector<hit::PeerTraffic> out;
  for (const auto& [p, t] : by_peer) out.push_back(t);
  return out;
}

template <class T>
void check_update(const Graph& g, const std::vector<std::int32_t>& owners, SparseTransport t,
                  unsigned order_seed, const std::string& what) {
  const CsrShape shape(sparse_test::rows_of(g, owners, rank(), order_seed));
  SparseHalo halo(shape, owners, comm(), {.transport = t, .label = what});
  EXPECT_EQ(halo.transport(), t);
  const std::string where = what + " (" + std::string(hit::to_string(t)) + ")";
  std::vector<T> x(static_cast<std::size_t>(shape.vertices()), value_of<T>(-1, 0));
  for (int round = 1; round <= 2; ++round) {
    for (index_t r = 0; r < shape.owned(); ++r) {
      x[static_cast<std::size_t>(r)] = value_of<T>(shape.to_global(r), round);
    }
    halo.update(x);
    expect_refreshed(shape, x, where + " round " + std::to_string(round));
  }
  const auto expected = expected_traffic(g, owners, rank());
  EXPECT_EQ(halo.traffic(), expected) << where;
  index_t sent = 0;
  index_t received = 0;
  for (const auto& p : expected) {
    sent += p.sent;
    received += p.received;
  }
  EXPECT_EQ(halo.values_sent(), sent) << where;
  EXPECT_EQ(halo.values_received(), received) << where;
  EXPECT_EQ(received, shape.ghosts()) << where;
  EXPECT_EQ(halo.neighbours(), static_cast<int>(expected.size())) << where;
  EXPECT_EQ(halo.bytes_sent(sizeof(T)), sent * static_cast<index_t>(sizeof(T))) << where;
  EXPECT_EQ(halo.receive_range(), (hit::LocalRange{shape.owned(), shape.vertices()})) << where;
}

template <class T>
void check_all_graphs(SparseTransport t) {
  const int p = procs();
  const Graph grid = sparse_test::grid_graph(13);
  const auto grid_size = static_cast<index_t>(grid.size());
  check_update<T>(grid, sparse_test::block_owners(grid_size, p), t, 0, "grid, block rows");
  check_update<T>(grid, sparse_test::random_owners(grid_size, p, 5), t, 0, "grid, random owners");
  check_update<T>(grid, sparse_test::random_owners(grid_size, p, 6), t, 77, "grid, rows shuffled");
  const Graph directed = sparse_test::random_graph(150, 0.03, 11, false, 7);
  check_update<T>(directed, sparse_test::random_owners(150, p, 8), t, 0, "directed, isolated");
  const Graph symmetric = sparse_test::random_graph(90, 0.05, 12, true);
  check_update<T>(symmetric, sparse_test::random_owners(90, p, 9, 1), t, 3,
                  "symmetric, rank 1 inactive");
}

TEST(SparseHalo, GhostsEqualTheOwnersValuesDouble) {
  for (const auto t : transports) check_all_graphs<double>(t);
}

TEST(SparseHalo, GhostsEqualTheOwnersValuesFloat) {
  for (const auto t : transports) check_all_graphs<float>(t);
}

TEST(SparseHalo, AnyTriviallyCopyableElement) {
  const Graph g = sparse_test::random_graph(120, 0.04, 21, false, 5);
  for (const auto t : transports) {
    check_update<Triple>(g, sparse_test::random_owners(120, procs(), 22), t, 0, "12-byte struct");
  }
}

TEST(SparseHalo, AutomaticIsOneOfTheTwo) {
  const Graph g = sparse_test::grid_graph(8);
  const auto owners = sparse_test::block_owners(64, procs());
  const CsrShape shape(sparse_test::rows_of(g, owners, rank()));
  SparseHalo halo(shape, owners, comm());
  EXPECT_NE(halo.transport(), SparseTransport::automatic);
  std::vector<double> x(static_cast<std::size_t>(shape.vertices()), -1.0);
  for (index_t r = 0; r < shape.owned(); ++r) x[static_cast<std::size_t>(r)] = shape.to_global(r);
  halo.update(x);
  expect_refreshed(shape, x, "automatic");
}

// Everything owned by the last process: the others hold the empty shape (or an empty pattern)
// and still take part in every update.
TEST(SparseHalo, InactiveProcessesTakePart) {
  const Graph g = sparse_test::random_graph(60, 0.08, 31, true, 4);
  const std::vector<std::int32_t> owners(60, procs() - 1);
  for (const auto t : transports) {
    const CsrShape shape = rank() == procs() - 1
                               ? CsrShape(sparse_test::rows_of(g, owners, rank()))
                               : (rank() % 2 == 0 ? CsrShape()
                                                  : CsrShape(CsrPattern{.global_rows = 60,
                                                                        .global_cols = 60,
                                                                        .names = {},
                                                                        .row_ptr = {0},
                                                                        .cols = {}}));
    SparseHalo halo(shape, owners, comm(), {.transport = t});
    std::vector<double> x(static_cast<std::size_t>(shape.vertices()), 2.0);
    halo.update(x);
    halo.update(std::span<double>(x));
    EXPECT_EQ(halo.neighbours(), 0);
    EXPECT_EQ(halo.values_sent(), 0);
    EXPECT_EQ(shape.ghosts(), 0);
  }
}

// y = A x with the interior rows computed while the halo travels (A: the graph, entries
// 1 + (r + c) mod 3), against the serial product of the gathered x.
TEST(SparseHalo, InteriorComputesBetweenStartAndWait) {
  const int p = procs();
  const Graph g = sparse_test::random_graph(200, 0.02, 41, false, 9);
  const auto owners = sparse_test::random_owners(200, p, 42);
  auto entry = [](index_t r, index_t c) { return 1.0 + static_cast<double>((r + c) % 3); };
  for (const auto t : transports) {
    const CsrShape shape(sparse_test::rows_of(g, owners, rank()));
    SparseHalo halo(shape, owners, comm(), {.transport = t});
    std::vector<double> x(static_cast<std::size_t>(shape.vertices()), -1.0);
    for (index_t r = 0; r < shape.owned(); ++r) {
      x[static_cast<std::size_t>(r)] = 0.5 * static_cast<double>(shape.to_global(r)) + 3;
    }
    const auto owned = static_cast<std::size_t>(shape.owned());
    const std::vector<double> global = sparse_test::gather_global<double>(
        shape.names().first(owned), std::span<const double>(x).first(owned), 200);
    std::vector<double> y(owned, 0.0);
    auto row_product = [&](index_t r) {
      double s = 0;
      for (const auto c : shape.row(r)) {
        s += entry(shape.to_global(r), shape.to_global(c)) * x[static_cast<std::size_t>(c)];
      }
      y[static_cast<std::size_t>(r)] = s;
    };
    auto interior = [&](index_t r) {
      const auto cols = shape.row(r);
      return std::all_of(cols.begin(), cols.end(), [&](auto c) { return c < shape.owned(); });
    };
    halo.start(x);
    for (index_t r = 0; r < shape.owned(); ++r) {
      if (interior(r)) row_product(r);
    }
    halo.wait();
    for (index_t r = 0; r < shape.owned(); ++r) {
      if (!interior(r)) row_product(r);
    }
    for (index_t r = 0; r < shape.owned(); ++r) {
      const index_t gr = shape.to_global(r);
      double want = 0;
      for (const index_t c : g[static_cast<std::size_t>(gr)]) {
        want += entry(gr, c) * global[static_cast<std::size_t>(c)];
      }
      EXPECT_EQ(y[static_cast<std::size_t>(r)], want) << "row " << gr;
    }
  }
}

// Ten rounds of "every vertex takes the mean of its neighbours" with the halo between rounds,
// against the same rounds on the whole graph in one process.
TEST(SparseHalo, RepeatedUpdatesMatchASerialRun) {
  const Graph g = sparse_test::random_graph(150, 0.04, 51, true, 6);
  const auto owners = sparse_test::random_owners(150, procs(), 52);
  std::vector<double> serial(150);
  for (std::size_t v = 0; v < serial.size(); ++v) serial[v] = static_cast<double>(v % 17);
  for (const auto t : transports) {
    const CsrShape shape(sparse_test::rows_of(g, owners, rank(), 5));
    SparseHalo halo(shape, owners, comm(), {.transport = t});
    std::vector<double> x(static_cast<std::size_t>(shape.vertices()));
    for (index_t v = 0; v < shape.owned(); ++v) {
      x[static_cast<std::size_t>(v)] = serial[static_cast<std::size_t>(shape.to_global(v))];
    }
    std::vector<double> want = serial;
    for (int round = 0; round < 10; ++round) {
      halo.update(x);
      std::vector<double> next(x);
      std::vector<double> next_want(want);
      for (index_t r = 0; r < shape.owned(); ++r) {
        if (shape.row(r).empty()) continue;
        double s = 0;
        for (const auto c : shape.row(r)) s += x[static_cast<std::size_t>(c)];
        next[static_cast<std::size_t>(r)] = s / static_cast<double>(shape.row(r).size());
      }
      for (std::size_t v = 0; v < g.size(); ++v) {
        if (g[v].empty()) continue;
        double s = 0;
        for (const index_t c : g[v]) s += want[static_cast<std::size_t>(c)];
        next_want[v] = s / static_cast<double>(g[v].size());
      }
      x.swap(next);
      want.swap(next_want);
    }
    for (index_t r = 0; r < shape.owned(); ++r) {
      EXPECT_EQ(x[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(shape.to_global(r))]);
    }
  }
}

// A shape expanded by two edges: its halo rows are refreshed as its ghosts are.
TEST(SparseHalo, HaloRowsOfAnExpansionAreRefreshed) {
  const Graph g = sparse_test::grid_graph(10);
  const auto owners = sparse_test::random_owners(100, procs(), 61);
  const CsrShape whole(sparse_test::rows_of(g, std::vector<std::int32_t>(100, 0), 0));
  const CsrShape shape = CsrShape(sparse_test::rows_of(g, owners, rank())).expand(whole, 2);
  for (const auto t : transports) {
    SparseHalo halo(shape, owners, comm(), {.transport = t});
    EXPECT_EQ(halo.values_received(), shape.vertices() - shape.owned());
    std::vector<double> x(static_cast<std::size_t>(shape.vertices()), -5.0);
    for (index_t r = 0; r < shape.owned(); ++r) x[static_cast<std::size_t>(r)] = shape.to_global(r);
    halo.update(x);
    expect_refreshed(shape, x, "distance 2");
  }
}

TEST(SparseHalo, StartedTwiceIsAnError) {
  const Graph g = sparse_test::grid_graph(6);
  const auto owners = sparse_test::block_owners(36, procs());
  const CsrShape shape(sparse_test::rows_of(g, owners, rank()));
  SparseHalo halo(shape, owners, comm(), {.label = "twice"});
  std::vector<double> x(static_cast<std::size_t>(shape.vertices()));
  halo.start(x);
  EXPECT_THROW(halo.start(x), hit::Error);
  halo.wait();
  std::vector<double> short_x(x.size() + 1);
  EXPECT_THROW(halo.start(short_x), hit::Error);
}

// One rank passes owners of another size: every rank throws the same clear Error.
TEST(SparseHalo, MismatchedOwnersSizeIsAnErrorEverywhere) {
  const Graph g = sparse_test::grid_graph(6);
  auto owners = sparse_test::block_owners(36, procs());
  const CsrShape shape(sparse_test::rows_of(g, owners, rank()));
  if (rank() == procs() - 1) owners.push_back(0);
  try {
    SparseHalo halo(shape, owners, comm());
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    const std::string text = e.what();
    EXPECT_NE(text.find("owners has 37 entries"), std::string::npos) << text;
  }
}

// Owners that give a process's own row to another: agreed Error naming the row.
TEST(SparseHalo, OwnersThatDisagreeWithTheShapeAreAnErrorEverywhere) {
  const Graph g = sparse_test::grid_graph(6);
  const auto owners = sparse_test::block_owners(36, procs());
  const CsrShape shape(sparse_test::rows_of(g, owners, rank()));
  auto wrong = owners;
  wrong[0] = procs() > 1 ? 1 : 0;
  if (procs() == 1) wrong[0] = 0;
  auto build = [&] { SparseHalo halo(shape, wrong, comm()); };
  if (procs() == 1) {
    EXPECT_NO_THROW(build());
    return;
  }
  try {
    build();
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("row 0"), std::string::npos) << e.what();
  }
}

}  // namespace
