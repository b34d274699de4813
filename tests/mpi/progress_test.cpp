// hit-test-procs: 2 3 4
// A transfer started before a computation moves while the computation runs: MPICH moves a large
// message between processes of a node only while both call into MPI, so launches make progress
// for the communication in flight (after each kernel on the host, while waiting for a device).
// (Only the host case is tested: with Debian's MPICH a transfer also moved while rank 0 waited for
// an emulated device without any progress from it, so that case could not fail.)
//
// Rank 0 sends a large block to rank 1 and then only launches kernels (no MPI call of its own);
// rank 1 waits for the block and raises a flag in memory both share. The flag must rise while
// rank 0 is still launching: without progress from the launches, rank 1's wait would end only
// when rank 0 itself waits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "hit/hit.hpp"

namespace {

using hit::index_t;
using hit::Shape;
using hit::Tile;

hit::Environment& env() {
  return hit::Environment::current();
}

// One int every process of the node can load and store without calling MPI.
class SharedFlag {
 public:
  SharedFlag() {
    MPI_Comm_split_type(env().comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_);
    int node_size = 0;
    MPI_Comm_size(node_, &node_size);
    int world_size = 0;
    MPI_Comm_size(env().comm(), &world_size);
    same_node_ = node_size == world_size;
    const MPI_Aint bytes = env().rank() == 0 ? static_cast<MPI_Aint>(sizeof(int)) : 0;
    MPI_Win_allocate_shared(bytes, static_cast<int>(sizeof(int)), MPI_INFO_NULL, node_, &base_,
                            &win_);
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_shared_query(win_, 0, &size, &unit, &flag_);
    if (env().rank() == 0) *flag_ = 0;
    MPI_Barrier(env().comm());
  }
  ~SharedFlag() {
    MPI_Win_free(&win_);
    MPI_Comm_free(&node_);
  }
  SharedFlag(const SharedFlag&) = delete;
  SharedFlag& operator=(const SharedFlag&) = delete;

  bool same_node() const noexcept { return same_node_; }
  void raise() { std::atomic_ref<int>(*flag_).store(1, std::memory_order_release); }
  bool raised() const { return std::atomic_ref<int>(*flag_).load(std::memory_order_acquire) != 0; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int* base_ = nullptr;
  int* flag_ = nullptr;
  bool same_node_ = false;
};

// Keeps the device busy for about `micros` without calling MPI.
hit::Kernel<hit::View<double>> spin(int micros) {
  hit::Kernel<hit::View<double>> k("spin");
  k.cpu([micros](const hit::KernelContext&, hit::View<double> x) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
    double s = 0;
    while (std::chrono::steady_clock::now() < until) s += 1;
    x(x.origin[0]) += s > 0 ? 1 : 0;
  });
  return k;
}

// How many launches rank 0 made before rank 1 had the block (-1: it never had it while rank 0
// launched; -2: the processes do not share a node).
int launches_until_received() {
  SharedFlag flag;
  if (!flag.same_node()) return -2;
  // 2^20 doubles per process: far beyond any eager limit, so the block travels in a rendezvous.
  const index_t block = index_t{1} << 20;
  const int procs = env().size();
  const auto lay = hit::layout("blocks", hit::topology("array"), Shape::extents({block * procs}));
  Tile<double> mine = Tile<double>::of(lay);
  mine.fill(1.0 + env().rank());
  std::vector<Shape> wanted(static_cast<std::size_t>(procs));
  wanted[1] = lay.blocks(0).front();
  Tile<double> into = env().rank() == 1 ? Tile<double>(wanted[1]) : Tile<double>();
  hit::Comm fetch = hit::fetch_regions(lay, mine, wanted, into);

  int launches = -1;
  Tile<double> scratch(Shape::extents({1}));
  scratch.fill(0.0);
  const auto part = hit::partition("single", scratch.shape());
  const auto kernel = spin(2000);
  hit::launch(kernel, part, hit::inout(scratch));  // the device's first-launch set-up done
  fetch.start();
  if (env().rank() == 0) {
    for (int i = 0; i < 1000; ++i) {  // 2 s at most
      hit::launch(kernel, part, hit::inout(scratch));
      if (flag.raised()) {
        launches = i + 1;
        break;
      }
    }
  } else if (env().rank() == 1) {
    fetch.wait();
    flag.raise();
  }
  fetch.wait();
  if (env().rank() == 1) {
    double wrong = 0;
    into.for_each([&](const hit::Index&, double& v) { wrong += v != 1.0 ? 1 : 0; });
    EXPECT_EQ(wrong, 0) << "elements of rank 0's block that arrived wrong";
  }
  MPI_Bcast(&launches, 1, MPI_INT, 0, env().comm());
  return launches;
}

TEST(Progress, HostKernelsLetAStartedTransferMove) {
  const int launches = launches_until_received();
  if (launches == -2) GTEST_SKIP() << "the processes are not on one node";
  EXPECT_GT(launches, 0) << "rank 1 got its block only when rank 0 waited";
}

}  // namespace
