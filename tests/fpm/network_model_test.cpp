// Network models (docs/fpm.md "Network models"): costs, link classes, and model files: round trips
// and every kind of bad input, named by file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "hit/core/error.hpp"
#include "hit/fpm/network_model.hpp"
#include "hit/fpm/network_model_file.hpp"

namespace hit::fpm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

LinkCost cost(double latency, double bandwidth, int pairs = 2) {
  LinkCost c;
  c.latency = latency;
  c.bandwidth = bandwidth;
  c.latency_spread = 0.05;
  c.bandwidth_spread = 0.125;
  c.pairs = pairs;
  return c;
}

// Two nodes of two ranks: 1 µs and 10 GB/s inside a node, 5 µs and 1 GB/s between nodes.
NetworkModel two_nodes() {
  NetworkModel m;
  m.set(LinkClass::node, cost(1e-6, 1e10, 2));
  m.set(LinkClass::network, cost(5e-6, 1e9, 4));
  m.set_node_of_rank({0, 0, 1, 1});
  m.add_pair({0, 1, LinkClass::node, 1.1e-6, 0.9e10});
  m.add_pair({0, 2, LinkClass::network, 5.5e-6, 1.25e9});
  m.add_pair({2, 3, LinkClass::node, 0.9e-6, 1.1e10});
  m.set_info("date", "2026-01-01T00:00:00Z");
  m.set_info("mpi", "MPICH Version: 4.0.2");
  m.set_info("processes", "4");
  return m;
}

std::string error_of(std::string_view text, std::string_view name = "net.csv") {
  try {
    parse_network_model(text, name);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::model) << e.what();
    return e.what();
  }
  return "no error";
}

constexpr const char* header =
    "class,latency_s,bandwidth_Bps,latency_spread,bandwidth_spread,pairs\n";

TEST(NetworkModel, SecondsIsLatencyPlusBytesOverBandwidth) {
  const NetworkModel m = two_nodes();
  // Hand-computed: 1e-6 + 1e6 / 1e10 = 1.01e-4; 5e-6 + 1e6 / 1e9 = 1.005e-3.
  EXPECT_DOUBLE_EQ(m.seconds(1'000'000, LinkClass::node), 1.01e-4);
  EXPECT_DOUBLE_EQ(m.seconds(1'000'000, LinkClass::network), 1.005e-3);
  EXPECT_DOUBLE_EQ(m.seconds(8, LinkClass::network), 5e-6 + 8e-9);
  EXPECT_EQ(m.seconds(0, LinkClass::network), 0.0);  // no bytes, no message
  // 3 messages of 2 MB in all: 3 · 5 µs + 2e6 / 1e9 s = 2.015e-3.
  EXPECT_DOUBLE_EQ(m.seconds(3, 2'000'000, LinkClass::network), 2.015e-3);
  EXPECT_DOUBLE_EQ(m.seconds(4, 0, LinkClass::node), 4e-6);  // empty messages cost their latency
  EXPECT_EQ(m.seconds(0, 0, LinkClass::node), 0.0);
  EXPECT_DOUBLE_EQ(m.seconds(1, 1'000'000, LinkClass::node), m.seconds(1'000'000, LinkClass::node));
}

TEST(NetworkModel, BadCountsAreErrors) {
  const NetworkModel m = two_nodes();
  EXPECT_THROW((void)m.seconds(-1, LinkClass::node), Error);
  EXPECT_THROW((void)m.seconds(-1, 10, LinkClass::node), Error);
  EXPECT_THROW((void)m.seconds(1, -10, LinkClass::node), Error);
  EXPECT_THROW((void)m.seconds(0, 10, LinkClass::node), Error);  // bytes need a message
}

TEST(NetworkModel, AbsentClassIsAnErrorThatSaysWhy) {
  NetworkModel m;
  m.set(LinkClass::node, cost(1e-6, 1e10));
  EXPECT_TRUE(m.has(LinkClass::node));
  EXPECT_FALSE(m.has(LinkClass::network));
  try {
    (void)m.seconds(100, LinkClass::network);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::model);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("no cost for link class 'network'"),
                                HasSubstr("on different nodes"), HasSubstr("HIT_NODES")));
  }
  // Even for 0 bytes: a prediction over an absent class must not pass silently.
  EXPECT_THROW((void)m.seconds(0, LinkClass::network), Error);
}

TEST(NetworkModel, SetRejectsCostsThatPriceNothingOrInfinity) {
  NetworkModel m;
  EXPECT_THROW(m.set(LinkClass::node, cost(-1e-6, 1e9)), Error);
  EXPECT_THROW(m.set(LinkClass::node, cost(1e-6, 0)), Error);
  EXPECT_THROW(m.set(LinkClass::node, cost(1e-6, -5)), Error);
  EXPECT_THROW(m.set(LinkClass::node, cost(std::nan(""), 1e9)), Error);
  EXPECT_THROW(m.set(LinkClass::node, cost(1e-6, std::numeric_limits<double>::infinity())), Error);
  EXPECT_THROW(m.set(LinkClass::node, cost(1e-6, 1e9, 0)), Error);
  EXPECT_FALSE(m.has(LinkClass::node));
  m.set(LinkClass::node, cost(0, 1e9));  // α = 0 is allowed
  EXPECT_TRUE(m.has(LinkClass::node));
}

TEST(NetworkModel, LinkClassOfPairsByRanksPerNode) {
  // 3 ranks per node: 0-2 node 0, 3-5 node 1, 6-7 node 2.
  EXPECT_EQ(NetworkModel::link(0, 2, 3), LinkClass::node);
  EXPECT_EQ(NetworkModel::link(2, 3, 3), LinkClass::network);
  EXPECT_EQ(NetworkModel::link(5, 3, 3), LinkClass::node);
  EXPECT_EQ(NetworkModel::link(6, 7, 3), LinkClass::node);
  EXPECT_EQ(NetworkModel::link(0, 7, 3), LinkClass::network);
  // Far beyond any measured run.
  EXPECT_EQ(NetworkModel::link(4096, 4097, 64), LinkClass::node);
  EXPECT_EQ(NetworkModel::link(4095, 4096, 64), LinkClass::network);
  EXPECT_EQ(NetworkModel::link(0, 1, 1), LinkClass::network);
  EXPECT_THROW((void)NetworkModel::link(1, 1, 2), Error);
  EXPECT_THROW((void)NetworkModel::link(-1, 1, 2), Error);
  EXPECT_THROW((void)NetworkModel::link(0, 1, 0), Error);
}

TEST(NetworkModel, LinkClassOfTheMeasuredRun) {
  const NetworkModel m = two_nodes();
  EXPECT_EQ(m.ranks_per_node(), 2);
  EXPECT_EQ(m.link(0, 1), LinkClass::node);
  EXPECT_EQ(m.link(3, 2), LinkClass::node);
  EXPECT_EQ(m.link(1, 2), LinkClass::network);
  EXPECT_THROW((void)m.link(0, 4), Error);  // not of the run
  EXPECT_THROW((void)m.link(2, 2), Error);
  try {
    (void)m.link(0, 9);
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("link(a, b, ranks_per_node)"));
  }
}

TEST(NetworkModel, RanksPerNodeOnlyForConsecutiveGroups) {
  NetworkModel m;
  EXPECT_EQ(m.ranks_per_node(), 0);  // unknown
  m.set_node_of_rank({0, 0, 0, 1, 1, 1, 2});
  EXPECT_EQ(m.ranks_per_node(), 3);  // the last node may hold fewer
  m.set_node_of_rank({0, 1, 0, 1});  // round-robin placement
  EXPECT_EQ(m.ranks_per_node(), 0);
  m.set_node_of_rank({0, 0, 1, 1, 1});  // uneven nodes
  EXPECT_EQ(m.ranks_per_node(), 0);
  m.set_node_of_rank({0, 0, 0});
  EXPECT_EQ(m.ranks_per_node(), 3);
  EXPECT_THROW(m.set_node_of_rank({0, -1}), Error);
}

class NetworkModelFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hit-net-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(NetworkModelFile, RoundTripKeepsEveryBit) {
  NetworkModel m = two_nodes();
  // Values whose shortest decimal forms are long: a lossy format would change them.
  m.set(LinkClass::node, cost(1.0 / 3.0 * 1e-6, 2.0 / 7.0 * 1e10, 2));
  save_network_model(path("net.csv"), m);
  const NetworkModel back = load_network_model(path("net.csv"));
  EXPECT_TRUE(back == m);
  EXPECT_EQ(back.cost(LinkClass::node), m.cost(LinkClass::node));
  EXPECT_EQ(back.pairs(), m.pairs());
  EXPECT_EQ(back.node_of_rank(), m.node_of_rank());
  EXPECT_EQ(back.info(), m.info());
  // Nothing but the file is left in the folder (the temporary was renamed).
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(NetworkModelFile, OneClassAndNoPairsRoundTrip) {
  NetworkModel m;
  m.set(LinkClass::node, cost(4.1e-7, 9.8e9, 1));
  save_network_model(path("one.csv"), m);
  const NetworkModel back = load_network_model(path("one.csv"));
  EXPECT_TRUE(back == m);
  EXPECT_FALSE(back.has(LinkClass::network));
  EXPECT_TRUE(back.pairs().empty());
}

TEST_F(NetworkModelFile, ReadsTheDocumentedExample) {
  std::ofstream(path("doc.csv")) << "# kind: network\n# processes: 4\n# nodes: 2\n"
                                    "# node_of_rank: 0 0 1 1\n"
                                 << header
                                 << "node,4.1e-07,9.8e9,0.05,0.08,2\n"
                                    "network,4.3e-07,9.5e9,0.04,0.07,4\n";
  const NetworkModel m = load_network_model(path("doc.csv"));
  EXPECT_DOUBLE_EQ(m.cost(LinkClass::node).latency, 4.1e-7);
  EXPECT_DOUBLE_EQ(m.cost(LinkClass::network).bandwidth, 9.5e9);
  EXPECT_EQ(m.cost(LinkClass::network).pairs, 4);
  EXPECT_EQ(m.info().at("processes"), "4");
  EXPECT_EQ(m.info().count("kind"), 0u);  // read, not an annotation
  EXPECT_EQ(m.ranks_per_node(), 2);
}

TEST_F(NetworkModelFile, UnreadableFilesAreIoErrors) {
  try {
    (void)load_network_model(path("nowhere.csv"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr("nowhere.csv"));
  }
  EXPECT_THROW((void)load_network_model(dir_.string()), Error);
}

TEST(NetworkModelParse, MalformedFilesNameTheFileAndLine) {
  const std::string h = header;
  EXPECT_THAT(error_of(""), AllOf(HasSubstr("'net.csv'"), HasSubstr("the file is empty")));
  EXPECT_THAT(error_of("# kind: network\n\n"), HasSubstr("the file is empty"));
  EXPECT_THAT(error_of("d,t\n10,1\n"),
              AllOf(HasSubstr("'net.csv', line 1"), HasSubstr("expected the header")));
  EXPECT_THAT(error_of("# kind: network\nclass,latency,bandwidth\nnode,1,2\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("expected the header")));
  EXPECT_THAT(error_of(h), HasSubstr("no link class after the header"));
  EXPECT_THAT(error_of(h + "node,abc,1e9,0,0,1\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("latency_s = 'abc' is not a number")));
  EXPECT_THAT(error_of(h + "node,1e-6,fast,0,0,1\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("bandwidth_Bps = 'fast' is not a number")));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,x,0,1\n"), HasSubstr("latency_spread = 'x'"));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,0,0,two\n"), HasSubstr("pairs = 'two'"));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,0,0,0\n"), HasSubstr("pairs = '0'"));
  EXPECT_THAT(error_of(h + "node,-1e-6,1e9,0,0,1\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("must be >= 0 seconds")));
  EXPECT_THAT(error_of(h + "node,1e-6,0,0,0,1\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("must be > 0 bytes per second")));
  EXPECT_THAT(error_of(h + "node,1e-6,-3,0,0,1\n"), HasSubstr("must be > 0 bytes per second"));
  EXPECT_THAT(error_of(h + "node,1e-6,inf,0,0,1\n"), HasSubstr("is not a number"));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,-0.5,0,1\n"), HasSubstr("a spread is negative"));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,0,0,1\nsocket,1e-6,1e9,0,0,1\n"),
              AllOf(HasSubstr("line 3"), HasSubstr("unknown link class 'socket'")));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,0,0,1\nnetwork,2e-6,1e9,0,0,1\nnode,1e-6,1e9,0,0,1\n"),
              AllOf(HasSubstr("line 4"), HasSubstr("link class 'node' repeats line 2")));
  EXPECT_THAT(error_of(h + "node,1e-6,1e9,0,0\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("5 fields")));
  EXPECT_THAT(error_of("# kind: performance\n" + h + "node,1e-6,1e9,0,0,1\n"),
              AllOf(HasSubstr("line 1"), HasSubstr("not a network model")));
}

TEST(NetworkModelParse, MalformedPairsAndNodes) {
  const std::string h = std::string(header) + "node,1e-6,1e9,0,0,1\n";
  const std::string ph = "rank_a,rank_b,class,latency_s,bandwidth_Bps\n";
  EXPECT_THAT(error_of(std::string(header) + ph), HasSubstr("pairs come before any link class"));
  EXPECT_THAT(error_of(h + ph + "0,1,network,1e-6,1e9\n"),
              AllOf(HasSubstr("line 4"), HasSubstr("'network', which has no class line")));
  EXPECT_THAT(error_of(h + ph + "1,1,node,1e-6,1e9\n"), HasSubstr("expected rank_a < rank_b"));
  EXPECT_THAT(error_of(h + ph + "a,1,node,1e-6,1e9\n"), HasSubstr("rank_a = 'a' is not a rank"));
  EXPECT_THAT(error_of(h + ph + "0,1,node,1e-6,0\n"),
              AllOf(HasSubstr("line 4"), HasSubstr("must be > 0 bytes per second")));
  EXPECT_THAT(error_of("# node_of_rank: 0 0\n" + h + ph + "0,2,node,1e-6,1e9\n"),
              AllOf(HasSubstr("line 5"), HasSubstr("rank 2 is not of the run")));
  EXPECT_THAT(error_of("# node_of_rank: 0 1\n" + h + ph + "0,1,node,1e-6,1e9\n"),
              AllOf(HasSubstr("line 5"), HasSubstr("of class 'network' by node_of_rank")));
  EXPECT_THAT(error_of("# node_of_rank: 0 x\n" + h),
              AllOf(HasSubstr("line 1"), HasSubstr("'x' is not a node number")));
  EXPECT_THAT(error_of("# node_of_rank: 0 0\n# node_of_rank: 0 1\n" + h),
              AllOf(HasSubstr("line 2"), HasSubstr("a second node_of_rank line")));
  // A valid pair section is read.
  const NetworkModel m =
      parse_network_model("# node_of_rank: 0,0\n" + h + ph + "0,1,node,2e-6,3e9\n", "ok.csv");
  ASSERT_EQ(m.pairs().size(), 1u);
  EXPECT_EQ(m.pairs()[0].bandwidth, 3e9);
}

}  // namespace
}  // namespace hit::fpm
