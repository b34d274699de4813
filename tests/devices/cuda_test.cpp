// The cuda backend and the CUDA bodies of the built-in kernels, against the cpu results. Every test
// skips with a message on a machine without a GPU (or a build without CUDA).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "../support/cuda_device_test.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/tile.hpp"
#include "hit/topology/physical_topology.hpp"

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

double f(hit::index_t i, hit::index_t j) {
  return static_cast<double>((i * 7 + j * 13) % 101 + (i * j) % 17);
}

template <class T>
hit::Tile<T> filled(const hit::Shape& shape, hit::index_t ghost = 0) {
  hit::Tile<T> t(shape, hit::TileOptions{{}, ghost});
  t.with_ghosts().for_each([&](const hit::Index& i, T& v) { v = static_cast<T>(f(i[0], i[1])); });
  return t;
}

using CudaTest = CudaDeviceTest;

}  // namespace

TEST_F(CudaTest, MemoryAndCopiesRoundTrip) {
  EXPECT_EQ(dev().kind(), hit::DeviceKind::cuda);
  EXPECT_GT(dev().capacity(), 1ull << 30);
  std::vector<double> host(1000), back(1000, -1);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>(i) * 0.5;
  void* p = dev().allocate(1000 * sizeof(double));
  // 10 rows of 100 doubles into rows 128 doubles apart and back.
  void* q = dev().allocate(10 * 128 * sizeof(double));
  dev().copy_in(q, 128 * sizeof(double), host.data(), 100 * sizeof(double), 100 * sizeof(double),
                10, 1);
  dev().copy_out(back.data(), 100 * sizeof(double), q, 128 * sizeof(double), 100 * sizeof(double),
                 10, 1);
  dev().synchronize();
  EXPECT_EQ(back, host);
  dev().deallocate(q, 10 * 128 * sizeof(double));
  dev().deallocate(p, 1000 * sizeof(double));
}

TEST_F(CudaTest, AskingForMoreThanTheGpuHasIsOutOfMemory) {
  try {
    void* p = dev().allocate(dev().capacity() * 2);
    dev().deallocate(p, dev().capacity() * 2);
    ADD_FAILURE() << "twice the GPU's memory was allocated";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("device cuda:0 is out of memory"),
                                HasSubstr("more processes"), HasSubstr("outOfCore")));
  }
  // The device still works afterwards.
  void* p = dev().allocate(1024);
  dev().deallocate(p, 1024);
}

TEST_F(CudaTest, GemmMatchesTheCpu) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 6; ++trial) {
    const hit::index_t n = 1 + static_cast<hit::index_t>(rng() % 300),
                       m = 1 + static_cast<hit::index_t>(rng() % 300),
                       q = 1 + static_cast<hit::index_t>(rng() % 300);
    const hit::Shape sa{hit::Sig(0, n), hit::Sig(0, m)}, sb{hit::Sig(0, m), hit::Sig(0, q)},
        sc{hit::Sig(0, n), hit::Sig(0, q)};
    const auto a = filled<double>(sa), b = filled<double>(sb);
    auto c = filled<double>(sc);
    auto cf = filled<float>(sc);
    const auto af = filled<float>(sa), bf = filled<float>(sb);
    const auto g = hit::gemm_accumulate<double>();
    const auto gf = hit::gemm_accumulate<float>();
    dev().reset_counters();
    hit::launch(g, hit::partition("blocks", sc, {.access = g.access()}), hit::in(a), hit::in(b),
                hit::inout(c));
    EXPECT_EQ(dev().counters().copies_in, 3u);
    EXPECT_EQ(dev().counters().copies_out, 1u);
    hit::launch(gf, hit::partition("blocks", sc, {.access = gf.access()}), hit::in(af), hit::in(bf),
                hit::inout(cf));
    sc.for_each([&](const hit::Index& i) {
      double s = f(i[0], i[1]);
      for (hit::index_t k = 0; k < m; ++k) s += f(i[0], k) * f(k, i[1]);
      ASSERT_EQ(c.at(i), s) << i;
      ASSERT_NEAR(cf.at(i), s, 1e-5 * s) << i;
    });
  }
}

TEST_F(CudaTest, JacobiMatchesTheCpuInCoreAndOutOfCore) {
  const hit::Shape grid = hit::Shape::parse("[0:700][0:900]");
  const hit::Shape interior = hit::Shape::parse("[1:699][1:899]");
  const auto in = filled<double>(grid);
  const auto k = hit::jacobi5<double>();
  for (const std::string spec : {"blocks", "blocks:extra=1", "blocks:block=8x64,pad=1", "single",
                                 "outOfCore:mem=1MiB", "outOfCore:mem=1MiB,buffers=1"}) {
    hit::Tile<double> out(grid);
    out.fill(-1);
    const auto rec = hit::launch(k, hit::partition(spec, interior, {.access = k.access()}),
                                 hit::in(in), hit::out(out));
    if (spec.rfind("outOfCore", 0) == 0) {
      EXPECT_GT(rec.chunks, 2u) << spec;
    }
    out.for_each([&](const hit::Index& i, double v) {
      const double want = interior.contains(i) ? 0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) +
                                                         f(i[0], i[1] - 1) + f(i[0], i[1] + 1))
                                               : -1;
      ASSERT_EQ(v, want) << spec << i;
    });
  }
}

TEST_F(CudaTest, ResidentTilesStayOnTheGpu) {
  const hit::Shape shape = hit::Shape::parse("[0:64][0:64]");
  const auto a = filled<double>(shape), b = filled<double>(shape);
  hit::Tile<double> c(shape);
  const auto g = hit::gemm_accumulate<double>();
  const auto p = hit::partition("blocks", shape, {.access = g.access()});
  dev().reset_counters();
  hit::Resident<double> ra(a), rb(b), rc(c);
  for (int it = 0; it < 4; ++it) hit::launch(g, p, hit::in(ra), hit::in(rb), hit::inout(rc));
  EXPECT_EQ(dev().counters().copies_in, 3u);
  EXPECT_EQ(dev().counters().copies_out, 0u);
  rc.sync_to_host();
  shape.for_each([&](const hit::Index& i) {
    double s = 0;
    for (hit::index_t k = 0; k < 64; ++k) s += f(i[0], k) * f(k, i[1]);
    ASSERT_EQ(c.at(i), 4 * s) << i;
  });
}

// The jacobi5 body on a domain whose steps are not the tile's (its general kernel, not the one
// for contiguous rows): points of the domain get the mean of their array neighbours, the others
// keep their value.
TEST_F(CudaTest, JacobiOverAStridedDomain) {
  const hit::Shape grid = hit::Shape::parse("[0:300][0:400]");
  const hit::Shape interior = hit::Shape::parse("[1:299:2][1:399:3]");
  const auto in = filled<double>(grid);
  const auto k = hit::jacobi5<double>();
  hit::Tile<double> out(grid);
  out.fill(-1);
  hit::launch(k, hit::partition("blocks", interior, {.access = k.access()}), hit::in(in),
              hit::inout(out));
  out.for_each([&](const hit::Index& i, double v) {
    const double want =
        interior.contains(i)
            ? 0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) + f(i[0], i[1] - 1) + f(i[0], i[1] + 1))
            : -1;
    ASSERT_EQ(v, want) << i;
  });
}

// Queued sweeps over resident grids on the GPU: after the first launch (which sends both grids)
// the host does not wait until it asks for the result, and the result is the cpu's bit for bit.
TEST_F(CudaTest, QueuedJacobiSweepsWaitOnlyForTheResult) {
  const hit::Shape grid = hit::Shape::parse("[0:258][0:258]");
  const hit::Shape interior = hit::Shape::parse("[1:257][1:257]");
  const auto k = hit::jacobi5<double>();
  const auto sweeps = [&](hit::Completion completion) {
    auto u = filled<double>(grid);
    auto v = filled<double>(grid);
    const auto p = hit::partition("blocks", interior, {.access = k.access()});
    hit::Resident<double> ru(u), rv(v);
    for (int it = 0; it < 10; ++it) {
      const auto rec = it % 2 == 0 ? hit::launch(completion, k, p, hit::in(ru), hit::inout(rv))
                                   : hit::launch(completion, k, p, hit::in(rv), hit::inout(ru));
      const bool gpu = hit::device(hit::Environment::current()).kind() == hit::DeviceKind::cuda;
      EXPECT_EQ(rec.queued, gpu && it > 0) << it;  // the first launch sends both grids
    }
    ru.sync_to_host();
    return u;
  };
  dev().reset_counters();
  const auto on_gpu = sweeps(hit::Completion::queued);
  EXPECT_EQ(dev().counters().host_waits, 2u);  // the first launch, the result
  // The same sweeps on the host (the fixture binds the GPU back at the end).
  hit::rebind_device(hit::Environment::current(), hit::parse_device_spec("cpu:0", 1).front());
  const auto on_cpu = sweeps(hit::Completion::queued);
  on_cpu.for_each([&](const hit::Index& i, double v) { ASSERT_EQ(on_gpu.at(i), v) << i; });
}
