// hit-test-procs: 1 2 3 4
// The interior-first order against a brute-force classification from the global graph, and a
// device-resident vector on an emulated device: an update moves exactly the sent range out of
// the device and the received range into it (the device's copy counters), and the ghosts the
// device then holds are the owners' device-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "devices/rebind.hpp"
#include "hit/hit.hpp"
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

// The rows of `me` that reference no other process's vertex and that no other process's row
// references, from the global graph.
std::set<index_t> brute_interior(const Graph& g, const std::vector<std::int32_t>& owners, int me) {
  std::set<index_t> boundary;
  for (std::size_t u = 0; u < g.size(); ++u) {
    for (const index_t c : g[u]) {
      const int ou = owners[u];
      const int oc = owners[static_cast<std::size_t>(c)];
      if (ou == me && oc != me) boundary.insert(static_cast<index_t>(u));
      if (ou != me && oc == me) boundary.insert(c);
    }
  }
  std::set<index_t> interior;
  for (std::size_t v = 0; v < g.size(); ++v) {
    if (owners[v] == me && boundary.count(static_cast<index_t>(v)) == 0) {
      interior.insert(static_cast<index_t>(v));
    }
  }
  return interior;
}

void check_order(const Graph& g, const std::vector<std::int32_t>& owners, unsigned seed,
                 const std::string& what) {
  const CsrPattern mine = sparse_test::rows_of(g, owners, rank(), seed);
  const hit::InteriorOrder order = hit::interior_first_order(mine, owners, comm());
  const std::set<index_t> want = brute_interior(g, owners, rank());
  ASSERT_EQ(order.order.size(), mine.names.size()) << what;
  EXPECT_EQ(order.interior, static_cast<index_t>(want.size())) << what;
  std::vector<index_t> sorted = order.order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    EXPECT_EQ(sorted[i], static_cast<index_t>(i)) << what << ": not a permutation";
  }
  for (std::size_t i = 0; i < order.order.size(); ++i) {
    const index_t name = mine.names[static_cast<std::size_t>(order.order[i])];
    EXPECT_EQ(want.count(name) == 1, static_cast<index_t>(i) < order.interior)
        << what << ": row " << name;
    // Each part keeps the order of `mine`.
    if (i > 0 && (static_cast<index_t>(i) < order.interior) ==
                     (static_cast<index_t>(i) - 1 < order.interior)) {
      EXPECT_LT(order.order[i - 1], order.order[i]) << what;
    }
  }
  // The shape in that order: what the halo sends lies in [interior, rows).
  const CsrShape shape(hit::rows_in_order(mine, order.order));
  const SparseHalo halo(shape, owners, comm());
  if (halo.values_sent() > 0) {
    EXPECT_GE(halo.send_range().first, order.interior) << what;
    EXPECT_LE(halo.send_range().last, shape.rows()) << what;
  }
  EXPECT_EQ(halo.receive_range(), (hit::LocalRange{shape.rows(), shape.vertices()})) << what;
}

TEST(InteriorFirstOrder, MatchesABruteForceClassification) {
  const int p = procs();
  const Graph grid = sparse_test::grid_graph(12);
  check_order(grid, sparse_test::block_owners(144, p), 0, "grid, block rows");
  check_order(grid, sparse_test::random_owners(144, p, 3), 9, "grid, random owners");
  const Graph directed = sparse_test::random_graph(120, 0.02, 4, false, 5);
  check_order(directed, sparse_test::random_owners(120, p, 6), 0, "directed");
  check_order(directed, sparse_test::random_owners(120, p, 5, 0), 0, "directed, rank 0 empty");
}

TEST(InteriorFirstOrder, ValuesFollowTheRows) {
  hit::CsrRows<double> rows;
  rows.global_rows = rows.global_cols = 10;
  rows.names = {4, 7, 9};
  rows.row_ptr = {0, 2, 2, 3};
  rows.cols = {1, 4, 9};
  rows.values = {1.5, 2.5, 3.5};
  const std::vector<index_t> order{2, 0, 1};
  const hit::CsrRows<double> out = hit::rows_in_order(rows, order);
  EXPECT_EQ(out.names, (std::vector<index_t>{9, 4, 7}));
  EXPECT_EQ(out.row_ptr, (std::vector<index_t>{0, 1, 3, 3}));
  EXPECT_EQ(out.cols, (std::vector<index_t>{9, 1, 4}));
  EXPECT_EQ(out.values, (std::vector<double>{3.5, 1.5, 2.5}));
  const std::vector<index_t> twice{0, 0, 1};
  EXPECT_THROW((void)hit::rows_in_order(rows, twice), hit::Error);
}

TEST(InteriorFirstOrder, WrongOwnersAreAnErrorEverywhere) {
  const Graph g = sparse_test::grid_graph(5);
  auto owners = sparse_test::block_owners(25, procs());
  const CsrPattern mine = sparse_test::rows_of(g, owners, rank());
  if (rank() == 0) owners.pop_back();
  EXPECT_THROW((void)hit::interior_first_order(mine, owners, comm()), hit::Error);
}

// Binds this rank to its own emulated device (restored afterwards), whose copies are counted.
class ResidentHalo : public ::testing::Test {
 protected:
  void SetUp() override {
    hit::Environment& env = hit::Environment::current();
    original_ = hit::device(env).binding();
    hit::DeviceBinding emu = hit::parse_device_spec("emu:0(mem=64MiB)", 1).front();
    emu.index = env.rank();
    dev_ = &hit::rebind_device(env, emu);
  }
  void TearDown() override { hit::rebind_device(hit::Environment::current(), original_); }
  hit::Device& dev() { return *dev_; }

 private:
  hit::DeviceBinding original_;
  hit::Device* dev_ = nullptr;
};

// x = 2 x + 1 over the own rows, on the device.
hit::Kernel<hit::View<double>> twice_plus_one() {
  hit::Kernel<hit::View<double>> k("twice_plus_one");
  k.cpu([](const hit::KernelContext& ctx, hit::View<double> x) {
    for (index_t i = ctx.block.begin[0]; i < ctx.block.end[0]; ++i) x(i) = 2 * x(i) + 1;
  });
  return k;
}

// One update of a resident vector after a launch wrote the own rows on the device: returns the
// bytes that went out of and into the device during the update, and checks the ghosts.
void check_resident(hit::Device& dev, const CsrShape& shape, const std::vector<std::int32_t>& o,
                    SparseTransport t, const std::string& what) {
  SparseHalo halo(shape, o, comm(), {.transport = t});
  const index_t n = shape.vertices();
  hit::Resident<double> x;
  if (n > 0) x = hit::Resident<double>(hit::Tile<double>(hit::Shape{hit::Sig(0, n)}));
  for (index_t v = 0; v < n; ++v) {
    x.host().data()[v] = v < shape.owned() ? static_cast<double>(shape.to_global(v)) : -1.0;
  }
  x.modified_on_host();
  if (shape.owned() > 0) {
    hit::launch(twice_plus_one(), hit::partition("single", hit::Shape{hit::Sig(0, shape.owned())}),
                hit::inout(x));
  }
  dev.reset_counters();
  halo.update(x);
  const hit::DeviceCounters c = dev.counters();
  EXPECT_EQ(c.bytes_out, static_cast<std::uint64_t>(halo.send_range().size()) * sizeof(double))
      << what;
  EXPECT_EQ(c.bytes_in, static_cast<std::uint64_t>(halo.receive_range().size()) * sizeof(double))
      << what;
  x.sync_to_host();
  const auto owned = static_cast<std::size_t>(shape.owned());
  const std::span<const double> host(n > 0 ? x.host().data() : nullptr,
                                     static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < owned; ++r) {
    EXPECT_EQ(host[r], 2.0 * static_cast<double>(shape.names()[r]) + 1) << what;
  }
  const std::vector<double> global = sparse_test::gather_global<double>(
      shape.names().first(owned), host.first(owned), shape.global_vertices());
  for (auto v = owned; v < static_cast<std::size_t>(n); ++v) {
    EXPECT_EQ(host[v], global[static_cast<std::size_t>(shape.names()[v])]) << what;
  }
}

TEST_F(ResidentHalo, MovesOnlyTheBoundaryAndTheGhosts) {
  const Graph g = sparse_test::grid_graph(16);
  const auto owners = sparse_test::block_owners(256, procs());
  const CsrPattern mine = sparse_test::rows_of(g, owners, rank());
  const hit::InteriorOrder order = hit::interior_first_order(mine, owners, comm());
  const CsrShape shape(hit::rows_in_order(mine, order.order));
  for (const auto t : {SparseTransport::neighbour, SparseTransport::persistent}) {
    check_resident(dev(), shape, owners, t, "interior first");
  }
  // In that order the download is the boundary rows alone: on a 16-wide grid in row blocks,
  // at most two grid lines per neighbour.
  const SparseHalo halo(shape, owners, comm());
  EXPECT_LE(halo.send_range().size(), 16 * halo.neighbours());
  if (halo.values_sent() > 0) {
    EXPECT_GE(halo.send_range().first, order.interior);
  }
}

TEST_F(ResidentHalo, InAnyOrderTheBoundingSentRangeMoves) {
  const Graph g = sparse_test::random_graph(200, 0.02, 71, true, 8);
  const auto owners = sparse_test::random_owners(200, procs(), 72, 1);
  const CsrShape shape(sparse_test::rows_of(g, owners, rank(), 13));
  check_resident(dev(), shape, owners, SparseTransport::persistent, "natural order");
  check_resident(dev(), shape, owners, SparseTransport::neighbour, "natural order");
}

}  // namespace
