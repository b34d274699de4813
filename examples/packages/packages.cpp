// hit-packages with hitmap++: the output's rows laid by name (an ordinary layout), then either
// each rank computes its own rows in one launch (static), or hit::WorkPackages cuts the rows into
// equal packages and the ranks take them on demand, prefetching and rerouting around a failed
// device. The result is the same ordinary distributed tile either way.
#include "packages.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include "hit/hit.hpp"
#include "hit/work_packages.hpp"
#include "mandelbrot.hpp"

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

// What one rank did in the last timed run, as numbers rank 0 gathers.
struct DeviceStats {
  double packages = 0;
  double rows = 0;
  double busy_s = 0;
  double idle_s = 0;
  double wall_s = 0;
  double stolen = 0;
  double rerouted_in = 0;
  double abandoned = 0;
  double bytes_fetched = 0;
  double bytes_returned = 0;
  double h2d = 0;
  double d2h = 0;
  double failed = 0;
  double max_ahead = 0;
  double depth = 0;
  double overlapped = 0;
  double evictions = 0;
  double evicted_bytes = 0;
};
constexpr int stats_fields = sizeof(DeviceStats) / sizeof(double);

// Which device computed which package, and when: one lane per rank (rerouted packages red), and
// beside it the domain's rows coloured by the rank that computed them.
std::string packages_svg(const std::vector<double>& records, const std::vector<std::string>& labels,
                         index_t count, const std::string& title) {
  static const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                  "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6"};
  const std::size_t ranks = labels.size();
  double end = 0;
  for (std::size_t i = 0; i + 4 < records.size() + 1; i += 5) end = std::max(end, records[i + 3]);
  end = std::max(end, 1e-9);
  const double lane = 28;
  const double left = 260;
  const double width = 640;
  const double strip = 60;
  const double top = 40;
  const double height = top + lane * static_cast<double>(ranks) + 40;
  const double strip_h = std::max(lane * static_cast<double>(ranks), 120.0);
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"10\" y=\"20\">{}</text>\n",
      left + width + strip + 60, std::max(height, top + strip_h + 40), title);
  for (std::size_t r = 0; r < ranks; ++r) {
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\">rank {} {}</text>\n",
                       top + lane * static_cast<double>(r) + 18, r,
                       labels[r].substr(0, labels[r].find(" [")).substr(0, 32));
  }
  const double strip_x = left + width + 30;
  for (std::size_t i = 0; i + 4 < records.size() + 1; i += 5) {
    const auto id = static_cast<index_t>(records[i]);
    const auto r = static_cast<std::size_t>(records[i + 1]);
    const bool rerouted = records[i + 4] != 0;
    const double x0 = left + width * records[i + 2] / end;
    const double x1 = left + width * records[i + 3] / end;
    const char* fill = rerouted ? "#e15759" : colours[r % 10];
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" "
        "stroke=\"white\" stroke-width=\"0.5\"><title>package {} on rank {}{}</title></rect>\n",
        x0, top + lane * static_cast<double>(r) + 3, std::max(x1 - x0, 0.5), lane - 6, fill, id, r,
        rerouted ? " (rerouted)" : "");
    const double y0 = top + strip_h * static_cast<double>(id) / static_cast<double>(count);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.2f}\" fill=\"{}\"/>\n",
        strip_x, y0, strip, std::max(strip_h / static_cast<double>(count), 0.5), fill);
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\">time 0 .. {:.3f} s</text>\n<text x=\"{:.1f}\" "
      "y=\"{:.1f}\">rows</text>\n</svg>\n",
      left, top + lane * static_cast<double>(ranks) + 25, end, strip_x, top - 6);
  return svg;
}

template <class T>
int compute(Environment& env, const Options& o) {
  const bool gemm = o.workload == "gemm";
  const index_t n = o.n;
  const index_t width = gemm ? n : (o.width > 0 ? o.width : n);
  if (!(o.view[2] > 0) || !std::isfinite(o.view[0]) || !std::isfinite(o.view[1]) ||
      !std::isfinite(o.view[2])) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--view {},{},{}: the height must be a positive finite number",
                            o.view[0], o.view[1], o.view[2]));
  }
  const Frame frame{n, width, o.iters, o.view[0], o.view[1], o.view[2]};
  const Shape domain = Shape::extents({n, width});
  const std::string schedule =
      env.config().get("schedule").value_or("workPackages:size=auto,depth=2");
  const bool dynamic = schedule != "static";
  std::optional<PackageOptions> options;
  collectively(env.comm(), [&] {
    if (dynamic) options = PackageOptions::parse(schedule);
  });
  Layout rows = layout("blocks", topology("array"), domain, "out");
  collectively(env.comm(), [&] {
    const Tile<T> probe = Tile<T>::of(rows);
    if (!probe.is_null() && !(probe.shape()[1] == domain[1])) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("layout {} does not give whole rows (rank {} holds {})", rows.spec(),
                              env.rank(), probe.shape().str()));
    }
  });
  Tile<T> result = Tile<T>::of(rows);
  Tile<T> a;
  Tile<T> b;
  if (gemm) {
    a = Tile<T>::of(rows);
    b = Tile<T>(Shape::extents({n, n}));
    if (!a.is_null()) {
      a.for_each([&](const Index& k, T& v) {
        v = static_cast<T>(app::hashed_value(o.run.seed, static_cast<std::uint64_t>(k[0]),
                                             static_cast<std::uint64_t>(k[1])));
      });
    }
    b.for_each([&](const Index& k, T& v) {
      v = static_cast<T>(app::hashed_value(o.run.seed + 1, static_cast<std::uint64_t>(k[0]),
                                           static_cast<std::uint64_t>(k[1])));
    });
  }
  const auto gemm_k = gemm_accumulate<T>();
  const auto mandel_k = mandelbrot_kernel<T>(frame);
  std::unique_ptr<WorkPackages> packages;
  if (dynamic)
    packages = std::make_unique<WorkPackages>(env, domain, *options, o.run.partition, "out");
  const Partition whole = partition(o.run.partition, result.is_null() ? Shape() : result.shape(),
                                    gemm ? gemm_k.access() : mandel_k.access(), {}, "out");

  app::Harness harness(env, o.run);
  PackageReport last;
  harness.repeat(
      [&](int) {
        if (!result.is_null()) result.fill(T(0));
      },
      [&](app::Clock& clock) {
        if (dynamic) {
          last = gemm ? packages->run(gemm_k, partitioned_in(a), replicated_in(b),
                                      partitioned_out(result))
                      : packages->run(mandel_k, partitioned_out(result));
          clock.compute_seconds_add(last.busy_s);
          return;
        }
        const double t0 = MPI_Wtime();
        const DeviceCounters before = device(env).counters();
        const LaunchRecord rec = gemm ? launch(gemm_k, whole, in(a), in(b), hit::out(result))
                                      : launch(mandel_k, whole, hit::out(result));
        clock.compute(rec);
        last = PackageReport{};
        last.busy_s = rec.seconds;
        last.wall_s = MPI_Wtime() - t0;
        last.idle_s = std::max(0.0, last.wall_s - rec.seconds);
        last.h2d_bytes = rec.bytes_in;
        last.d2h_bytes = rec.bytes_out;
        const DeviceCounters after = device(env).counters();
        last.evictions = after.evictions - before.evictions;
        last.evicted_bytes = after.evicted_bytes - before.evicted_bytes;
        if (!result.is_null()) {
          last.computed.push_back({env.rank(), env.rank(), 0, last.wall_s, false});
        }
      });

  // --check: every rank recomputes its own rows serially.
  app::CheckResult check;
  if (o.run.check) {
    double worst = 0;
    if (!result.is_null()) {
      if (gemm) {
        const index_t m = result.shape().extent(0);
        std::vector<T> ref(static_cast<std::size_t>(m * n));
        const auto blas = [&](auto fn) {
          fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
             static_cast<int>(n), T(1), a.data(), static_cast<int>(a.step(0)), b.data(),
             static_cast<int>(b.step(0)), T(0), ref.data(), static_cast<int>(n));
        };
        if constexpr (std::is_same_v<T, double>) {
          blas(cblas_dgemm);
        } else {
          blas(cblas_sgemm);
        }
        double scale = 0;
        for (const T v : ref) scale = std::max(scale, std::abs(static_cast<double>(v)));
        const index_t i0 = result.shape()[0].begin();
        result.for_each([&](const Index& k, T& v) {
          const double r =
              static_cast<double>(ref[static_cast<std::size_t>((k[0] - i0) * n + k[1])]);
          worst = std::max(worst, std::abs(static_cast<double>(v) - r) / std::max(scale, 1e-300));
        });
      } else {
        result.for_each([&](const Index& k, T& v) {
          const auto r = static_cast<T>(escape_count(frame, k[0], k[1]));
          if (v != r) worst = std::max(worst, std::abs(static_cast<double>(v - r)) / o.iters);
        });
      }
    }
    check.ran = true;
    check.max_rel_error = allreduce(worst, ReduceOp::max);
    const double tolerance =
        gemm ? 8.0 * static_cast<double>(n) * std::numeric_limits<T>::epsilon() : 0.0;
    check.passed = check.max_rel_error <= tolerance;
    check.summary =
        fmt::format("{} (largest {} {:.3e}, allowed {:.1e})", check.passed ? "passed" : "FAILED",
                    gemm ? "relative error against BLAS on each rank's rows"
                         : "difference from a serial escape count",
                    check.max_rel_error, tolerance);
  }

  // What each device did in the last run, and which packages were rerouted.
  DeviceStats mine;
  for (const PackageRecord& r : last.computed) {
    mine.packages += 1;
    mine.rerouted_in += r.rerouted ? 1 : 0;
    mine.rows += dynamic ? static_cast<double>(packages->package(r.id).extent(0))
                         : static_cast<double>(result.shape().extent(0));
  }
  mine.busy_s = last.busy_s;
  // Idle: the device waiting during the span of the last repetition (from its start to the slowest
  // rank's end) — for packages or data, or for the others to finish.
  const double span = allreduce(last.wall_s, ReduceOp::max);
  mine.idle_s = std::max(0.0, span - last.busy_s);
  mine.wall_s = last.wall_s;
  mine.stolen = static_cast<double>(last.stolen);
  mine.abandoned = static_cast<double>(last.abandoned.size());
  mine.bytes_fetched = static_cast<double>(last.bytes_fetched);
  mine.bytes_returned = static_cast<double>(last.bytes_returned);
  mine.h2d = static_cast<double>(last.h2d_bytes);
  mine.d2h = static_cast<double>(last.d2h_bytes);
  mine.failed = last.device_failed ? 1 : 0;
  mine.max_ahead = last.max_ahead;
  mine.depth = last.depth;
  mine.overlapped = static_cast<double>(last.overlapped);
  mine.evictions = static_cast<double>(last.evictions);
  mine.evicted_bytes = static_cast<double>(last.evicted_bytes);
  const auto stats = app::gather_to_root(
      std::vector<double>(reinterpret_cast<const double*>(&mine),
                          reinterpret_cast<const double*>(&mine) + stats_fields),
      MPI_DOUBLE, env.comm());
  std::vector<double> flat;
  for (const PackageRecord& r : last.computed) {
    flat.insert(flat.end(), {static_cast<double>(r.id), static_cast<double>(r.rank), r.start_s,
                             r.end_s, r.rerouted ? 1.0 : 0.0});
  }
  const auto records = app::gather_to_root(flat, MPI_DOUBLE, env.comm());
  std::vector<double> gave_up;
  for (const index_t id : last.abandoned) {
    gave_up.insert(gave_up.end(), {static_cast<double>(id), static_cast<double>(env.rank())});
  }
  const auto abandoned = app::gather_to_root(gave_up, MPI_DOUBLE, env.comm());
  const auto labels = app::gather_labels(device(env).label(), env.comm());
  index_t holding = result.is_null() ? 0 : 1;
  holding = allreduce(holding, ReduceOp::sum);
  const index_t count = dynamic ? packages->count() : holding;

  collectively(env.comm(), [&] {
    if (o.run.svg.empty() || env.rank() != 0) return;
    write_file_atomically(
        o.run.svg,
        packages_svg(
            records, labels, std::max<index_t>(count, 1),
            fmt::format("hit-packages {}: {} ({} packages)", o.workload,
                        dynamic ? packages->size() > 0
                                      ? PackageOptions{packages->size(), options->depth}.spec()
                                      : schedule
                                : "static " + rows.spec(),
                        count)));
  });

  const double pixels = static_cast<double>(n) * static_cast<double>(width);
  // The work a rank was given: what it computed (static: its block).
  const double row_work =
      gemm ? 2.0 * static_cast<double>(n) * static_cast<double>(n) : static_cast<double>(width);
  harness.set_work(mine.rows * row_work);
  nlohmann::json fields = {{"app", "packages"},
                           {"workload", o.workload},
                           {"n", n},
                           {"width", width},
                           {"layout", rows.spec()},
                           {"partition", whole.spec().empty() ? o.run.partition : whole.spec()},
                           {"schedule", dynamic ? "workPackages" : "static"}};
  fields["iters"] = gemm ? nlohmann::json(nullptr) : nlohmann::json(o.iters);
  fields["view"] = gemm ? nlohmann::json(nullptr) : nlohmann::json(o.view);
  std::vector<std::string> lines;
  if (env.rank() == 0) {
    nlohmann::json per_device = nlohmann::json::array();
    for (std::size_t r = 0; r * stats_fields < stats.size(); ++r) {
      const double* v = stats.data() + r * stats_fields;
      DeviceStats s;
      std::copy(v, v + stats_fields, reinterpret_cast<double*>(&s));
      per_device.push_back({{"rank", r},
                            {"device", labels[r]},
                            {"packages", static_cast<std::int64_t>(s.packages)},
                            {"rows", static_cast<std::int64_t>(s.rows)},
                            {"busy_s", s.busy_s},
                            {"idle_s", s.idle_s},
                            {"wall_s", s.wall_s},
                            {"stolen", static_cast<std::int64_t>(s.stolen)},
                            {"rerouted_in", static_cast<std::int64_t>(s.rerouted_in)},
                            {"abandoned", static_cast<std::int64_t>(s.abandoned)},
                            {"bytes_fetched", static_cast<std::uint64_t>(s.bytes_fetched)},
                            {"bytes_returned", static_cast<std::uint64_t>(s.bytes_returned)},
                            {"h2d_bytes", static_cast<std::uint64_t>(s.h2d)},
                            {"d2h_bytes", static_cast<std::uint64_t>(s.d2h)},
                            {"evictions", static_cast<std::uint64_t>(s.evictions)},
                            {"evicted_bytes", static_cast<std::uint64_t>(s.evicted_bytes)},
                            {"max_ahead", static_cast<int>(s.max_ahead)},
                            {"overlapped", static_cast<std::int64_t>(s.overlapped)},
                            {"failed", s.failed != 0}});
      lines.push_back(fmt::format(
          "rank {} ({}): {} packages ({} rows), busy {:.4f} s, idle {:.4f} s, {} stolen, {} "
          "rerouted here, evictions {} ({} B){}",
          r, labels[r], s.packages, s.rows, s.busy_s, s.idle_s, s.stolen, s.rerouted_in,
          s.evictions, s.evicted_bytes,
          s.failed != 0 ? fmt::format(", DEVICE FAILED ({} packages abandoned)", s.abandoned)
                        : ""));
    }
    fields["per_device"] = per_device;
    std::map<index_t, int> from;
    for (std::size_t i = 0; i + 1 < abandoned.size(); i += 2)
      from[static_cast<index_t>(abandoned[i])] = static_cast<int>(abandoned[i + 1]);
    nlohmann::json rerouted = nlohmann::json::array();
    for (std::size_t i = 0; i + 4 < records.size() + 1; i += 5) {
      if (records[i + 4] == 0) continue;
      const auto id = static_cast<index_t>(records[i]);
      rerouted.push_back({{"package", id},
                          {"from_rank", from.count(id) ? from[id] : -1},
                          {"to_rank", static_cast<int>(records[i + 1])}});
    }
    fields["rerouted"] = rerouted;
  }
  // The same fields whatever the schedule (static: one block per rank, no prefetch, no tuning).
  fields["schedule_spec"] =
      dynamic ? PackageOptions{packages->size(), options->depth}.spec() : std::string("static");
  fields["package_size"] = dynamic ? packages->size() : 0;
  fields["packages"] = count;
  fields["depth"] = dynamic ? options->depth : 0;
  fields["depth_used"] = dynamic ? last.depth : 0;
  fields["rounds"] = dynamic ? last.rounds : 1;
  fields["tuning"] = nullptr;
  if (dynamic && options->size == 0) {
    fields["tuning"] = {{"overhead_s", packages->tuned_overhead_s()},
                        {"row_s", packages->tuned_row_s()}};
    lines.insert(
        lines.begin(),
        fmt::format("package size tuned to {} rows (overhead {:.2e} s per package, "
                    "{:.2e} s per row on the slowest device)",
                    packages->size(), packages->tuned_overhead_s(), packages->tuned_row_s()));
  }
  const std::string headline = fmt::format(
      "hit-packages: {} {}x{}, {}, {} ranks, {}", o.workload, n, width, o.run.type, env.size(),
      dynamic ? fmt::format("work packages of {} rows ({} packages, depth {})", packages->size(),
                            packages->count(), options->depth)
              : "static " + rows.spec());
  const double t = harness.median_time();
  const std::pair<std::string, double> throughput =
      gemm ? std::pair<std::string, double>{"gflops",
                                            t > 0 ? 2.0 * std::pow(static_cast<double>(n), 3) / t *
                                                        1e-9
                                                  : 0.0}
           : std::pair<std::string, double>{"mcells_per_s", t > 0 ? pixels / t * 1e-6 : 0.0};
  return harness.report(fields, headline, throughput, gemm ? "flops" : "pixels", lines, check);
}

}  // namespace

int run(Environment& env, const Options& o) {
  if (o.run.type == "float") return compute<float>(env, o);
  return compute<double>(env, o);
}

}  // namespace hit::packages
