// hit-test-procs: 1 2 3 4
// Work packages: every package computed exactly once and the result equal to a serial loop, on
// host and emulated devices, with inputs laid out differently from the output (rows fetched from
// other ranks), replicated inputs, any package size and depth; prefetch within depth and device
// memory; rerouting after an injected device failure; every device failing is an error on every
// rank; bad options; the partition of each launch; reduced outputs (summed once over every
// package, a failed device's partial sums left out) and stencil inputs with their halo rows; runs
// of several kernels whose package-local arrays stay on the device between the steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/rebind.hpp"
#include "hit/hit.hpp"

namespace {

using hit::index_t;
using hit::Shape;
using hit::Tile;

hit::Environment& env() {
  return hit::Environment::current();
}

constexpr index_t cols = 6;

double input_at(index_t i, index_t j) {
  return 0.5 + static_cast<double>(i) * 10.0 + static_cast<double>(j);
}
double weight_at(index_t j) {
  return 1.0 + 0.25 * static_cast<double>(j);
}
// What the kernel computes at (i, j), serially.
double expected(index_t i, index_t j) {
  return input_at(i, j) * weight_at(j) + static_cast<double>(i);
}

// out(i, j) = in(i, j) * w(j) + i: reads a partitioned input, a replicated one and the row index.
// `spin`: extra work per row (iterations of a loop the compiler cannot remove), so that devices
// of unlike slowdowns differ by more than a loaded machine's noise.
hit::Kernel<hit::View<const double>, hit::View<const double>, hit::View<double>> scale_rows(
    std::int64_t spin = 0) {
  hit::Kernel<hit::View<const double>, hit::View<const double>, hit::View<double>> k("scale_rows");
  k.cpu([spin](const hit::KernelContext& ctx, hit::View<const double> in, hit::View<const double> w,
               hit::View<double> out) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i) {
      volatile std::int64_t sink = 0;
      for (std::int64_t s = 0; s < spin; ++s) sink = sink + s;
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) {
        out(i, j) = in(i, j) * w(j) + static_cast<double>(i);
      }
    }
  });
  return k;
}

struct Arrays {
  Tile<double> in;
  Tile<double> w;
  Tile<double> out;
};

// Input rows by `in_layout`, output rows by `out_layout`, the weights whole on every rank.
Arrays make_arrays(index_t rows, const std::string& in_layout, const std::string& out_layout) {
  const Shape shape = Shape::extents({rows, cols});
  Arrays a;
  a.in = Tile<double>::of(hit::layout(in_layout, hit::topology("array"), shape));
  a.out = Tile<double>::of(hit::layout(out_layout, hit::topology("array"), shape));
  a.w = Tile<double>(Shape::extents({cols}));
  if (!a.in.is_null())
    a.in.for_each([](const hit::Index& k, double& v) { v = input_at(k[0], k[1]); });
  a.w.for_each([](const hit::Index& k, double& v) { v = weight_at(k[0]); });
  if (!a.out.is_null()) a.out.fill(-1.0);
  return a;
}

// How many times each package was computed, over all ranks.
std::vector<std::int64_t> times_computed(const hit::PackageReport& r) {
  std::vector<std::int64_t> times(static_cast<std::size_t>(r.count), 0);
  for (const hit::PackageRecord& p : r.computed) {
    for (index_t id = p.id; id < p.id + p.packages; ++id) ++times[static_cast<std::size_t>(id)];
  }
  hit::allreduce_in_place(times.data(), static_cast<int>(times.size()), MPI_INT64_T, MPI_SUM,
                          env().comm());
  return times;
}

// The number of this rank's output elements that differ from the serial loop, over all ranks.
std::int64_t wrong_elements(Tile<double> out) {
  std::int64_t wrong = 0;
  if (!out.is_null()) {
    out.for_each([&](const hit::Index& k, double& v) {
      if (v != expected(k[0], k[1])) ++wrong;
    });
  }
  return hit::allreduce(wrong, hit::ReduceOp::sum);
}

struct Case {
  index_t rows;
  index_t size;
  int depth;
  std::string in_layout;
  std::string out_layout;
};

void run_case(const Case& c) {
  SCOPED_TRACE(::testing::Message()
               << "rows " << c.rows << " size " << c.size << " depth " << c.depth << " in "
               << c.in_layout << " out " << c.out_layout << " on " << hit::device(env()).label());
  Arrays a = make_arrays(c.rows, c.in_layout, c.out_layout);
  hit::WorkPackages packages(env(), Shape::extents({c.rows, cols}),
                             hit::PackageOptions{c.size, c.depth});
  const auto report = packages.run(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                                   hit::partitioned_out(a.out));
  EXPECT_EQ(report.count, (c.rows + c.size - 1) / c.size);
  const auto times = times_computed(report);
  for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
  EXPECT_EQ(wrong_elements(a.out), 0);
  EXPECT_LE(report.max_ahead, c.depth);
  EXPECT_EQ(report.rounds, 1);
  EXPECT_FALSE(report.device_failed);
  // Rows this rank computed but does not own travelled to their owner, and back.
  std::int64_t foreign = 0;
  for (const hit::PackageRecord& p : report.computed) {
    const Shape pkg = packages.package(p.id);
    if (a.out.is_null() || !a.out.shape().contains(pkg.first())) ++foreign;
  }
  if (foreign > 0 && c.in_layout == c.out_layout) {
    EXPECT_GT(report.bytes_returned, 0u);
  }
}

const std::vector<Case>& cases() {
  // "up" and "down": weighted row layouts with weights 1..P and P..1, so most input rows of a
  // package live on another rank than its output rows.
  static const std::vector<Case> all = {
      {1, 1, 1, "blocks", "blocks"},   {17, 1, 1, "blocks", "blocks"},
      {17, 3, 2, "blocks", "blocks"},  {40, 7, 3, "blocks", "blocks"},
      {40, 40, 1, "blocks", "blocks"}, {41, 5, 2, "up", "blocks"},
      {64, 4, 2, "down", "up"},        {64, 9, 1, "blocks", "down"},
  };
  return all;
}

std::string layout_name(const std::string& spec) {
  if (spec != "up" && spec != "down") return spec;
  std::string w = "weighted:w=";
  for (int r = 0; r < env().size(); ++r)
    w += (r == 0 ? "" : ",") + std::to_string(spec == "up" ? r + 1 : env().size() - r);
  return w;
}

// Runs `check` on every case, its layouts named for this run.
template <class Check>
void each_case(const Check& check) {
  for (Case c : cases()) {
    c.in_layout = layout_name(c.in_layout);
    c.out_layout = layout_name(c.out_layout);
    check(c);
  }
}

TEST(WorkPackages, EveryPackageOnceOnHostDevices) {
  each_case(run_case);
}

// Binds this rank to its own emulated device for one test (restored afterwards).
class OnEmulated {
 public:
  // `index`: the device's (every rank its own: its rank).
  explicit OnEmulated(const std::string& spec, int index = env().rank())
      : original_(hit::device(env()).binding()) {
    hit::DeviceBinding b = hit::parse_device_spec(spec, 1).front();
    b.index = index;
    dev_ = &hit::rebind_device(env(), b);
  }
  ~OnEmulated() { hit::rebind_device(env(), original_); }
  OnEmulated(const OnEmulated&) = delete;
  OnEmulated& operator=(const OnEmulated&) = delete;
  hit::Device& dev() { return *dev_; }

 private:
  hit::DeviceBinding original_;
  hit::Device* dev_ = nullptr;
};

TEST(WorkPackages, EveryPackageOnceOnEmulatedDevices) {
  OnEmulated emu("emu:0(mem=64MiB,bw=2GB/s)");
  each_case(run_case);
  // Inputs moved to the device: the prefetches count as host -> device traffic.
  EXPECT_GT(emu.dev().counters().bytes_in, 0u);
}

TEST(WorkPackages, PrefetchOverlapsTheLaunchBefore) {
  // Packages from a rank's own queue are claimed depth + 1 at a time and copied to the device at
  // once: every one but the first reaches the device while an earlier package computes.
  OnEmulated emu("emu:0(bw=1GB/s)");
  Arrays a = make_arrays(24 * env().size(), "blocks", "blocks");
  for (const int depth : {1, 2, 4}) {
    hit::WorkPackages packages(env(), Shape::extents({24 * env().size(), cols}),
                               hit::PackageOptions{2, depth});
    const auto report = packages.run(scale_rows(), hit::partitioned_in(a.in),
                                     hit::replicated_in(a.w), hit::partitioned_out(a.out));
    std::uint64_t own = 0;
    for (const auto& p : report.computed) {
      own += a.in.shape().contains(packages.package(p.id).first()) ? 1 : 0;
    }
    // A device that placement found much slower than another holds nothing ahead (docs/
    // packages.md, "Prefetch depth per device"); on a loaded machine that can be any rank's.
    if (own >= 3 && report.max_ahead >= 1) {
      EXPECT_GE(report.overlapped, 1u) << "depth " << depth;
    }
    if (env().size() == 1) {
      EXPECT_EQ(report.overlapped, report.computed.size() - 1) << "depth " << depth;
    }
    EXPECT_LE(report.overlapped, report.computed.size());
    EXPECT_EQ(wrong_elements(a.out), 0);
  }
}

// y(i, j) = x(i, j).
hit::Kernel<hit::View<const double>, hit::View<double>> copy_rows() {
  hit::Kernel<hit::View<const double>, hit::View<double>> k("copy");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> y) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i)
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) y(i, j) = x(i, j);
  });
  return k;
}

TEST(WorkPackages, DepthIsBoundedByDeviceMemory) {
  // A package of 100 rows x 64 doubles is 50 KiB of input and as much output, which the runtime
  // budgets at 75 KiB each (a cache line per row): 240 KiB hold the output and two input slots
  // (depth 1) but not four (depth 3).
  OnEmulated emu("emu:0(mem=240KiB)");
  const index_t rows = 400;
  const Shape shape = Shape::extents({rows, 64});
  auto in = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  if (!in.is_null()) in.fill(1.0);
  const auto copy = copy_rows();
  hit::WorkPackages packages(env(), shape, hit::PackageOptions{100, 3});
  const auto report = packages.run(copy, hit::partitioned_in(in), hit::partitioned_out(out));
  // At most 1 (a device the placement finds much slower than another holds none ahead).
  EXPECT_LE(report.depth, 1);
  EXPECT_LE(report.max_ahead, 1);
  EXPECT_LE(emu.dev().used(), emu.dev().capacity());

  // One package larger than the device: a clear error on every rank.
  hit::WorkPackages too_big(env(), shape, hit::PackageOptions{400, 1});
  try {
    too_big.run(copy, hit::partitioned_in(in), hit::partitioned_out(out));
    ADD_FAILURE() << "a package larger than the device ran";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("use a smaller size="), std::string::npos) << e.what();
  }
}

TEST(WorkPackages, FailedDeviceIsRoutedAround) {
  if (env().size() < 2) GTEST_SKIP() << "needs a second rank to take over";
  const bool last = env().rank() == env().size() - 1;
  // The last rank's device fails at its third kernel execution. It is 30 times faster than the
  // others (their slowdown scales the kernel's CPU time, which a loaded machine does not
  // inflate), so placement gives it packages whatever the noise: with equal devices, a probe
  // delayed by another process made it look slow, it took one package or none, and never failed.
  OnEmulated emu(last ? "emu:0(fail=2)" : "emu:0(slowdown=30,clock=cpu)");
  // 12 packages: the others, 30 times slower, would not finish one before the fast device
  // finished all, so they take no part in the first round, and the failed device's own queue
  // must go to the next round with what it held (nobody else would claim it).
  const index_t rows = 24;
  const std::int64_t spin = 500000;  // about 0.5 ms per row
  Arrays a = make_arrays(rows, "blocks", "blocks");
  hit::WorkPackages packages(env(), Shape::extents({rows, cols}), hit::PackageOptions{2, 2});
  const std::uint64_t executed_before = hit::device(env()).counters().executions;
  const auto report = packages.run(scale_rows(spin), hit::partitioned_in(a.in),
                                   hit::replicated_in(a.w), hit::partitioned_out(a.out));
  const auto times = times_computed(report);
  for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
  EXPECT_EQ(wrong_elements(a.out), 0);
  EXPECT_EQ(report.device_failed, last);
  if (last) {
    // Two executions before the failure (the failing one is not counted): the first times the
    // device for placement, the second times it again alone if it was the quickest (on a loaded
    // machine a slow device's probe can come out quicker), else computes its first package.
    EXPECT_EQ(hit::device(env()).counters().executions - executed_before, 2u);
    EXPECT_LE(report.computed.size(), 1u);
    EXPECT_FALSE(report.abandoned.empty());
    EXPECT_NE(report.failure.find("fail=2"), std::string::npos) << report.failure;
  }
  // The packages it abandoned were computed elsewhere, marked rerouted.
  auto abandoned = static_cast<std::int64_t>(report.abandoned.size());
  abandoned = hit::allreduce(abandoned, hit::ReduceOp::sum);
  std::int64_t rerouted = 0;
  for (const auto& p : report.computed) rerouted += p.rerouted ? 1 : 0;
  rerouted = hit::allreduce(rerouted, hit::ReduceOp::sum);
  EXPECT_GT(abandoned, 0);
  EXPECT_EQ(rerouted, abandoned);
  EXPECT_EQ(report.rounds, 2);

  // The device stays out: a second run computes nothing on it, and is still complete.
  if (!a.out.is_null()) a.out.fill(-1.0);
  const auto again = packages.run(scale_rows(spin), hit::partitioned_in(a.in),
                                  hit::replicated_in(a.w), hit::partitioned_out(a.out));
  EXPECT_EQ(wrong_elements(a.out), 0);
  if (last) {
    EXPECT_TRUE(again.computed.empty());
  }
  EXPECT_EQ(again.rounds, 1);
}

TEST(WorkPackages, EveryDeviceFailingIsAnErrorOnEveryRank) {
  OnEmulated emu("emu:0(fail=1)");
  Arrays a = make_arrays(30, "blocks", "blocks");
  hit::WorkPackages packages(env(), Shape::extents({30, cols}), hit::PackageOptions{3, 1});
  try {
    packages.run(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                 hit::partitioned_out(a.out));
    ADD_FAILURE() << "the run succeeded with every device failed";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device_failed);
    EXPECT_NE(std::string(e.what()).find("every device failed"), std::string::npos) << e.what();
  }
}

TEST(WorkPackages, TunedSizeIsAgreedAndBounded) {
  const index_t rows = 256;
  Arrays a = make_arrays(rows, "blocks", "blocks");
  hit::WorkPackages packages(env(), Shape::extents({rows, cols}), hit::PackageOptions{0, 2});
  EXPECT_EQ(packages.size(), 0);
  const auto report = packages.run(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                                   hit::partitioned_out(a.out));
  EXPECT_GE(packages.size(), 1);
  EXPECT_LE(packages.size(), std::max<index_t>(1, rows / (4 * env().size())));
  auto size = static_cast<std::int64_t>(packages.size());
  EXPECT_EQ(hit::allreduce(size, hit::ReduceOp::max), hit::allreduce(size, hit::ReduceOp::min));
  EXPECT_GT(packages.tuned_row_s(), 0.0);
  EXPECT_EQ(wrong_elements(a.out), 0);
  EXPECT_EQ(report.size, packages.size());
}

TEST(WorkPackages, BadOptionsAreClearErrors) {
  const auto parse_error = [](const std::string& spec, const std::string& expect) {
    try {
      static_cast<void>(hit::PackageOptions::parse(spec));
      ADD_FAILURE() << spec << " parsed";
    } catch (const hit::Error& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  parse_error("workPackages:size=0", "size=0 is not a positive number");
  parse_error("workPackages:size=-4", "size=-4 is not a positive number");
  parse_error("workPackages:depth=0", "depth=0 is outside 1..1024");
  parse_error("workPackages:size=ten", "size");
  parse_error("workPackages:speed=2", "speed");
  parse_error("blocks", "not a work-package spec");
  const auto options = hit::PackageOptions::parse("workPackages:size=8,depth=3");
  EXPECT_EQ(options.size, 8);
  EXPECT_EQ(options.depth, 3);
  EXPECT_EQ(hit::PackageOptions::parse(options.spec()).size, 8);
  EXPECT_EQ(hit::PackageOptions::parse("workPackages").size, 0);  // auto
  parse_error("workPackages:batch=2", "batch=2 is neither auto nor 1");
  parse_error("workPackages:size=8,batch=auto", "batch=auto needs size=auto");
  EXPECT_EQ(hit::PackageOptions::parse("workPackages").batch, 1);
  EXPECT_EQ(hit::PackageOptions::parse("workPackages:size=8").batch, 1);
  const auto per_device = hit::PackageOptions::parse("workPackages:batch=auto");
  EXPECT_EQ(per_device.batch, 0);
  EXPECT_EQ(per_device.spec(), "workPackages:size=auto,depth=2,batch=auto");
  EXPECT_EQ(hit::PackageOptions::parse(per_device.spec()).batch, 0);
  EXPECT_EQ(hit::PackageOptions::parse("workPackages").spec(), "workPackages:size=auto,depth=2");
  try {
    hit::WorkPackages packages(env(), Shape::extents({10, cols}), hit::PackageOptions{11, 1});
    ADD_FAILURE() << "a package larger than the domain was accepted";
  } catch (const hit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the domain's 10 rows"), std::string::npos)
        << e.what();
  }
}

TEST(WorkPackages, EachLaunchUsesThePartitionOfTheDomain) {
  const index_t rows = 40;
  const Shape domain = Shape::extents({rows, cols});
  Arrays a = make_arrays(rows, "blocks", "blocks");
  // Built as for hit::launch: each package's launch uses its plug-in and parameters.
  hit::WorkPackages packages(env(), domain, hit::PackageOptions{6, 2},
                             hit::partition("threads", domain));
  const auto report = packages.run(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                                   hit::partitioned_out(a.out));
  const auto times = times_computed(report);
  for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
  EXPECT_EQ(wrong_elements(a.out), 0);
  // A partition of another domain is a clear error.
  try {
    hit::WorkPackages other(env(), domain, hit::PackageOptions{6, 2},
                            hit::partition("single", Shape::extents({rows / 2, cols})));
    ADD_FAILURE() << "a partition of another domain was accepted";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("partition must be one of the domain"), std::string::npos)
        << e.what();
  }
}

// ---- reduced outputs and halo rows --------------------------------------------------------------

// sums(j) += in(i, j) * w(j) over the package's rows: an input-partitioned kernel whose output is
// whole on every rank (clusterCL's input partitioning). The values are small integers, so the
// sums are exact in any order. `spin` as for scale_rows.
hit::Kernel<hit::View<const double>, hit::View<const double>, hit::View<double>> column_sums(
    std::int64_t spin = 0) {
  hit::Kernel<hit::View<const double>, hit::View<const double>, hit::View<double>> k("column_sums");
  k.cpu([spin](const hit::KernelContext& ctx, hit::View<const double> in, hit::View<const double> w,
               hit::View<double> sums) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i) {
      volatile std::int64_t sink = 0;
      for (std::int64_t s = 0; s < spin; ++s) sink = sink + s;
      for (index_t j = 0; j < cols; ++j) sums(j) += in(i, j) * w(j);
    }
  });
  // The 1-D arrays' patterns are left unknown: a pattern is over the domain's axes.
  k.reads({hit::AccessPattern::parse("0,0"), hit::AccessPattern(), hit::AccessPattern()});
  return k;
}

double column_sum(index_t rows, index_t j) {
  double s = 0;
  for (index_t i = 0; i < rows; ++i) s += input_at(i, j) * weight_at(j);
  return s;
}

// Elements of every rank's whole `sums` that differ from the serial column sums, over all ranks.
std::int64_t wrong_sums(const Tile<double>& sums, index_t rows) {
  std::int64_t wrong = 0;
  for (index_t j = 0; j < cols; ++j) wrong += sums(j) == column_sum(rows, j) ? 0 : 1;
  return hit::allreduce(wrong, hit::ReduceOp::sum);
}

void run_reduced_case(const Case& c) {
  SCOPED_TRACE(::testing::Message() << "rows " << c.rows << " size " << c.size << " in "
                                    << c.in_layout << " on " << hit::device(env()).label());
  Arrays a = make_arrays(c.rows, c.in_layout, c.out_layout);
  Tile<double> sums(Shape::extents({cols}));
  sums.fill(-7.0);  // overwritten, not added to
  hit::WorkPackages packages(env(), Shape::extents({c.rows, cols}),
                             hit::PackageOptions{c.size, c.depth});
  for (int run = 0; run < 2; ++run) {  // the second run starts its sums from zero again
    const auto report = packages.run(column_sums(), hit::partitioned_in(a.in),
                                     hit::replicated_in(a.w), hit::reduced_out(sums));
    const auto times = times_computed(report);
    for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
    EXPECT_EQ(wrong_sums(sums, c.rows), 0) << "run " << run;
  }
}

TEST(WorkPackages, AReducedOutputSumsEveryPackageOnceOnEveryRank) {
  each_case(run_reduced_case);
  OnEmulated emu("emu:0(mem=64MiB,bw=2GB/s)");
  each_case(run_reduced_case);
}

TEST(WorkPackages, AReducedOutputOfTheDomainsRankComesBackWhole) {
  // A 1-D domain and a 1-D reduced output: each row adds to an element outside its own index
  // range, which a copy back trimmed to the launch's rows (as partitioned outputs are) would lose.
  OnEmulated emu("emu:0(bw=2GB/s)");
  const index_t rows = 37;
  constexpr index_t bins = 4;
  const Shape domain = Shape::extents({rows});
  auto in = Tile<double>::of(hit::layout("blocks", hit::topology("array"), domain));
  if (!in.is_null()) in.for_each([](const hit::Index& k, double& v) { v = 1.0 + 3.0 * k[0]; });
  Tile<double> sums(Shape::extents({bins}));
  hit::Kernel<hit::View<const double>, hit::View<double>> binned("binned");
  binned.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> s) {
    for (index_t i = ctx.block.begin[0]; i < ctx.block.begin[0] + ctx.block.extent(0); ++i)
      s((i + 2) % bins) += x(i);
  });
  hit::WorkPackages packages(env(), domain, hit::PackageOptions{2, 2});
  packages.run(binned, hit::partitioned_in(in), hit::reduced_out(sums));
  std::int64_t wrong = 0;
  for (index_t k = 0; k < bins; ++k) {
    double want = 0;
    for (index_t i = 0; i < rows; ++i) want += (i + 2) % bins == k ? 1.0 + 3.0 * i : 0.0;
    wrong += sums(k) == want ? 0 : 1;
  }
  EXPECT_EQ(hit::allreduce(wrong, hit::ReduceOp::sum), 0);
}

TEST(WorkPackages, AFailedDevicesPartialSumsAreNotCounted) {
  if (env().size() < 2) GTEST_SKIP() << "needs a second rank to take over";
  const bool last = env().rank() == env().size() - 1;
  // As in FailedDeviceIsRoutedAround: the fast last device fails at its third execution, with
  // packages it held; they are summed once, by the others.
  OnEmulated emu(last ? "emu:0(fail=2)" : "emu:0(slowdown=30,clock=cpu)");
  const index_t rows = 24;
  Arrays a = make_arrays(rows, "blocks", "blocks");
  Tile<double> sums(Shape::extents({cols}));
  hit::WorkPackages packages(env(), Shape::extents({rows, cols}), hit::PackageOptions{2, 2});
  const std::int64_t spin = 500000;  // about 0.5 ms per row
  const auto report = packages.run(column_sums(spin), hit::partitioned_in(a.in),
                                   hit::replicated_in(a.w), hit::reduced_out(sums));
  EXPECT_EQ(report.device_failed, last);
  const auto times = times_computed(report);
  for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
  EXPECT_EQ(wrong_sums(sums, rows), 0);
}

// out(i, j) = in(i - 1, j) + 2 in(i, j) + in(i + 1, j), rows outside the array counting 0: reads
// one row either side of its own.
hit::Kernel<hit::View<const double>, hit::View<double>, index_t> vertical_stencil() {
  hit::Kernel<hit::View<const double>, hit::View<double>, index_t> k("vertical_stencil");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> in, hit::View<double> out,
           index_t rows) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i) {
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) {
        const double up = i > 0 ? in(i - 1, j) : 0.0;
        const double down = i + 1 < rows ? in(i + 1, j) : 0.0;
        out(i, j) = up + 2 * in(i, j) + down;
      }
    }
  });
  k.reads({hit::AccessPattern::parse("-1:1,0"), hit::AccessPattern::parse("0,0")});
  return k;
}

TEST(WorkPackages, AStencilsInputComesWithItsHaloRows) {
  const auto check = [](const Case& c) {
    SCOPED_TRACE(::testing::Message()
                 << "rows " << c.rows << " size " << c.size << " in " << c.in_layout << " out "
                 << c.out_layout << " on " << hit::device(env()).label());
    Arrays a = make_arrays(c.rows, c.in_layout, c.out_layout);
    hit::WorkPackages packages(env(), Shape::extents({c.rows, cols}),
                               hit::PackageOptions{c.size, c.depth});
    const auto report = packages.run(vertical_stencil(), hit::partitioned_in(a.in),
                                     hit::partitioned_out(a.out), c.rows);
    const auto times = times_computed(report);
    for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
    std::int64_t wrong = 0;
    if (!a.out.is_null()) {
      a.out.for_each([&](const hit::Index& k, double& v) {
        const double up = k[0] > 0 ? input_at(k[0] - 1, k[1]) : 0.0;
        const double down = k[0] + 1 < c.rows ? input_at(k[0] + 1, k[1]) : 0.0;
        if (v != up + 2 * input_at(k[0], k[1]) + down) ++wrong;
      });
    }
    EXPECT_EQ(hit::allreduce(wrong, hit::ReduceOp::sum), 0);
  };
  each_case(check);
  OnEmulated emu("emu:0(mem=64MiB,bw=2GB/s)");
  each_case(check);
}

TEST(WorkPackages, ArraysThatCannotTakePartAreClearErrors) {
  const index_t rows = 20;
  const Shape domain = Shape::extents({rows, cols});
  Arrays a = make_arrays(rows, "blocks", "blocks");
  const auto expect_error = [](const auto& run, const std::string& expect) {
    try {
      run();
      ADD_FAILURE() << "ran; expected an error with: " << expect;
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  // A reduced output summed by several host threads at once.
  Tile<double> sums(Shape::extents({cols}));
  hit::WorkPackages threaded(env(), domain, hit::PackageOptions{5, 1},
                             hit::partition("threads:threads=2", domain));
  expect_error(
      [&] {
        threaded.run(column_sums(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                     hit::reduced_out(sums));
      },
      "a reduced output needs a package's blocks run one at a time");
  // A partitioned input its kernel reads whole columns of.
  hit::Kernel<hit::View<const double>, hit::View<double>> whole("whole_columns");
  whole.cpu([](const hit::KernelContext&, hit::View<const double>, hit::View<double>) {});
  whole.reads({hit::AccessPattern::parse("all,0"), hit::AccessPattern::parse("0,0")});
  hit::WorkPackages packages(env(), domain, hit::PackageOptions{5, 1});
  expect_error([&] { packages.run(whole, hit::partitioned_in(a.in), hit::partitioned_out(a.out)); },
               "pass it whole with hit::replicated_in");
  // A reduced output of another shape on one rank.
  Tile<double> uneven(Shape::extents({env().rank() == 0 ? cols : cols + 1}));
  if (env().size() > 1) {
    hit::WorkPackages sized(env(), domain, hit::PackageOptions{5, 1});
    try {
      sized.run(column_sums(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                hit::reduced_out(uneven));
      ADD_FAILURE() << "reduced outputs of different shapes were accepted";
    } catch (const hit::Error& e) {
      EXPECT_NE(std::string(e.what()).find("the same whole array everywhere"), std::string::npos)
          << e.what();
    }
  }
}

// out(i, j) = t(i, j) + 1: the second step of a run whose first writes t (scale_rows).
hit::Kernel<hit::View<const double>, hit::View<double>> add_one() {
  hit::Kernel<hit::View<const double>, hit::View<double>> k("add_one");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> t, hit::View<double> out) {
    const hit::Box& b = ctx.block;
    for (index_t i = b.begin[0]; i < b.begin[0] + b.extent(0); ++i)
      for (index_t j = b.begin[1]; j < b.begin[1] + b.extent(1); ++j) out(i, j) = t(i, j) + 1.0;
  });
  return k;
}

// The output elements that differ from the two steps' serial result, over all ranks.
std::int64_t wrong_after_steps(Tile<double> out) {
  std::int64_t wrong = 0;
  if (!out.is_null()) {
    out.for_each([&](const hit::Index& k, double& v) {
      if (v != expected(k[0], k[1]) + 1.0) ++wrong;
    });
  }
  return hit::allreduce(wrong, hit::ReduceOp::sum);
}

TEST(WorkPackages, StepsComputeEveryPackageOnceThroughAPackageLocalArray) {
  const auto check = [](const Case& c) {
    SCOPED_TRACE(::testing::Message()
                 << "rows " << c.rows << " size " << c.size << " depth " << c.depth << " in "
                 << c.in_layout << " out " << c.out_layout << " on " << hit::device(env()).label());
    Arrays a = make_arrays(c.rows, c.in_layout, c.out_layout);
    const Shape domain = Shape::extents({c.rows, cols});
    hit::WorkPackages packages(env(), domain, hit::PackageOptions{c.size, c.depth});
    const hit::PackageLocal<double> t(domain);
    const auto report =
        packages.run(hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                               hit::local_out(t)),
                     hit::step(add_one(), hit::local_in(t), hit::partitioned_out(a.out)));
    const auto times = times_computed(report);
    for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
    EXPECT_EQ(wrong_after_steps(a.out), 0);
  };
  each_case(check);
  {
    OnEmulated emu("emu:0(mem=64MiB,bw=2GB/s)");
    each_case(check);
  }
  // Every rank on one small emulated device (the slots' device copies of every rank share it).
  OnEmulated shared("emu:0(mem=8MiB)", 0);
  each_case(check);
}

TEST(WorkPackages, APackageLocalArrayNeverLeavesTheDevice) {
  // The same two kernels as two runs through a partitioned intermediate move it to the host and
  // back; as two steps of one run it stays on the device: the bytes that cross are the input's
  // rows (and the replicated weights) in and the output's rows out. Counted on the second run of
  // each (the first one's probe launches a package more).
  OnEmulated emu("emu:0(mem=64MiB)");
  const index_t rows = 16 * env().size();
  const Shape domain = Shape::extents({rows, cols});
  const auto row_bytes = static_cast<std::uint64_t>(cols * sizeof(double));
  const std::uint64_t all_rows = static_cast<std::uint64_t>(rows) * row_bytes;
  const auto sum = [](std::uint64_t v) {
    auto x = static_cast<std::int64_t>(v);
    return static_cast<std::uint64_t>(hit::allreduce(x, hit::ReduceOp::sum));
  };
  Arrays a = make_arrays(rows, "blocks", "blocks");
  hit::WorkPackages steps(env(), domain, hit::PackageOptions{4, 2});
  const hit::PackageLocal<double> t(domain);
  hit::PackageReport fused;
  for (int run = 0; run < 2; ++run) {
    if (!a.out.is_null()) a.out.fill(-1.0);
    fused = steps.run(hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                                hit::local_out(t)),
                      hit::step(add_one(), hit::local_in(t), hit::partitioned_out(a.out)));
    EXPECT_EQ(wrong_after_steps(a.out), 0) << "run " << run;
  }
  EXPECT_EQ(sum(fused.d2h_bytes), all_rows);
  EXPECT_GE(sum(fused.h2d_bytes), all_rows);
  EXPECT_LE(sum(fused.h2d_bytes), all_rows + static_cast<std::uint64_t>(env().size()) * row_bytes);

  auto between = Tile<double>::of(hit::layout("blocks", hit::topology("array"), domain));
  hit::WorkPackages first(env(), domain, hit::PackageOptions{4, 2});
  hit::WorkPackages second(env(), domain, hit::PackageOptions{4, 2});
  std::uint64_t in = 0;
  std::uint64_t out = 0;
  for (int run = 0; run < 2; ++run) {
    if (!a.out.is_null()) a.out.fill(-1.0);
    const auto r1 = first.run(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                              hit::partitioned_out(between));
    const auto r2 =
        second.run(add_one(), hit::partitioned_in(between), hit::partitioned_out(a.out));
    EXPECT_EQ(wrong_after_steps(a.out), 0) << "run " << run;
    in = sum(r1.h2d_bytes + r2.h2d_bytes);
    out = sum(r1.d2h_bytes + r2.d2h_bytes);
  }
  EXPECT_EQ(out, 2 * all_rows);
  EXPECT_GE(in, 2 * all_rows);
}

TEST(WorkPackages, ADeviceFailingBetweenStepsHasItsPackageComputedElsewhere) {
  if (env().size() < 2) GTEST_SKIP() << "needs a second rank to take over";
  // The last rank's fast device fails at its sixth kernel execution (counted from 0: fail=5), a
  // second step: the probe launches both steps (executions 0 and 1) and, the device being the
  // quickest, both again alone (2 and 3); 4 and 5 are its first package's. The packages it held
  // are computed again elsewhere, both steps, and every result is right.
  const bool last = env().rank() == env().size() - 1;
  OnEmulated emu(last ? "emu:0(fail=5)" : "emu:0(slowdown=30,clock=cpu)");
  const index_t rows = 24;
  const Shape domain = Shape::extents({rows, cols});
  Arrays a = make_arrays(rows, "blocks", "blocks");
  hit::WorkPackages packages(env(), domain, hit::PackageOptions{2, 2});
  const hit::PackageLocal<double> t(domain);
  const auto report =
      packages.run(hit::step(scale_rows(500000), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                             hit::local_out(t)),
                   hit::step(add_one(), hit::local_in(t), hit::partitioned_out(a.out)));
  const auto times = times_computed(report);
  for (std::size_t id = 0; id < times.size(); ++id) EXPECT_EQ(times[id], 1) << "package " << id;
  EXPECT_EQ(wrong_after_steps(a.out), 0);
  EXPECT_EQ(hit::allreduce(std::int64_t{report.device_failed ? 1 : 0}, hit::ReduceOp::sum), 1);
  auto abandoned = static_cast<std::int64_t>(report.abandoned.size());
  abandoned = hit::allreduce(abandoned, hit::ReduceOp::sum);
  std::int64_t rerouted = 0;
  for (const auto& p : report.computed) rerouted += p.rerouted ? 1 : 0;
  EXPECT_GT(abandoned, 0);
  EXPECT_EQ(hit::allreduce(rerouted, hit::ReduceOp::sum), abandoned);
}

TEST(WorkPackages, APackageLocalArrayCountsInDeviceMemoryOnEveryRank) {
  // Rank 0's device has 200 KiB. A package of 100 rows x 64 doubles is budgeted 75 KiB per array
  // (a cache line per row): one kernel's input and output fit (150 KiB), but two steps hold a
  // package-local array on the device besides (225 KiB): an out-of-memory error on every rank,
  // though only rank 0's device is short.
  OnEmulated emu(env().rank() == 0 ? "emu:0(mem=200KiB)" : "emu:0(mem=64MiB)");
  const index_t rows = 400;
  const Shape shape = Shape::extents({rows, 64});
  auto in = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  auto out = Tile<double>::of(hit::layout("blocks", hit::topology("array"), shape));
  if (!in.is_null()) in.fill(1.0);
  const auto copy = copy_rows();
  hit::WorkPackages one(env(), shape, hit::PackageOptions{100, 1});
  EXPECT_NO_THROW(one.run(copy, hit::partitioned_in(in), hit::partitioned_out(out)));
  hit::WorkPackages two(env(), shape, hit::PackageOptions{100, 1});
  const hit::PackageLocal<double> t(shape);
  try {
    two.run(hit::step(copy, hit::partitioned_in(in), hit::local_out(t)),
            hit::step(copy, hit::local_in(t), hit::partitioned_out(out)));
    ADD_FAILURE() << "a package-local array that does not fit ran";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory) << e.what();
    EXPECT_NE(std::string(e.what()).find("of inputs and package-local arrays"), std::string::npos)
        << e.what();
  }
}

TEST(WorkPackages, StepsThatCannotShareAPackageAreClearErrors) {
  const index_t rows = 20;
  const Shape domain = Shape::extents({rows, cols});
  Arrays a = make_arrays(rows, "blocks", "blocks");
  hit::WorkPackages packages(env(), domain, hit::PackageOptions{5, 1});
  const hit::PackageLocal<double> t(domain);
  const auto expect_error = [](const auto& run, const std::string& expect) {
    try {
      run();
      ADD_FAILURE() << "ran; expected an error with: " << expect;
    } catch (const hit::Error& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  expect_error(
      [&] {
        packages.run(hit::step(add_one(), hit::local_in(t), hit::partitioned_out(a.out)),
                     hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                               hit::local_out(t)));
      },
      "is read before a step wrote it");
  // A step reads what an earlier one wrote to a partitioned array (it goes back to its owners
  // only after the package's last step).
  Tile<double> between = Tile<double>::of(hit::layout("blocks", hit::topology("array"), domain));
  expect_error(
      [&] {
        packages.run(
            hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                      hit::partitioned_out(between)),
            hit::step(add_one(), hit::partitioned_in(between), hit::partitioned_out(a.out)));
      },
      "only through a package-local array");
  expect_error(
      [&] {
        packages.run(hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                               hit::partitioned_out(a.out)),
                     hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                               hit::partitioned_out(a.out)));
      },
      "is written by one step only");
  // A stencil over a package-local array.
  expect_error(
      [&] {
        packages.run(
            hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                      hit::local_out(t)),
            hit::step(vertical_stencil(), hit::local_in(t), hit::partitioned_out(a.out), rows));
      },
      "a package holds only its own rows of it");
  const hit::PackageLocal<double> short_rows(Shape::extents({rows - 1, cols}));
  expect_error(
      [&] {
        packages.run(hit::step(scale_rows(), hit::partitioned_in(a.in), hit::replicated_in(a.w),
                               hit::local_out(short_rows)),
                     hit::step(add_one(), hit::local_in(short_rows), hit::partitioned_out(a.out)));
      },
      "must have the domain's rows");
}

}  // namespace
