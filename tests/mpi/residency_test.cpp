// hit-test-procs: 1 2 3 4
// Tiles resident on an (emulated) device through communication: a halo moves the faces only, a
// shift the padded buffer once each way, a double-buffered shift swaps buffers instead of packing,
// results equal host runs; Comms keep their tiles alive; inactive processes run the same code
// with null tiles and empty partitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "devices/rebind.hpp"
#include "hit/hit.hpp"

namespace {

using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Tile;

hit::Environment& env() {
  return hit::Environment::current();
}

double value_at(const Index& i) {
  return 1.0 + static_cast<double>(i[0]) * 1000.0 + static_cast<double>(i[1]);
}

// Binds this rank to its own emulated device (restored afterwards), so every copy between host
// and device memory is counted.
class Residency : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = hit::device(env()).binding();
    hit::DeviceBinding emu = hit::parse_device_spec("emu:0(mem=64MiB)", 1).front();
    emu.index = env().rank();
    dev_ = &hit::rebind_device(env(), emu);
  }
  void TearDown() override { hit::rebind_device(env(), original_); }
  hit::Device& dev() { return *dev_; }

 private:
  hit::DeviceBinding original_;
  hit::Device* dev_ = nullptr;
};

// c += a on the device, to read `a` and write `c`.
hit::Kernel<hit::View<const double>, hit::View<double>> accumulate() {
  hit::Kernel<hit::View<const double>, hit::View<double>> k("accumulate");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> y) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i) {
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) y(i, j) += x(i, j);
    }
  });
  return k;
}

// Runs `iterations` of: halo of u, sum += u, u += sum (both on the device). `U` is a Tile or a
// Resident, so the same code gives the resident run and its host-tile reference.
template <class U>
void halo_iterations(const hit::Layout& lay, U& u, U& sum, int iterations) {
  hit::Comm h = hit::halo(lay, u);
  const auto part = hit::partition("single", lay.local().block());
  for (int it = 0; it < iterations; ++it) {
    h.run();
    hit::launch(accumulate(), part, hit::in(u), hit::inout(sum));
    hit::launch(accumulate(), part, hit::in(sum), hit::inout(u));
  }
  h.run();
}

TEST_F(Residency, HaloMovesTheFacesOnly) {
  const index_t n = 40;
  const auto lay = hit::layout("blocks", hit::topology("mesh2d"), Shape::extents({n, n}));
  const Shape mine = lay.local().block();
  // Face elements this rank receives per halo (the blocks are aligned: as many as it sends).
  index_t face = 0;
  for (int axis = 0; axis < 2; ++axis) {
    for (int dir : {-1, 1}) {
      if (lay.neighbor(env().rank(), axis, dir, false)) face += mine.extent(1 - axis);
    }
  }
  const auto grid_bytes = static_cast<std::uint64_t>(mine.expand(1).size()) * sizeof(double);
  const auto face_bytes = static_cast<std::uint64_t>(face) * sizeof(double);

  hit::Resident<double> u = hit::Resident<double>::of(lay, {.ghost = 1});
  hit::Resident<double> sum = hit::Resident<double>::of(lay, {.ghost = 1});
  u.host().for_each([](const Index& i, double& v) { v = value_at(i); });
  u.modified_on_host();
  sum.modified_on_host();
  dev().reset_counters();
  const int iterations = 5;
  halo_iterations(lay, u, sum, iterations);
  const hit::DeviceCounters c = dev().counters();
  // Both tiles once, then the faces of every halo but the first (when the host was current):
  // out of the device what is sent, into it what is received.
  EXPECT_EQ(c.bytes_in, 2 * grid_bytes + iterations * face_bytes);
  EXPECT_EQ(c.bytes_out, iterations * face_bytes);

  // The same with host tiles, staged whole by every launch: bit-identical results.
  Tile<double> hu = Tile<double>::of(lay, {.ghost = 1});
  Tile<double> hsum = Tile<double>::of(lay, {.ghost = 1});
  hu.for_each([](const Index& i, double& v) { v = value_at(i); });
  halo_iterations(lay, hu, hsum, iterations);
  u.sync_to_host();
  const Tile<double> got = u.host().with_ghosts();
  hu.with_ghosts().for_each(
      [&](const Index& i, double want) { EXPECT_EQ(got.at(i), want) << i.str(); });
}

TEST_F(Residency, DoubleBufferedShiftSwapsAndSendsOnceEachWay) {
  const index_t n = 23;  // uneven blocks: the padding travels
  const int grid_procs = env().size() >= 4 ? 4 : 1;
  const auto lay =
      hit::layout("blocks", hit::topology("square", grid_procs), Shape::extents({n, n}));
  hit::Resident<double> a = hit::Resident<double>::of(lay, {.padded = true});
  a.host().for_each([](const Index& i, double& v) { v = value_at(i); });
  a.modified_on_host();
  hit::Comm plain = hit::shift(lay, a, 1, 1);  // built over the first buffer
  hit::Comm swapped = hit::shift(lay, a, 1, 1, {.double_buffered = true});
  // A launch reads a: it is then current on both sides.
  hit::Resident<double> sink = hit::Resident<double>::of(lay);
  hit::launch(accumulate(), hit::partition("single", a.host().shape()), hit::in(a),
              hit::inout(sink));
  const int side = lay.active_extent(1);
  const bool moves = !a.is_null() && side > 1;
  const auto padded_bytes =
      a.is_null() ? 0 : static_cast<std::uint64_t>(a.host().padded_shape().size()) * sizeof(double);
  const double* first = a.host().data();
  dev().reset_counters();
  swapped.run();
  if (moves) {
    EXPECT_EQ(dev().counters().bytes_out, 0u);  // the device copy was not newer than the host's
    EXPECT_EQ(dev().counters().bytes_in, padded_bytes);
    EXPECT_NE(a.host().data(), first);
    // a holds the block of the process one place back along axis 1, at the same positions.
    const Index me = lay.local().coords;
    const int from = lay.topology().proc_at(Index{me[0], (me[1] + side - 1) % side});
    const Shape theirs = lay.block(from);
    a.sync_to_host();
    theirs.for_each([&](const Index& i) {
      const Index pos{i[0] - theirs[0].begin(), i[1] - theirs[1].begin()};
      EXPECT_EQ(a.host().local(pos), value_at(i)) << i.str();
    });
    // The plan built over the buffer now swapped away refuses to run (every rank of the grid
    // has one, so they all throw before any message).
    EXPECT_THROW(plain.run(), hit::Error);
    for (int s = 1; s < side; ++s) swapped.run();  // round the ring: home again
    EXPECT_EQ(a.host().data(), side % 2 == 0 ? first : a.host().data());
    a.host().for_each([](const Index& i, double v) { EXPECT_EQ(v, value_at(i)) << i.str(); });
  }
}

TEST_F(Residency, ACommKeepsItsTilesAlive) {
  const auto lay = hit::layout("blocks", hit::topology("array"), Shape::extents({17, 3}));
  Tile<double> whole = env().rank() == 0 ? Tile<double>(lay.shape()) : Tile<double>();
  hit::Comm shifted;
  hit::Comm gathered;
  {
    Tile<double> t = Tile<double>::of(lay, {.padded = true});
    t.for_each([](const Index& i, double& v) { v = value_at(i); });
    shifted = hit::shift(lay, t, 0, 1);
    gathered = hit::gather(lay, t, 0, whole);
  }  // t's variable is gone; the plans hold its memory
  gathered.run();
  if (env().rank() == 0) {
    whole.for_each([](const Index& i, double v) { EXPECT_EQ(v, value_at(i)) << i.str(); });
  }
  shifted.run();
  gathered.run();
  if (env().rank() == 0 && lay.active_extent(0) == 1) {
    whole.for_each([](const Index& i, double v) { EXPECT_EQ(v, value_at(i)); });
  }
}

TEST_F(Residency, InactiveProcessesRunTheSameCode) {
  // One row: with 2+ processes, some hold nothing.
  const auto lay = hit::layout("blocks", hit::topology("array"), Shape::extents({1, 8}));
  const hit::LocalPart me = lay.local();
  EXPECT_EQ(me.rank, env().rank());
  EXPECT_EQ(me.active, env().rank() == 0);
  hit::Resident<double> r = hit::Resident<double>::of(lay, {.ghost = 1});
  EXPECT_EQ(r.is_null(), !me.active);
  r.host().fill(2.0);
  r.modified_on_host();
  const auto part = hit::partition("single", r.host().shape());
  EXPECT_EQ(part.domain().is_null() || part.domain().empty(), !me.active);
  hit::Comm h = hit::halo(lay, r);
  h.run();
  const hit::LaunchRecord rec =
      hit::launch(accumulate(), part, hit::in(r), hit::inout(r));  // doubles the active block
  r.sync_to_host();
  EXPECT_EQ(rec.elements, me.active ? 8 : 0);
  if (me.active) {
    EXPECT_EQ(r.host().at(Index{0, 3}), 4.0);
  }
  EXPECT_EQ(hit::allreduce(me.active ? 1 : 0, hit::ReduceOp::sum), 1);
}

TEST(LocalPart, DescribesThisProcess) {
  const auto topo = hit::topology("mesh2d");
  const auto lay = hit::layout("blocks", topo, Shape::extents({9, 7}));
  const hit::LocalPart me = lay.local();
  EXPECT_EQ(me.rank, env().rank());
  EXPECT_EQ(me.coords, topo.coords(env().rank()));
  EXPECT_EQ(me.blocks, lay.blocks(env().rank()));
  EXPECT_EQ(me.elements(), lay.elements(env().rank()));
  // A process outside the grid (part(p) answers for any rank).
  const hit::LocalPart outside = lay.part(topo.procs() + 3);
  EXPECT_FALSE(outside.active);
  EXPECT_TRUE(outside.block().is_null());
  // Several blocks: block() says to use blocks.
  const auto cyc = hit::layout("blockCyclic:b=1", hit::topology("array"), Shape::extents({20}));
  if (cyc.local().blocks.size() > 1) {
    EXPECT_THROW((void)cyc.local().block(), hit::Error);
    EXPECT_THROW((void)Tile<double>::of(cyc), hit::Error);
  }
  // The layout knows the devices it was made for (this run's binding).
  EXPECT_EQ(lay.devices().size(), static_cast<std::size_t>(topo.procs()));
}

}  // namespace
