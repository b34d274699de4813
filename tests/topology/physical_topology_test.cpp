// Binding ranks to the devices of a node (pure resolution), and the discovered topology of a
// 1-process run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <set>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

hit::NodeResources node_with(int cores, int gpus) {
  hit::NodeResources n;
  n.node = 0;
  n.host = "testhost";
  n.cores = cores;
  n.gpus = gpus;
  if (gpus == 0) n.gpu_note = "CUDA runtime: no CUDA-capable device";
  return n;
}

std::vector<int> iota(int n, int from = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::vector<std::string> texts(const std::vector<hit::DeviceBinding>& b) {
  std::vector<std::string> out;
  for (const auto& x : b) out.push_back(x.str());
  return out;
}

std::vector<hit::DeviceBinding> resolve(const std::string& spec, int procs,
                                        const hit::NodeResources& node) {
  return hit::resolve_node_bindings(hit::parse_device_spec(spec, procs), iota(procs), node);
}

std::string resolve_error(const std::string& spec, int procs, const hit::NodeResources& node) {
  try {
    resolve(spec, procs, node);
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << spec;
  return {};
}

}  // namespace

TEST(DefaultBinding, RoundRobinOverGpus) {
  using V = std::vector<std::string>;
  EXPECT_EQ(texts(hit::default_node_bindings(4, node_with(16, 2))),
            (V{"cuda:0", "cuda:1", "cuda:0", "cuda:1"}));
  EXPECT_EQ(texts(hit::default_node_bindings(3, node_with(16, 4))),
            (V{"cuda:0", "cuda:1", "cuda:2"}));
  EXPECT_EQ(texts(hit::default_node_bindings(1, node_with(16, 1))), (V{"cuda:0"}));
}

TEST(DefaultBinding, CoreGroupsWithoutGpus) {
  const auto node = node_with(8, 0);
  const auto b = hit::default_node_bindings(4, node);
  EXPECT_EQ(texts(b), (std::vector<std::string>{"cpu:0", "cpu:1", "cpu:2", "cpu:3"}));
  const auto cores = hit::assign_node_cores(b, node);
  EXPECT_EQ(cores, (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(DefaultBinding, CoreGroupsPartitionTheCoresWhenTheyFit) {
  // Property: with no more groups than cores, the groups are disjoint, non-empty, contiguous, cover
  // every core, and their sizes differ by at most one.
  for (int cores = 1; cores <= 24; ++cores) {
    for (int ranks = 1; ranks <= cores; ++ranks) {
      const auto node = node_with(cores, 0);
      const auto groups = hit::assign_node_cores(hit::default_node_bindings(ranks, node), node);
      std::vector<int> seen(static_cast<std::size_t>(cores), 0);
      std::size_t lo = 1000, hi = 0;
      for (const auto& g : groups) {
        ASSERT_FALSE(g.empty());
        for (std::size_t k = 1; k < g.size(); ++k) EXPECT_EQ(g[k], g[k - 1] + 1);
        for (int c : g) ++seen[static_cast<std::size_t>(c)];
        lo = std::min(lo, g.size());
        hi = std::max(hi, g.size());
      }
      for (int c = 0; c < cores; ++c) EXPECT_EQ(seen[c], 1) << cores << " cores, " << ranks;
      EXPECT_LE(hi - lo, 1u);
    }
  }
}

TEST(DefaultBinding, MoreRanksThanCoresShareCores) {
  const auto node = node_with(2, 0);
  const auto cores = hit::assign_node_cores(hit::default_node_bindings(5, node), node);
  EXPECT_EQ(cores, (std::vector<std::vector<int>>{{0}, {1}, {0}, {1}, {0}}));
}

TEST(ResolveBinding, IndexLessItemsTakeTheNextFreeIndex) {
  const auto node = node_with(8, 3);
  EXPECT_EQ(texts(resolve("cpu:0,cpu*3", 4, node)),
            (std::vector<std::string>{"cpu:0", "cpu:1", "cpu:2", "cpu:3"}));
  EXPECT_EQ(texts(resolve("cpu*2,cpu:1,cpu", 4, node)),
            (std::vector<std::string>{"cpu:0", "cpu:2", "cpu:1", "cpu:3"}));
  EXPECT_EQ(texts(resolve("emu*2,emu:0", 3, node)),
            (std::vector<std::string>{"emu:1", "emu:2", "emu:0"}));
  EXPECT_EQ(texts(resolve("cuda*5", 5, node)),
            (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2", "cuda:0", "cuda:1"}));
  EXPECT_EQ(texts(resolve("cuda:0*3,cuda:1", 4, node)),
            (std::vector<std::string>{"cuda:0", "cuda:0", "cuda:0", "cuda:1"}));
}

TEST(ResolveBinding, GpuThatDoesNotExistSaysHowManyExist) {
  EXPECT_THAT(resolve_error("cuda:3", 1, node_with(8, 1)),
              AllOf(HasSubstr("rank 0 is bound to cuda:3, which does not exist"),
                    HasSubstr("has 1 CUDA GPU (cuda:0)")));
  EXPECT_THAT(resolve_error("cpu,cuda:2", 2, node_with(8, 2)),
              AllOf(HasSubstr("rank 1 is bound to cuda:2"),
                    HasSubstr("has 2 CUDA GPUs (cuda:0 to cuda:1)")));
  EXPECT_THAT(resolve_error("cuda", 1, node_with(8, 0)),
              AllOf(HasSubstr("bound to cuda but node 0 (testhost) has no CUDA GPU"),
                    HasSubstr("no CUDA-capable device")));
}

TEST(ResolveBinding, CpuGroupThatDoesNotExist) {
  EXPECT_THAT(resolve_error("cpu:9", 1, node_with(4, 0)),
              AllOf(HasSubstr("cpu:9, which does not exist"), HasSubstr("4 cores")));
  EXPECT_NO_THROW(resolve("cpu:3", 1, node_with(4, 0)));
}

TEST(ResolveBinding, OneEmulatedDeviceHasOneSetOfParameters) {
  const auto node = node_with(4, 0);
  EXPECT_THAT(
      resolve_error("emu:0(mem=64MiB)*2,emu:0(mem=128MiB)", 3, node),
      AllOf(HasSubstr("emu:0 of node 0 is given different parameters"),
            HasSubstr("emu:0(mem=64MiB) for rank 0"), HasSubstr("emu:0(mem=128MiB) for rank 2")));
  // cores= is how one rank uses the device, not the device: it may differ.
  EXPECT_NO_THROW(resolve("emu:0(mem=64MiB)*2,emu:0(mem=64MiB,cores=2)", 3, node));
  // Different emulated devices may differ.
  EXPECT_NO_THROW(resolve("emu:0(mem=64MiB),emu:1(mem=1GiB)", 2, node));
}

TEST(ResolveBinding, CoresParameterSizesTheGroup) {
  const auto node = node_with(8, 1);
  const auto b = resolve("cpu:0(cores=3),cpu:1,cuda:0(cores=1)", 3, node);
  const auto cores = hit::assign_node_cores(b, node);
  // Two cpu groups of 4 cores; the first asks for 3 of its own.
  EXPECT_EQ(cores[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cores[1], (std::vector<int>{4, 5, 6, 7}));
  // The GPU rank's share is the third of three ([5, 8)); it asks for one core.
  EXPECT_EQ(cores[2], (std::vector<int>{5}));
}

TEST(PhysicalTopology, OneProcessRunFindsTheHostAndBindsByDefault) {
  auto& env = hit::Environment::current();
  const auto& topo = hit::PhysicalTopology::of(env);
  ASSERT_EQ(topo.ranks().size(), 1u);
  EXPECT_EQ(topo.nodes(), 1);
  const auto& me = topo.mine();
  EXPECT_EQ(me.rank, 0);
  EXPECT_EQ(me.node_size, 1);
  EXPECT_GE(topo.my_node().host.cores, 1);
  EXPECT_GE(topo.my_node().host.pus, topo.my_node().host.cores);
  EXPECT_GT(topo.my_node().host.memory_bytes, 0u);
  EXPECT_FALSE(me.host.empty());
  EXPECT_FALSE(topo.run_id().empty());
  if (env.config().get("devices")) GTEST_SKIP() << "HIT_DEVICES is set";
  if (topo.my_node().gpus.empty()) {
    EXPECT_EQ(me.device.str(), "cpu:0");
    EXPECT_FALSE(topo.my_node().gpu_note.empty());  // why there is none
    // The only rank gets every core.
    EXPECT_EQ(static_cast<int>(me.cores.size()), topo.my_node().host.cores);
  } else {
    EXPECT_EQ(me.device.str(), "cuda:0");
  }
}

TEST(PhysicalTopology, ConfiguredBindingAndItsErrors) {
  auto& env = hit::Environment::current();
  // The run's own topology is made first, so the settings below cannot leak into it.
  const auto& run = hit::PhysicalTopology::of(env);
  const auto saved = env.config().get("devices");
  env.config().set("devices", "emu:2(mem=64MiB,slowdown=3)");
  {
    hit::PhysicalTopology topo(env);
    EXPECT_EQ(topo.mine().device.str(), "emu:2(mem=64MiB,slowdown=3)");
    EXPECT_TRUE(topo.mine().emulated());
    EXPECT_EQ(topo.mine().label(), "emu:2(mem=64MiB,slowdown=3) [emulated]");
    EXPECT_THAT(topo.mine().description, AllOf(HasSubstr("emulated"), HasSubstr("mem=64MiB")));
    EXPECT_EQ(topo.binding_spec(), "emu:2(mem=64MiB,slowdown=3)");
  }
  env.config().set("devices", "cuda:7");
  try {
    hit::PhysicalTopology topo(env);
    ADD_FAILURE() << "cuda:7 was accepted";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device);
    EXPECT_THAT(e.what(), HasSubstr("cuda:7"));
  }
  env.config().set("devices", "gpu");
  EXPECT_THROW(hit::PhysicalTopology topo(env), hit::Error);
  env.config().set("devices", saved ? *saved : hit::format_device_spec(run.bindings()));
}
