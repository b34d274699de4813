// The persistent host thread pool of cpu and emu devices (src/devices/host_pool.hpp): every index
// exactly once in static contiguous chunks with the caller taking chunk 0, a worker's exception
// rethrown in the caller, the same threads reused over many calls, idle workers asleep, and
// through hit::launch: the `threads` partition equal to `single` bit for bit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "devices/host_pool.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/tile.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

using hit::detail::HostPool;

// The kernel's id of the calling thread: unlike std::thread::id, not handed to a new thread as
// soon as an old one is joined, so counting them tells new threads from reused ones.
pid_t tid() {
  return gettid();
}

// Which thread ran each index of one call.
struct Record {
  explicit Record(std::int64_t n) : runs(static_cast<std::size_t>(n)), by(runs.size()) {}
  std::vector<std::atomic<int>> runs;
  std::vector<std::atomic<pid_t>> by;
  void operator()(std::int64_t i) {
    runs[static_cast<std::size_t>(i)].fetch_add(1);
    by[static_cast<std::size_t>(i)].store(tid());
  }
};

TEST(HostPool, EveryIndexOnceInContiguousChunksWithTheCallerFirst) {
  HostPool pool;
  for (int threads : {2, 3, 4, 8}) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{threads - 1}, std::int64_t{threads},
                           std::int64_t{threads + 1}, std::int64_t{100 * threads + 7}}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + ", n " + std::to_string(n));
      Record rec(n);
      pool.parallel_for(n, threads, [&](std::int64_t i) { rec(i); });
      const std::int64_t t = std::min<std::int64_t>(threads, n);
      std::set<pid_t> threads_used;
      for (std::int64_t c = 0; c < t; ++c) {
        // Chunk c is [c*n/t, (c+1)*n/t), all of it on one thread, chunk 0 on the caller's.
        const pid_t owner = rec.by[static_cast<std::size_t>(c * n / t)].load();
        if (c == 0) {
          EXPECT_EQ(owner, tid());
        }
        threads_used.insert(owner);
        for (std::int64_t i = c * n / t; i < (c + 1) * n / t; ++i) {
          EXPECT_EQ(rec.runs[static_cast<std::size_t>(i)].load(), 1) << "index " << i;
          EXPECT_EQ(rec.by[static_cast<std::size_t>(i)].load(), owner) << "index " << i;
        }
      }
      EXPECT_EQ(static_cast<std::int64_t>(threads_used.size()), t);
    }
  }
}

TEST(HostPool, NothingToDoAndOneThreadStartNoWorker) {
  HostPool pool;
  int calls = 0;
  pool.parallel_for(0, 4, [&](std::int64_t) { ++calls; });
  pool.parallel_for(-3, 4, [&](std::int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::vector<std::int64_t> order;
  pool.parallel_for(5, 1, [&](std::int64_t i) { order.push_back(i); });
  pool.parallel_for(1, 4, [&](std::int64_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 0}));
  EXPECT_EQ(pool.workers(), 0);
}

TEST(HostPool, WorkersStartAtFirstUseSizedToTheLargestCall) {
  HostPool pool;
  EXPECT_EQ(pool.workers(), 0);
  pool.parallel_for(10, 2, [](std::int64_t) {});
  EXPECT_EQ(pool.workers(), 1);
  pool.parallel_for(10, 4, [](std::int64_t) {});
  EXPECT_EQ(pool.workers(), 3);
  pool.parallel_for(10, 2, [](std::int64_t) {});
  pool.parallel_for(2, 8, [](std::int64_t) {});  // two indices: two threads, no more workers
  EXPECT_EQ(pool.workers(), 3);
}

TEST(HostPool, RethrowsAWorkersExceptionAfterEveryChunkFinished) {
  HostPool pool;
  // 100 indices on 4 threads: chunks [0,25) [25,50) [50,75) [75,100); chunk 2 throws at 60.
  std::vector<std::atomic<int>> runs(100);
  try {
    pool.parallel_for(100, 4, [&](std::int64_t i) {
      if (i == 60) throw std::runtime_error("index 60 failed");
      runs[static_cast<std::size_t>(i)].fetch_add(1);
    });
    FAIL() << "the worker's exception was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 60 failed");
  }
  // The failing chunk stopped at its exception; the others ran to their end.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), (i >= 60 && i < 75) ? 0 : 1) << i;
  }
  // Two chunks throw: the lowest chunk's exception comes back, whichever finished first.
  for (int round = 0; round < 20; ++round) {
    try {
      pool.parallel_for(100, 4, [&](std::int64_t i) {
        if (i == 80) throw std::runtime_error("chunk 3");
        if (i == 30) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          throw std::runtime_error("chunk 1");
        }
      });
      FAIL() << "nothing rethrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk 1");
    }
  }
  // The caller's own chunk throwing waits for the workers too, and the pool works afterwards.
  std::atomic<int> others{0};
  EXPECT_THROW(pool.parallel_for(100, 4,
                                 [&](std::int64_t i) {
                                   if (i == 0) throw std::logic_error("caller");
                                   if (i >= 25) others.fetch_add(1);
                                 }),
               std::logic_error);
  EXPECT_EQ(others.load(), 75);
  Record rec(100);
  pool.parallel_for(100, 4, [&](std::int64_t i) { rec(i); });
  for (const auto& r : rec.runs) EXPECT_EQ(r.load(), 1);
}

TEST(HostPool, ReusesItsThreadsOverManyCalls) {
  HostPool pool;
  std::set<pid_t> seen;
  std::mutex m;
  std::vector<double> out(4096);
  for (int call = 0; call < 1000; ++call) {
    const int threads = 2 + call % 3;  // 2, 3, 4
    const std::int64_t n = 1 + (call * 37) % 4096;
    pool.parallel_for(n, threads, [&](std::int64_t i) {
      out[static_cast<std::size_t>(i)] = static_cast<double>(call) * 0.5 + static_cast<double>(i);
      if (i % 64 == 0) {
        std::lock_guard<std::mutex> lock(m);
        seen.insert(tid());
      }
    });
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[static_cast<std::size_t>(i)],
                static_cast<double>(call) * 0.5 + static_cast<double>(i))
          << "call " << call << " index " << i;
    }
  }
  // The caller and at most three workers: a thread per call would have shown hundreds.
  EXPECT_LE(seen.size(), 4u);
  EXPECT_EQ(pool.workers(), 3);
}

TEST(HostPool, ACallFromInsideACallRunsOnItsOwnThread) {
  HostPool pool;
  std::vector<std::atomic<int>> runs(8 * 50);
  pool.parallel_for(8, 4, [&](std::int64_t outer) {
    pool.parallel_for(50, 4, [&](std::int64_t inner) {
      runs[static_cast<std::size_t>(outer * 50 + inner)].fetch_add(1);
    });
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(HostPool, TwoCallersAtOnceBothGetEveryIndex) {
  HostPool pool;
  std::atomic<int> wrong{0};
  const auto caller = [&](int salt) {
    for (int call = 0; call < 300; ++call) {
      std::vector<int> v(257, -1);
      pool.parallel_for(257, 3, [&](std::int64_t i) { v[static_cast<std::size_t>(i)] = salt; });
      if (std::count(v.begin(), v.end(), salt) != 257) wrong.fetch_add(1);
    }
  };
  std::thread a(caller, 1), b(caller, 2);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
}

// CPU time the thread `t` of this process has used, in nanoseconds (schedstat's first field).
long long cpu_ns(pid_t t) {
  std::ifstream in("/proc/self/task/" + std::to_string(t) + "/schedstat");
  long long ns = -1;
  in >> ns;
  return ns;
}

TEST(HostPool, IdleWorkersSleep) {
  if (cpu_ns(tid()) < 0) GTEST_SKIP() << "no /proc/<pid>/task/<tid>/schedstat";
  HostPool pool;
  Record rec(3);
  pool.parallel_for(3, 3, [&](std::int64_t i) { rec(i); });
  const pid_t w1 = rec.by[1].load(), w2 = rec.by[2].load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // well past the polling
  const long long before = cpu_ns(w1) + cpu_ns(w2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const long long used = cpu_ns(w1) + cpu_ns(w2) - before;
  // Two threads spinning (even yielding) would use a large part of 2 x 300 ms.
  EXPECT_LT(used, 30'000'000) << "idle workers used " << used / 1000 << " us of CPU in 300 ms";
}

// ---- through hit::launch -----------------------------------------------------------------------

hit::Environment& env() {
  return hit::Environment::current();
}

class ThreadsPartition : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    original_ = hit::PhysicalTopology::of(env()).mine().device;
    hit::rebind_device(env(), hit::parse_device_spec(GetParam(), 1).front());
  }
  void TearDown() override { hit::rebind_device(env(), original_); }

 private:
  hit::DeviceBinding original_;
};

// Not small integers: rounding differs if a block computed another element's value.
double value(hit::index_t i, hit::index_t j) {
  return 1.0 / (1.0 + static_cast<double>(i)) + 0.37 * static_cast<double>((i * 31 + j * 17) % 97) +
         1e-3 * static_cast<double>(j);
}

// Two jacobi5 sweeps over the interior of a 203 x 131 grid; the result's bytes.
std::vector<unsigned char> sweeps(const std::string& spec) {
  const hit::Shape grid = hit::Shape::extents({203, 131});
  const hit::Shape interior = hit::Shape::extents({201, 129}).displace(hit::Index{1, 1});
  hit::Tile<double> u(grid), v(grid);
  u.for_each([](const hit::Index& i, double& x) { x = value(i[0], i[1]); });
  v.fill(-1.0);  // what a block that never ran would leave
  const auto k = hit::jacobi5<double>();
  const auto p = hit::partition(spec, interior, {.access = k.access()});
  hit::launch(k, p, hit::in(u), hit::inout(v));
  hit::launch(k, p, hit::in(v), hit::inout(u));
  std::vector<unsigned char> bytes(static_cast<std::size_t>(grid.size()) * sizeof(double));
  std::size_t at = 0;
  u.for_each([&](const hit::Index&, const double& x) {
    std::memcpy(bytes.data() + at, &x, sizeof x);
    at += sizeof x;
  });
  return bytes;
}

TEST_P(ThreadsPartition, EqualsSingleBitForBit) {
  const auto single = sweeps("single");
  for (const char* spec :
       {"threads:threads=2", "threads:threads=3", "threads:threads=4", "threads:threads=7"}) {
    EXPECT_TRUE(sweeps(spec) == single) << spec << " differs from single";
  }
}

TEST_P(ThreadsPartition, LaunchesReuseTheDevicesThreads) {
  const hit::Shape shape = hit::Shape::extents({64, 16});
  hit::Tile<double> t(shape);
  t.fill(0);
  std::mutex m;
  std::set<pid_t> seen;
  std::map<std::int64_t, int> blocks;
  hit::Kernel<hit::View<double>> k("count");
  k.cpu([&](const hit::KernelContext& ctx, hit::View<double> x) {
    for (auto i = ctx.block.begin[0]; i < ctx.block.end[0]; ++i) {
      for (auto j = ctx.block.begin[1]; j < ctx.block.end[1]; ++j) x(i, j) += 1;
    }
    std::lock_guard<std::mutex> lock(m);
    seen.insert(tid());
    ++blocks[ctx.block_index];
  });
  const auto p = hit::partition("threads:threads=3", shape, {.access = k.access()});
  ASSERT_EQ(p.threads(), 3);
  ASSERT_EQ(p.block_count(), 3);
  constexpr int launches = 300;
  for (int l = 0; l < launches; ++l) hit::launch(k, p, hit::inout(t));
  t.for_each([&](const hit::Index& i, double x) { ASSERT_EQ(x, launches) << i.str(); });
  EXPECT_EQ(blocks, (std::map<std::int64_t, int>{{0, launches}, {1, launches}, {2, launches}}));
  // Three threads ran the blocks of every launch: the pool's, not new ones each time.
  EXPECT_EQ(seen.size(), 3u);
}

std::string device_name(const ::testing::TestParamInfo<const char*>& param) {
  return std::string(param.param).substr(0, 3);
}

INSTANTIATE_TEST_SUITE_P(Devices, ThreadsPartition, ::testing::Values("cpu:0", "emu:0"),
                         device_name);

}  // namespace
