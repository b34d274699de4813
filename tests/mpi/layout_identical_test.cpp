// Layouts are computed independently on every rank and must come out identical: compare a
// canonical serialisation of each layout across the ranks.
// hit-test-procs: 1 2 3 4
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "hit/core/environment.hpp"
#include "hit/layout.hpp"

namespace {

// The text of rank 0, broadcast to every rank.
std::string root_text(const std::string& mine, MPI_Comm comm) {
  int length = static_cast<int>(mine.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  std::string out = mine;
  out.resize(static_cast<std::size_t>(length));
  MPI_Bcast(out.data(), length, MPI_CHAR, 0, comm);
  return out;
}

TEST(LayoutAcrossRanks, EveryRankComputesTheSameLayout) {
  auto& env = hit::Environment::current();
  const std::vector<std::string> topologies = {"array", "mesh2d"};
  const std::vector<std::string> specs = {"blocks",
                                          "cyclic",
                                          "blockCyclic:b=3",
                                          "dimBlocks:dim=1",
                                          "weighted:w=1.5,2,0.25,1,3,1,1,1,1,2,2,2",
                                          "blocksLB:factor=0.8,fast=0"};
  const std::vector<std::string> shapes = {"[0:37][0:11]", "[-5:20:3][2:9]", "[0:3][0:2][0:4]"};
  int compared = 0;
  // The run's own size, and fixed counts every rank lays out for (as hit-layout --procs does).
  for (int procs : {env.size(), 3, 4, 12}) {
    for (const auto& t : topologies) {
      const hit::Topology topo = hit::topology(t, procs);
      for (const auto& s : shapes) {
        for (const auto& spec : specs) {
          std::string text;
          std::string mine;
          try {
            mine = hit::layout(spec, topo, hit::Shape::parse(s)).str();
          } catch (const hit::Error& e) {
            mine = std::string("error: ") + e.what();  // errors too must agree
          }
          EXPECT_EQ(mine, root_text(mine, env.comm()))
              << spec << " of " << s << " on " << topo.str();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
