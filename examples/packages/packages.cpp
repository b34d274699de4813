// hit-packages with hitmap++: the output's rows laid by name (an ordinary layout), then either
// each rank computes its own rows in one launch (static), or hit::WorkPackages cuts the rows into
// equal packages and the ranks take them on demand, prefetching and rerouting around a failed
// device. The result is the same ordinary distributed tile either way.
#include "packages.hpp"

#include <algorithm>
#include <memory>

#include "clustercl_apps.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/hit.hpp"
#include "hit/work_packages.hpp"
#include "mandelbrot.hpp"
#include "packages_io.hpp"

namespace hit::packages {
namespace {

template <class T>
Kernel<View<T>> mandelbrot_kernel(const Frame& frame) {
  Kernel<View<T>> k(std::is_same_v<T, double> ? "mandelbrot<double>" : "mandelbrot<float>");
  k.cpu([frame](const KernelContext& ctx, View<T> result) {
    const Box& b = ctx.block;
    for (index_t r = 0; r < b.extent(0); ++r) {
      const index_t i = b.begin[0] + r * b.step[0];
      for (index_t c = 0; c < b.extent(1); ++c) {
        const index_t j = b.begin[1] + c * b.step[1];
        result(i, j) = static_cast<T>(escape_count(frame, i, j));
      }
    }
  });
#ifdef HIT_EXAMPLE_CUDA
  k.cuda(
      [frame](const KernelContext& ctx, View<T> result) { mandelbrot_cuda(ctx, frame, result); });
#endif
  k.reads({AccessPattern::parse("0,0")});
  return k;
}

// The static schedule: one launch over this rank's rows, reported as one package per rank.
template <class LaunchRows>
PackageReport run_static(Environment& env, const Layout& rows, app::Clock& clock,
                         const LaunchRows& launch_rows) {
  const Timer wall;
  const DeviceCounters before = device(env).counters();
  const LaunchRecord rec = launch_rows();
  clock.compute(rec);
  PackageReport last;
  last.busy_s = rec.seconds;
  last.wall_s = wall.seconds();
  last.idle_s = std::max(0.0, last.wall_s - rec.seconds);
  last.h2d_bytes = rec.bytes_in;
  last.d2h_bytes = rec.bytes_out;
  const DeviceCounters after = device(env).counters();
  last.evictions = after.evictions - before.evictions;
  last.evicted_bytes = after.evicted_bytes - before.evicted_bytes;
  const LocalPart mine = rows.local();
  if (mine.active) last.computed.push_back({mine.rank, mine.rank, 0, last.wall_s, false});
  return last;
}

template <class T>
int compute(Environment& env, const Options& o) {
  const bool gemm = o.workload == "gemm";
  const Frame frame = frame_of(o, gemm ? o.n : (o.width > 0 ? o.width : o.n));
  const Schedule schedule = schedule_of(env, o.schedule);
  Problem<T> p = make_problem<T>(env, o, frame);
  const auto gemm_k = gemm_accumulate<T>();
  const auto mandel_k = mandelbrot_kernel<T>(frame);
  const AccessPattern access = gemm ? gemm_k.access() : mandel_k.access();
  std::unique_ptr<WorkPackages> packages;
  if (schedule.dynamic()) {
    packages = std::make_unique<WorkPackages>(
        env, p.domain, *schedule.options, partition(o.run.partition, p.domain, {.access = access}));
  }
  const Partition whole = partition(
      o.run.partition, p.result.is_null() ? Shape() : p.result.shape(), {.access = access});
  Tile<T>& a = p.a;
  Tile<T>& b = p.b;
  Tile<T>& result = p.result;

  app::Harness harness(env, o.run);
  PackageReport last;
  harness.repeat(
      [&](int) {
        if (!result.is_null()) result.fill(T(0));
      },
      [&](app::Clock& clock) {
        if (packages) {
          last = gemm ? packages->run(gemm_k, partitioned_in(a), replicated_in(b),
                                      partitioned_out(result))
                      : packages->run(mandel_k, partitioned_out(result));
          clock.compute_seconds_add(last.busy_s);
          return;
        }
        last = run_static(env, p.rows, clock, [&] {
          return gemm ? launch(gemm_k, whole, in(a), in(b), hit::out(result))
                      : launch(mandel_k, whole, hit::out(result));
        });
      });
  const app::CheckResult check = o.run.check ? check_result(p) : app::CheckResult{};
  return report_run(env, o, p, schedule, packages.get(), whole, last, harness, check);
}

}  // namespace

int run(Environment& env, const Options& o) {
  if (is_clustercl(o.workload)) return run_clustercl(env, o);
  return app::with_element_type(o.run.type, [&]<class T>() { return compute<T>(env, o); });
}

}  // namespace hit::packages
