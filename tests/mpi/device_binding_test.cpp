// hit-test-procs: 1 2 3 4
// Binding ranks to devices across processes: emulated nodes, the default binding, identical
// placements on every rank, and bad specs failing on every rank alike (no hang).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

hit::Environment& env() {
  return hit::Environment::current();
}

// Sets configuration keys for one scope, then restores what was there (or the run's own value).
class ConfigScope {
 public:
  ConfigScope(std::string key, std::string value, std::string restore)
      : key_(std::move(key)), restore_(env().config().get(key_).value_or(std::move(restore))) {
    env().config().set(key_, std::move(value));
  }
  ~ConfigScope() { env().config().set(key_, restore_); }

 private:
  std::string key_;
  std::string restore_;
};

// Every rank's text, on every rank.
std::vector<std::string> gather_text(const std::string& mine) {
  const int n = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(env().size()));
  MPI_Allgather(&n, 1, MPI_INT, lens.data(), 1, MPI_INT, env().comm());
  std::vector<int> displs(lens.size(), 0);
  for (std::size_t r = 1; r < lens.size(); ++r) displs[r] = displs[r - 1] + lens[r - 1];
  std::string all(static_cast<std::size_t>(displs.back() + lens.back()), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                 env().comm());
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lens.size(); ++r)
    out.push_back(
        all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r])));
  return out;
}

// The error text building a topology gives, on this rank ("" when it succeeds).
std::string topology_error(const std::string& devices) {
  ConfigScope scope("devices", devices, "cpu");
  try {
    hit::PhysicalTopology topo(env());
    return "";
  } catch (const hit::Error& e) {
    return e.what();
  }
}

}  // namespace

TEST(DeviceBindingMpi, EveryRankSeesTheSamePlacements) {
  const auto& topo = hit::PhysicalTopology::of(env());
  ASSERT_EQ(static_cast<int>(topo.ranks().size()), env().size());
  std::string mine;
  for (const auto& r : topo.ranks()) mine += r.device.str() + "@" + std::to_string(r.node) + ";";
  const auto all = gather_text(mine + topo.run_id());
  for (const auto& text : all) EXPECT_EQ(text, all.front());
  EXPECT_EQ(topo.mine().rank, env().rank());
  // One machine: one node, every rank on it.
  EXPECT_EQ(topo.nodes(), 1);
  EXPECT_EQ(topo.mine().node_size, env().size());
}

TEST(DeviceBindingMpi, EmulatedNodesGroupConsecutiveRanks) {
  ConfigScope nodes("nodes", "2", "0");
  ConfigScope devices("devices", "cpu*" + std::to_string(env().size()), "cpu");
  hit::PhysicalTopology topo(env());
  const int p = env().size();
  EXPECT_EQ(topo.nodes(), (p + 1) / 2);
  EXPECT_TRUE(topo.emulated_nodes());
  const auto& me = topo.mine();
  EXPECT_EQ(me.node, env().rank() / 2);
  EXPECT_EQ(me.node_rank, env().rank() % 2);
  // Each node binds its own ranks: cpu:0 and cpu:1 on every node.
  EXPECT_EQ(me.device.str(), "cpu:" + std::to_string(env().rank() % 2));
  int node_size = 0;
  MPI_Comm_size(topo.node_comm(), &node_size);
  EXPECT_EQ(node_size, me.node_size);
  EXPECT_EQ(me.node_size, std::min(2, p - 2 * me.node));
}

TEST(DeviceBindingMpi, SharedEmulatedDeviceCountsItsRanks) {
  const int p = env().size();
  ConfigScope devices("devices", "emu:0(mem=64MiB)*" + std::to_string(p), "cpu");
  hit::PhysicalTopology topo(env());
  for (const auto& r : topo.ranks()) {
    EXPECT_EQ(r.device.str(), "emu:0(mem=64MiB)");
    EXPECT_EQ(r.sharing, p);
  }
  EXPECT_EQ(topo.device_share().ranks(), p);
  // The accounting page is shared: what one rank adds, every rank sees.
  if (env().rank() == 0) topo.device_share().used_bytes() += 12345;
  MPI_Barrier(env().comm());
  EXPECT_EQ(topo.device_share().used_bytes().load(), 12345u);
  MPI_Barrier(env().comm());
}

TEST(DeviceBindingMpi, BadSpecsFailOnEveryRankWithTheSameMessage) {
  const int p = env().size();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gpu", "unknown device kind 'gpu'"},
      {"cuda:3", "cuda:3"},
      {"emu(mem=lots)", "mem=lots is not valid"},
      {"emu(slowdown=fast)", "slowdown=fast is not valid"},
      {"cpu*" + std::to_string(p + 1), "binds " + std::to_string(p + 1)},
      {"cpu:0(", "malformed device spec"},
  };
  for (const auto& [spec, what] : cases) {
    const std::string message = topology_error(spec);
    EXPECT_THAT(message, HasSubstr(what)) << spec;
    const auto all = gather_text(message);
    for (const auto& m : all) EXPECT_EQ(m, message) << spec;
  }
  // A GPU that does not exist says how many there are.
  const auto& node = hit::PhysicalTopology::of(env()).my_node();
  const std::string gpus = topology_error("cuda:" + std::to_string(node.gpus.size()));
  EXPECT_THAT(gpus, node.gpus.empty()
                        ? HasSubstr("has no CUDA GPU")
                        : HasSubstr("has " + std::to_string(node.gpus.size()) + " CUDA GPU"));
}

TEST(DeviceBindingMpi, BadNodesValueFailsEverywhere) {
  ConfigScope nodes("nodes", "two", "0");
  try {
    hit::PhysicalTopology topo(env());
    FAIL() << "nodes=two accepted";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("nodes=two"), HasSubstr("HIT_NODES")));
  }
}
