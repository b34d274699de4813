// Hierarchical partitioning (INPA over nodes, IDPA over each node's devices) at 1–4 processes, two
// ranks per emulated node. The devices are simulated (a kernel that reports the time its speed
// gives), so the expected balance is known exactly; one test runs the real panel kernel through
// hit::launch to check the whole path.
// hit-test-procs: 1 2 3 4
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <numeric>

#include <unistd.h>

#include "../support/error_text.hpp"
#include "hit/balance/hierarchical.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "hit/topology.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {
using namespace hit::fpm;  // the models the tests build and compare
namespace {

using hit_test::error_of;
using ::testing::HasSubstr;

// Elements of C per second each rank's simulated device updates (rank 0 fastest).
constexpr double speeds[] = {8e6, 2e6, 1e6, 4e6};

Environment& env_with_nodes() {
  Environment& env = Environment::current();
  static const bool once = [&] {
    env.config().set("nodes", "2");  // ranks 0-1 node 0, ranks 2-3 node 1
    PhysicalTopology::of(env);
    return true;
  }();
  (void)once;
  return env;
}

// A device that takes elements / speed seconds; rank 0's takes `cliff_factor` times that beyond
// `cliff` elements.
PanelKernelFactory simulated(double cliff = 0, double cliff_factor = 1) {
  const int rank = Environment::current().rank();
  return [=](std::int64_t rows, std::int64_t unit) {
    auto d = std::make_shared<std::int64_t>(0);
    BenchmarkKernel k;
    k.name = "simulated";
    k.setup = [d](std::int64_t x) { *d = x; };
    k.timed_run = [=] {
      const double elements = static_cast<double>(*d * unit * rows);
      const double t = elements / speeds[rank];
      return rank == 0 && cliff > 0 && elements > cliff ? t * cliff_factor : t;
    };
    return k;
  };
}

HierarchicalOptions options(HierarchicalMethod method) {
  HierarchicalOptions o;
  o.n = 512;
  o.block = 16;
  o.method = method;
  o.node_eps = 0.05;
  o.device_eps = 0.02;
  return o;
}

// The time every rank's simulated device takes for its part of the layout (the kernel's time for
// one panel step per element of C).
std::vector<double> simulated_times(const Layout& l, double cliff = 0, double factor = 1) {
  std::vector<double> t;
  for (int p = 0; p < l.topology().procs(); ++p) {
    const double e = static_cast<double>(l.elements(p));
    t.push_back(e / speeds[p] * (p == 0 && cliff > 0 && e > cliff ? factor : 1.0));
  }
  return t;
}

double max_over_mean(const std::vector<double>& t) {
  return *std::max_element(t.begin(), t.end()) /
         (std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size()));
}

Layout layout_of(const HierarchicalPartition& r, const HierarchicalOptions& o) {
  return layout(r.spec, topology("array", Environment::current().size()),
                Shape{Sig(0, o.n), Sig(0, o.n)});
}

bool same_on_every_rank(const std::string& text) {
  const Environment& env = Environment::current();
  auto length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, env.comm());
  std::string root = text;
  root.resize(static_cast<std::size_t>(length));
  MPI_Bcast(root.data(), length, MPI_CHAR, 0, env.comm());
  int same = root == text ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, env.comm());
  return same == 1;
}

TEST(HierarchicalPartitioning, FpmBalancesEveryDeviceAndTheSpecReproducesIt) {
  Environment& env = env_with_nodes();
  const HierarchicalOptions o = options(HierarchicalMethod::fpm);
  const HierarchicalPartition r = partition_hierarchical(env, o, simulated());
  EXPECT_TRUE(same_on_every_rank(r.spec.str())) << r.spec.str();
  EXPECT_THAT(r.status, ::testing::AnyOf(DynamicStatus::converged, DynamicStatus::stalled));
  ASSERT_FALSE(r.steps.empty());
  EXPECT_LE(r.steps.back().spread, 0.1);
  const Layout l = layout_of(r, o);
  // Every rank holds the columns its devices were balanced on, at its node's full height.
  const HierarchicalStep& last = r.steps.back();
  for (int p = 0; p < env.size(); ++p) {
    ASSERT_TRUE(l.active(p));
    EXPECT_EQ(l.block(p)[1].size(), last.columns[static_cast<std::size_t>(p)]) << "rank " << p;
  }
  // Balanced across all devices: node areas move by whole block columns of the arrangement (a
  // few percent of the matrix here), device columns by single columns.
  EXPECT_LT(max_over_mean(simulated_times(l)), 1.1) << r.spec.str();
  if (env.size() > 1) {
    EXPECT_GT(l.elements(0), l.elements(1)) << "the fastest device holds the most";
  }
}

TEST(HierarchicalPartitioning, HomogeneousIsEvenAndMeasuresNothing) {
  Environment& env = env_with_nodes();
  const HierarchicalOptions o = options(HierarchicalMethod::homogeneous);
  int calls = 0;
  const HierarchicalPartition r =
      partition_hierarchical(env, o, [&](std::int64_t, std::int64_t) -> BenchmarkKernel {
        ++calls;
        throw Error(ErrorKind::internal, "homogeneous must not measure");
      });
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(r.steps.empty());
  const Layout l = layout_of(r, o);
  const int nodes = (env.size() + 1) / 2;
  EXPECT_EQ(static_cast<int>(r.areas.size()), nodes);
  for (const std::int64_t a : r.areas) EXPECT_EQ(a * nodes, 32 * 32);
  // Inside a node, even column slices.
  if (env.size() >= 2) {
    EXPECT_EQ(l.block(0)[1].size(), l.block(1)[1].size());
  }
}

TEST(HierarchicalPartitioning, SingleCpmSharesInProportionToOneMeasurement) {
  Environment& env = env_with_nodes();
  const HierarchicalOptions o = options(HierarchicalMethod::single_cpm);
  const HierarchicalPartition r = partition_hierarchical(env, o, simulated());
  ASSERT_EQ(r.steps.size(), 1u);
  ASSERT_EQ(static_cast<int>(r.weights.size()), env.size());
  for (int p = 1; p < env.size(); ++p) {
    EXPECT_NEAR(r.weights[static_cast<std::size_t>(p)] / r.weights[0], speeds[p] / speeds[0], 1e-9);
  }
  if (env.size() >= 3) {
    // Node areas in proportion to the sums of their devices' speeds, to the unit.
    const double node1 = speeds[2] + (env.size() == 4 ? speeds[3] : 0.0);
    const double want = 1024.0 * (speeds[0] + speeds[1]) / (speeds[0] + speeds[1] + node1);
    EXPECT_NEAR(static_cast<double>(r.areas[0]), want, 1.0);
  }
}

TEST(HierarchicalPartitioning, FpmAvoidsAMemoryCliffThatOneMeasurementMisses) {
  Environment& env = env_with_nodes();
  if (env.size() < 2) GTEST_SKIP() << "one device: nothing to move off the cliff";
  // Rank 0 is 10x slower beyond 1.2 times its part of the even split: one measurement there sees
  // it fast and gives it far more than the cliff (its speed earns it 80 % of its node's part, and
  // its node at least two thirds of the matrix).
  const int nodes = (env.size() + 1) / 2;
  const double cliff = 1.2 * 512.0 * 512.0 / (2.0 * nodes);
  HierarchicalOptions o = options(HierarchicalMethod::single_cpm);
  o.node_eps = o.device_eps = 0.05;
  o.max_iterations = o.device_iterations = 15;
  const Layout cpm = layout_of(partition_hierarchical(env, o, simulated(cliff, 10)), o);
  o.method = HierarchicalMethod::fpm;
  const HierarchicalPartition fr = partition_hierarchical(env, o, simulated(cliff, 10));
  const Layout fpm = layout_of(fr, o);
  const std::vector<double> t_cpm = simulated_times(cpm, cliff, 10);
  const std::vector<double> t_fpm = simulated_times(fpm, cliff, 10);
  EXPECT_LT(*std::max_element(t_fpm.begin(), t_fpm.end()),
            0.8 * *std::max_element(t_cpm.begin(), t_cpm.end()));
}

TEST(HierarchicalPartitioning, SavedModelsStartTheNextRunBalanced) {
  Environment& env = env_with_nodes();
  std::string dir =
      (std::filesystem::temp_directory_path() / ("hit-hier-models-" + std::to_string(::getpid())))
          .string();
  {
    auto length = static_cast<int>(dir.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, env.comm());
    dir.resize(static_cast<std::size_t>(length));
    MPI_Bcast(dir.data(), length, MPI_CHAR, 0, env.comm());
  }
  HierarchicalOptions o = options(HierarchicalMethod::fpm);
  o.models_dir = dir;
  const HierarchicalPartition first = partition_hierarchical(env, o, simulated());
  EXPECT_FALSE(first.models_loaded);
  EXPECT_TRUE(std::filesystem::exists(dir + "/node-0-b16-p16.csv"));
  const HierarchicalPartition second = partition_hierarchical(env, o, simulated());
  EXPECT_TRUE(second.models_loaded);
  EXPECT_EQ(second.steps.size(), 1u) << "the models' partition is balanced at once";
  EXPECT_EQ(second.status, DynamicStatus::converged);
  MPI_Barrier(env.comm());
  if (env.rank() == 0) std::filesystem::remove_all(dir);
}

TEST(HierarchicalPartitioning, RealPanelKernelThroughLaunch) {
  Environment& env = env_with_nodes();
  HierarchicalOptions o = options(HierarchicalMethod::fpm);
  o.n = 256;
  o.block = 32;
  o.max_iterations = 2;
  o.device_iterations = 2;
  o.precision.max_seconds = 0.05;
  o.precision.max_reps = 5;
  const HierarchicalPartition r = partition_hierarchical(env, o);
  EXPECT_TRUE(same_on_every_rank(r.spec.str()));
  const Layout l = layout_of(r, o);
  index_t total = 0;
  for (int p = 0; p < env.size(); ++p) total += l.elements(p);
  EXPECT_EQ(total, 256 * 256);
  for (const double t : r.steps.front().node_seconds) EXPECT_GT(t, 0.0);
}

TEST(HierarchicalPartitioning, BadOptionsFailOnEveryRank) {
  Environment& env = env_with_nodes();
  HierarchicalOptions o = options(HierarchicalMethod::fpm);
  o.n = 0;
  EXPECT_THAT(error_of([&] { static_cast<void>(partition_hierarchical(env, o, simulated())); }),
              HasSubstr("n = 0 (must be >= 1)"));
  o = options(HierarchicalMethod::fpm);
  o.block = 0;
  EXPECT_THAT(error_of([&] { static_cast<void>(partition_hierarchical(env, o, simulated())); }),
              HasSubstr("b = 0"));
  o = options(HierarchicalMethod::fpm);
  o.device_iterations = 0;
  EXPECT_THAT(error_of([&] { static_cast<void>(partition_hierarchical(env, o, simulated())); }),
              HasSubstr("iterations"));
  EXPECT_THAT(error_of([] { parse_hierarchical_method("best"); }),
              HasSubstr("methods: homogeneous, single-cpm, multiple-cpm, fpm"));
  // A kernel that fails on one rank only fails everywhere, with that rank's message.
  const int last = env.size() - 1;
  EXPECT_THAT(error_of([&] {
                static_cast<void>(partition_hierarchical(
                    env, options(HierarchicalMethod::fpm), [&](std::int64_t, std::int64_t) {
                      if (env.rank() == last) {
                        throw Error(ErrorKind::device, "device lost");
                      }
                      return simulated()(1, 1);
                    }));
              }),
              HasSubstr("device lost"));
}

}  // namespace
}  // namespace hit::balance
