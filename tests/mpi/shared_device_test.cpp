// hit-test-procs: 1 2 3 4
// Several ranks on one emulated device whose memory holds one rank's resident tiles and a little
// more (docs/devices.md, "Several ranks on one device"): the ranks take turns, giving up idle
// copies for the rank that launches; a copy is written back only when the device changed it;
// results equal a plain host computation; the device lock's critical sections never overlap; a
// rank that fails inside a launch while others wait for room ends the run on every rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "devices/rebind.hpp"
#include "hit/hit.hpp"

namespace {

using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Sig;
using hit::Tile;
using ::testing::HasSubstr;

hit::Environment& env() {
  return hit::Environment::current();
}

constexpr index_t cols = 64;  // 512 bytes a row: no padding on an emulated device
constexpr std::uint64_t row_bytes = cols * sizeof(double);

// c += a over c's rows (a has at least as many).
hit::Kernel<hit::View<const double>, hit::View<double>> accumulate() {
  hit::Kernel<hit::View<const double>, hit::View<double>> k("accumulate");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> y) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.end[0]; ++i) {
      for (index_t j = b.begin[1]; j < b.end[1]; ++j) y(i, j) += x(i, j);
    }
  });
  return k;
}

Shape rows_of(index_t rows) {
  return Shape{Sig(0, rows), Sig(0, cols)};
}

double value_at(const Index& i, int salt) {
  return static_cast<double>((i[0] * 31 + i[1] * 7 + salt * 13) % 97);
}

// Every rank on emu:0 (bound so before anything else binds the ranks), with the parameters of
// each test; restored afterwards.
class SharedDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env().config().set("devices", "emu:0*" + std::to_string(env().size()));
    hit::PhysicalTopology::of(env());
  }
  void SetUp() override { original_ = hit::device(env()).binding(); }
  void TearDown() override { hit::rebind_device(env(), original_); }
  hit::Device& bind(const std::string& params) {
    hit::DeviceBinding emu = hit::parse_device_spec("emu:0(" + params + ")", 1).front();
    emu.index = original_.index;
    return hit::rebind_device(env(), emu);
  }
  // The device's critical sections of every rank never overlap.
  static void expect_no_overlap(const std::vector<double>& mine) {
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(env().size()));
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, env().comm());
    std::vector<int> offsets(counts.size(), 0);
    for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                   MPI_DOUBLE, env().comm());
    std::vector<std::pair<double, double>> spans;
    for (std::size_t s = 0; s + 1 < all.size(); s += 2) spans.emplace_back(all[s], all[s + 1]);
    std::sort(spans.begin(), spans.end());
    for (std::size_t s = 1; s < spans.size(); ++s) {
      ASSERT_GE(spans[s].first, spans[s - 1].second)
          << "critical sections " << s - 1 << " and " << s << " overlap";
    }
  }

 private:
  hit::DeviceBinding original_;
};

}  // namespace

TEST_F(SharedDevice, RanksTakeTurnsAndWriteBackOnlyWhatTheDeviceChanged) {
  // a is read (never changed on the device), c is written: 32 KiB and 12 KiB. The device holds
  // one rank's pair and 8 KiB more.
  constexpr index_t a_rows = 64, c_rows = 24;
  constexpr std::uint64_t a_bytes = a_rows * row_bytes, c_bytes = c_rows * row_bytes;
  hit::Device& dev = bind("mem=52KiB");
  ASSERT_EQ(dev.capacity(), 52u << 10);
  ASSERT_EQ(hit::PhysicalTopology::of(env()).device_share().ranks(), env().size());

  hit::Resident<double> a{Tile<double>(rows_of(a_rows))};
  hit::Resident<double> c{Tile<double>(rows_of(c_rows))};
  a.host().for_each([](const Index& i, double& v) { v = value_at(i, env().rank()); });
  c.host().fill(0);
  a.modified_on_host();
  c.modified_on_host();
  const auto k = accumulate();
  const auto part = hit::partition("single", rows_of(c_rows), {.access = k.access()});
  constexpr int launches = 20;
  std::vector<double> sections;
  const hit::DeviceCounters before = dev.counters();
  hit::collectively(env().comm(), [&] {
    for (int t = 0; t < launches; ++t) {
      const auto rec = hit::launch(k, part, hit::in(a), hit::inout(c));
      sections.push_back(rec.lock_acquired);
      sections.push_back(rec.lock_released);
    }
  });
  const hit::DeviceCounters after = dev.counters();
  c.sync_to_host();

  c.host().for_each(
      [&](const Index& i, double v) { ASSERT_EQ(v, launches * value_at(i, env().rank())) << i; });
  const std::uint64_t evictions = after.evictions - before.evictions;
  const std::uint64_t evicted = after.evicted_bytes - before.evicted_bytes;
  const std::uint64_t back = after.bytes_out - before.bytes_out;
  // The copies given up are so many of a (32 KiB) and so many of c (12 KiB); what came back is
  // whole copies of c, never a, and at most one per copy of c given up (a copy of c placed by an
  // attempt that then found no room holds nothing newer: it is dropped, not written back).
  ASSERT_GE(evicted, evictions * c_bytes);
  ASSERT_EQ((evicted - evictions * c_bytes) % (a_bytes - c_bytes), 0u)
      << evictions << " evictions of " << evicted << " bytes are not copies of a and c";
  const std::uint64_t a_given = (evicted - evictions * c_bytes) / (a_bytes - c_bytes);
  ASSERT_LE(a_given, evictions);
  const std::uint64_t c_given = evictions - a_given;
  EXPECT_EQ(back % c_bytes, 0u) << back;
  EXPECT_LE(back / c_bytes, c_given) << evictions << " evictions, " << back << " bytes back";
  const std::uint64_t total = hit::allreduce(evictions, hit::ReduceOp::sum);
  if (env().size() == 1) {
    EXPECT_EQ(total, 0u);
    EXPECT_EQ(back, 0u);  // resident: c stays on the device until sync_to_host
  } else {
    EXPECT_GT(total, 0u) << "memory for one rank, yet nobody gave anything up";
  }
  EXPECT_LE(hit::PhysicalTopology::of(env()).device_share().peak_bytes().load(), 52u << 10);
  expect_no_overlap(sections);
}

TEST_F(SharedDevice, RandomLaunchesOfRandomSizesGiveTheHostResults) {
  // Each rank: four tiles of 8 to 40 rows, 200 launches c += a over random pairs, host writes in
  // between; the device holds the largest rank's four tiles and 4 KiB more.
  constexpr int tiles = 4, launches = 200;
  const auto sizes_of = [](int rank) {
    std::mt19937 gen(1234u + static_cast<unsigned>(rank));
    std::uniform_int_distribution<index_t> rows(8, 40);
    std::vector<index_t> out;
    for (int t = 0; t < tiles; ++t) out.push_back(rows(gen));
    return out;
  };
  std::uint64_t largest = 0;
  for (int r = 0; r < env().size(); ++r) {
    std::uint64_t sum = 0;
    for (const index_t rows : sizes_of(r)) sum += static_cast<std::uint64_t>(rows) * row_bytes;
    largest = std::max(largest, sum);
  }
  hit::Device& dev = bind("mem=" + std::to_string((largest >> 10) + 4) + "KiB");
  const auto sizes = sizes_of(env().rank());
  std::vector<hit::Resident<double>> t;
  std::vector<Tile<double>> want;
  for (int i = 0; i < tiles; ++i) {
    t.emplace_back(Tile<double>(rows_of(sizes[static_cast<std::size_t>(i)])));
    t.back().host().for_each([&](const Index& x, double& v) { v = value_at(x, i); });
    t.back().modified_on_host();
    want.emplace_back(rows_of(sizes[static_cast<std::size_t>(i)]));
    want.back().for_each([&](const Index& x, double& v) { v = value_at(x, i); });
  }
  const auto k = accumulate();
  std::mt19937 gen(99u + static_cast<unsigned>(env().rank()));
  std::uniform_int_distribution<int> pick(0, tiles - 1), percent(0, 99);
  std::mt19937 everyone(7u);  // the same draws on every rank: when to meet in a barrier
  std::vector<double> sections;
  const hit::DeviceCounters before = dev.counters();
  hit::collectively(env().comm(), [&] {
    for (int l = 0; l < launches; ++l) {
      const int x = pick(gen);
      int y = pick(gen);
      if (y == x) y = (x + 1) % tiles;
      const index_t rows =
          std::min(sizes[static_cast<std::size_t>(x)], sizes[static_cast<std::size_t>(y)]);
      const auto part = hit::partition("single", rows_of(rows), {.access = k.access()});
      const auto rec = hit::launch(k, part, hit::in(t[static_cast<std::size_t>(x)]),
                                   hit::inout(t[static_cast<std::size_t>(y)]));
      sections.push_back(rec.lock_acquired);
      sections.push_back(rec.lock_released);
      rows_of(rows).for_each([&](const Index& i) {
        want[static_cast<std::size_t>(y)].at(i) += want[static_cast<std::size_t>(x)].at(i);
      });
      if (percent(gen) < 10) {
        // The program changes a tile on the host: what the device had is superseded.
        auto& r = t[static_cast<std::size_t>(y)];
        r.sync_to_host();
        r.host().for_each([](const Index&, double& v) { v -= 1; });
        want[static_cast<std::size_t>(y)].for_each([](const Index&, double& v) { v -= 1; });
        r.modified_on_host();
      }
      if (percent(everyone) < 5) {
        hit::barrier(env().comm());  // waiting here, a rank gives up what others wait for
      }
    }
  });
  const hit::DeviceCounters after = dev.counters();
  for (int i = 0; i < tiles; ++i) {
    auto& r = t[static_cast<std::size_t>(i)];
    r.sync_to_host();
    r.host().for_each([&](const Index& x, double v) {
      ASSERT_EQ(v, want[static_cast<std::size_t>(i)].at(x)) << "tile " << i << " at " << x;
    });
  }
  const std::uint64_t total =
      hit::allreduce(after.evictions - before.evictions, hit::ReduceOp::sum);
  if (env().size() > 1) {
    EXPECT_GT(total, 0u);
  }
  expect_no_overlap(sections);
}

TEST_F(SharedDevice, ARankFailingInALaunchEndsTheRunOnEveryRank) {
  // Rank 0's device fails at its fourth execution while the others take turns with it.
  hit::Device& dev = bind(env().rank() == 0 ? "mem=52KiB,fail=3" : "mem=52KiB");
  (void)dev;
  hit::Resident<double> a{Tile<double>(rows_of(64))};
  hit::Resident<double> c{Tile<double>(rows_of(24))};
  a.host().fill(1);
  c.host().fill(0);
  a.modified_on_host();
  c.modified_on_host();
  const auto k = accumulate();
  const auto part = hit::partition("single", rows_of(24), {.access = k.access()});
  try {
    hit::collectively(env().comm(), [&] {
      for (int l = 0; l < 12; ++l) hit::launch(k, part, hit::in(a), hit::inout(c));
    });
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device_failed) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("injected: fail=3"));
  }
}
