#pragma once
// Everything of hit-packages around the schedule (packages.cpp): the --schedule choice, the
// workload's arrays and their checks, the independent --check (each rank recomputes its rows
// serially), what every rank did gathered into the JSON report, and the --svg timeline.

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hit/hit.hpp"
#include "hit/work_packages.hpp"
#include "mandelbrot.hpp"
#include "packages.hpp"

namespace hit::packages {

// Which device computed which package, and when: one lane per rank (rerouted packages red), each
// lane's end marked with how long its device was idle before the run's end (the tail), and
// beside it the domain's rows coloured by the rank that computed them.
inline std::string packages_svg(const std::vector<PackageRecord>& records,
                                const std::vector<std::string>& labels, index_t count,
                                const std::string& title) {
  static const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                  "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6"};
  const std::size_t ranks = labels.size();
  double end = 0;
  for (const PackageRecord& p : records) end = std::max(end, p.end_s);
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
  for (const PackageRecord& p : records) {
    const auto r = static_cast<std::size_t>(p.rank);
    const double x0 = left + width * p.start_s / end;
    const double x1 = left + width * p.end_s / end;
    const char* fill = p.rerouted ? "#e15759" : colours[r % 10];
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" "
        "stroke=\"white\" stroke-width=\"0.5\"><title>{} on rank {}{}</title></rect>\n",
        x0, top + lane * static_cast<double>(r) + 3, std::max(x1 - x0, 0.5), lane - 6, fill,
        p.packages == 1 ? fmt::format("package {}", p.id)
                        : fmt::format("packages {}-{}", p.id, p.id + p.packages - 1),
        r, p.rerouted ? " (rerouted)" : "");
    const double y0 = top + strip_h * static_cast<double>(p.id) / static_cast<double>(count);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.2f}\" fill=\"{}\"/>\n",
        strip_x, y0, strip,
        std::max(strip_h * static_cast<double>(p.packages) / static_cast<double>(count), 0.5),
        fill);
  }
  // The tail: where each lane's last package ends, and how long before the run's end (the
  // devices that ran dry while another still computed).
  std::vector<double> last(ranks, -1.0);
  for (const PackageRecord& p : records) {
    const auto r = static_cast<std::size_t>(p.rank);
    if (r < ranks) last[r] = std::max(last[r], p.end_s);
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    if (last[r] < 0) continue;
    const double x = left + width * last[r] / end;
    const double y = top + lane * static_cast<double>(r);
    svg += fmt::format(
        "<line x1=\"{:.2f}\" y1=\"{:.1f}\" x2=\"{:.2f}\" y2=\"{:.1f}\" stroke=\"black\" "
        "stroke-dasharray=\"2,2\"/>\n",
        x, y + 1, x, y + lane - 1);
    if (end - last[r] > 1e-3 * end) {
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">idle {:.0f} ms at the end</text>\n",
          std::min(x + 3, left + width - 110), y + 18, 1e3 * (end - last[r]));
    }
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\">time 0 .. {:.3f} s</text>\n<text x=\"{:.1f}\" "
      "y=\"{:.1f}\">rows</text>\n</svg>\n",
      left, top + lane * static_cast<double>(ranks) + 25, end, strip_x, top - 6);
  return svg;
}

// --schedule (else HIT_SCHEDULE): static, or work packages with their options.
struct Schedule {
  std::string text;
  std::optional<PackageOptions> options;  // work packages; none: static
  bool dynamic() const { return options.has_value(); }
};

inline Schedule schedule_of(Environment& env, const Setting& schedule) {
  Schedule s;
  s.text = schedule.value;
  collectively(env.comm(), [&] {
    try {
      if (s.text != "static") s.options = PackageOptions::parse(s.text);
    } catch (const Error& e) {
      throw schedule.explain(e);
    }
  });
  return s;
}

// The workload's arrays: the output's rows laid by name (and gemm's A the same way, B whole).
template <class T>
struct Problem {
  bool gemm = false;
  index_t n = 0;
  index_t width = 0;
  Frame frame;
  Shape domain;
  Layout rows;
  Tile<T> result;
  Tile<T> a;
  Tile<T> b;
};

inline Frame frame_of(const Options& o, index_t width) {
  if (!(o.view[2] > 0) || !std::isfinite(o.view[0]) || !std::isfinite(o.view[1]) ||
      !std::isfinite(o.view[2])) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--view {},{},{}: the height must be a positive finite number",
                            o.view[0], o.view[1], o.view[2]));
  }
  return Frame{o.n, width, o.iters, o.view[0], o.view[1], o.view[2]};
}

template <class T>
Problem<T> make_problem(Environment& env, const Options& o, const Frame& frame) {
  Problem<T> p;
  p.gemm = o.workload == "gemm";
  p.n = o.n;
  p.width = frame.cols;
  p.frame = frame;
  p.domain = Shape::extents({p.n, p.width});
  p.rows = layout(o.layout, topology("array"), p.domain);
  collectively(env.comm(), [&] {
    const Tile<T> probe = Tile<T>::of(p.rows);
    if (!probe.is_null() && !(probe.shape()[1] == p.domain[1])) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("layout {} does not give whole rows (rank {} holds {})",
                              p.rows.spec(), env.rank(), probe.shape().str()));
    }
  });
  p.result = Tile<T>::of(p.rows);
  if (!p.gemm) return p;
  p.a = Tile<T>::of(p.rows);
  p.b = Tile<T>(Shape::extents({p.n, p.n}));
  if (!p.a.is_null()) {
    p.a.for_each([&](const Index& k, T& v) {
      v = static_cast<T>(app::hashed_value(o.run.seed, static_cast<std::uint64_t>(k[0]),
                                           static_cast<std::uint64_t>(k[1])));
    });
  }
  p.b.for_each([&](const Index& k, T& v) {
    v = static_cast<T>(app::hashed_value(o.run.seed + 1, static_cast<std::uint64_t>(k[0]),
                                         static_cast<std::uint64_t>(k[1])));
  });
  return p;
}

// --check, gemm: the largest error of this rank's rows against BLAS, relative to the largest
// element.
template <class T>
double gemm_error(Problem<T>& p) {
  const index_t n = p.n;
  const index_t m = p.result.shape().extent(0);
  std::vector<T> ref(static_cast<std::size_t>(m * n));
  const auto blas = [&](auto fn) {
    fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
       static_cast<int>(n), T(1), p.a.data(), static_cast<int>(p.a.step(0)), p.b.data(),
       static_cast<int>(p.b.step(0)), T(0), ref.data(), static_cast<int>(n));
  };
  if constexpr (std::is_same_v<T, double>) {
    blas(cblas_dgemm);
  } else {
    blas(cblas_sgemm);
  }
  double scale = 0;
  for (const T v : ref) scale = std::max(scale, std::abs(static_cast<double>(v)));
  const index_t i0 = p.result.shape()[0].begin();
  double worst = 0;
  p.result.for_each([&](const Index& k, T& v) {
    const double r = static_cast<double>(ref[static_cast<std::size_t>((k[0] - i0) * n + k[1])]);
    worst = std::max(worst, std::abs(static_cast<double>(v) - r) / std::max(scale, 1e-300));
  });
  return worst;
}

// --check, mandelbrot: the largest difference from a serial escape count, over the iterations.
template <class T>
double mandelbrot_error(Problem<T>& p) {
  double worst = 0;
  p.result.for_each([&](const Index& k, T& v) {
    const auto r = static_cast<T>(escape_count(p.frame, k[0], k[1]));
    if (v != r) worst = std::max(worst, std::abs(static_cast<double>(v - r)) / p.frame.iters);
  });
  return worst;
}

// --check: every rank recomputes its own rows serially.
template <class T>
app::CheckResult check_result(Problem<T>& p) {
  double worst = 0;
  if (!p.result.is_null()) worst = p.gemm ? gemm_error(p) : mandelbrot_error(p);
  app::CheckResult check;
  check.ran = true;
  check.max_rel_error = allreduce(worst, ReduceOp::max);
  const double tolerance =
      p.gemm ? 8.0 * static_cast<double>(p.n) * std::numeric_limits<T>::epsilon() : 0.0;
  check.passed = check.max_rel_error <= tolerance;
  check.summary =
      fmt::format("{} (largest {} {:.3e}, allowed {:.1e})", check.passed ? "passed" : "FAILED",
                  p.gemm ? "relative error against BLAS on each rank's rows"
                         : "difference from a serial escape count",
                  check.max_rel_error, tolerance);
  return check;
}

// What one rank did in the last timed run (every rank's is gathered).
struct DeviceStats {
  std::int64_t packages = 0;
  std::int64_t launches = 0;
  std::int64_t batch = 1;  // packages it launches at once (at most)
  std::int64_t rows = 0;
  double busy_s = 0;
  double idle_s = 0;
  double wall_s = 0;
  std::uint64_t stolen = 0;
  std::int64_t rerouted_in = 0;
  std::int64_t abandoned = 0;
  std::uint64_t bytes_fetched = 0;
  std::uint64_t bytes_returned = 0;
  std::uint64_t h2d = 0;
  std::uint64_t d2h = 0;
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;
  int max_ahead = 0;
  std::uint64_t overlapped = 0;
  bool failed = false;
  bool withdrawn = false;
};

// `rows_of`: the rows of a package this rank computed. `span`: the last repetition's, from its
// start to the slowest rank's end.
template <class RowsOf>
DeviceStats device_stats(const PackageReport& last, const RowsOf& rows_of, double span) {
  DeviceStats s;
  for (const PackageRecord& r : last.computed) {
    s.packages += r.packages;
    s.launches += 1;
    s.rerouted_in += r.rerouted ? 1 : 0;
    s.rows += rows_of(r);
  }
  s.batch = last.batch;
  s.busy_s = last.busy_s;
  // Idle: the device waiting during the span — for packages or data, or for the others to finish.
  s.idle_s = std::max(0.0, span - last.busy_s);
  s.wall_s = last.wall_s;
  s.stolen = last.stolen;
  s.abandoned = static_cast<std::int64_t>(last.abandoned.size());
  s.bytes_fetched = last.bytes_fetched;
  s.bytes_returned = last.bytes_returned;
  s.h2d = last.h2d_bytes;
  s.d2h = last.d2h_bytes;
  s.failed = last.device_failed;
  s.withdrawn = last.withdrawn;
  s.max_ahead = last.max_ahead;
  s.overlapped = last.overlapped;
  s.evictions = last.evictions;
  s.evicted_bytes = last.evicted_bytes;
  return s;
}

// What every rank did, gathered (the records, abandoned packages and labels on rank 0 only).
struct RunRecords {
  std::vector<DeviceStats> stats;
  std::vector<PackageRecord> computed;
  std::map<index_t, int> abandoned_by;  // package -> the rank whose device gave it up
  std::vector<std::string> labels;
};

inline RunRecords gather_records(Environment& env, const DeviceStats& mine,
                                 const PackageReport& last) {
  RunRecords g;
  g.stats = allgather(mine, env.comm());
  g.computed = app::gather_records_to_root(last.computed, env.comm());
  struct GaveUp {
    index_t id;
    int rank;
  };
  std::vector<GaveUp> gave_up;
  for (const index_t id : last.abandoned) gave_up.push_back({id, env.rank()});
  for (const GaveUp& a : app::gather_records_to_root(gave_up, env.comm()))
    g.abandoned_by[a.id] = a.rank;
  g.labels = app::gather_labels(device(env).label(), env.comm());
  return g;
}

// Rank 0: what each device did (JSON per_device and a line each) and which packages moved.
inline void describe_devices(const RunRecords& g, nlohmann::json& fields,
                             std::vector<std::string>& lines) {
  nlohmann::json per_device = nlohmann::json::array();
  for (std::size_t r = 0; r < g.stats.size(); ++r) {
    const DeviceStats& s = g.stats[r];
    per_device.push_back({{"rank", r},
                          {"device", g.labels[r]},
                          {"packages", s.packages},
                          {"launches", s.launches},
                          {"batch", s.batch},
                          {"rows", s.rows},
                          {"busy_s", s.busy_s},
                          {"idle_s", s.idle_s},
                          {"wall_s", s.wall_s},
                          {"stolen", static_cast<std::int64_t>(s.stolen)},
                          {"rerouted_in", s.rerouted_in},
                          {"abandoned", s.abandoned},
                          {"bytes_fetched", s.bytes_fetched},
                          {"bytes_returned", s.bytes_returned},
                          {"h2d_bytes", s.h2d},
                          {"d2h_bytes", s.d2h},
                          {"evictions", s.evictions},
                          {"evicted_bytes", s.evicted_bytes},
                          {"max_ahead", s.max_ahead},
                          {"overlapped", static_cast<std::int64_t>(s.overlapped)},
                          {"failed", s.failed},
                          {"withdrawn", s.withdrawn}});
    lines.push_back(fmt::format(
        "rank {} ({}): {} packages ({} rows) in {} launches of up to {}, busy {:.4f} s, idle "
        "{:.4f} s, {} stolen, {} rerouted here, evictions {} ({} B){}",
        r, g.labels[r], s.packages, s.rows, s.launches, s.batch, s.busy_s, s.idle_s, s.stolen,
        s.rerouted_in, s.evictions, s.evicted_bytes,
        s.failed      ? fmt::format(", DEVICE FAILED ({} packages abandoned)", s.abandoned)
        : s.withdrawn ? fmt::format(", withdrawn: its packages kept missing ({} packages handed "
                                    "back)",
                                    s.abandoned)
                      : ""));
  }
  fields["per_device"] = per_device;
  nlohmann::json rerouted = nlohmann::json::array();
  for (const PackageRecord& p : g.computed) {
    if (!p.rerouted) continue;
    const auto from = g.abandoned_by.find(p.id);
    rerouted.push_back({{"package", p.id},
                        {"from_rank", from != g.abandoned_by.end() ? from->second : -1},
                        {"to_rank", p.rank}});
  }
  fields["rerouted"] = rerouted;
}

// The same fields whatever the schedule (static: one block per rank, no prefetch, no tuning).
inline void describe_schedule(const Schedule& schedule, const WorkPackages* packages,
                              const PackageReport& last, index_t count, nlohmann::json& fields,
                              std::vector<std::string>& lines) {
  const bool dynamic = packages != nullptr;
  fields["schedule_spec"] = dynamic
                                ? PackageOptions{packages->size(), schedule.options->depth}.spec()
                                : std::string("static");
  fields["package_size"] = dynamic ? packages->size() : 0;
  fields["packages"] = count;
  fields["depth"] = dynamic ? schedule.options->depth : 0;
  fields["depth_used"] = dynamic ? last.depth : 0;
  fields["rounds"] = dynamic ? last.rounds : 1;
  fields["tuning"] = nullptr;
  if (dynamic && schedule.options->size == 0) {
    fields["tuning"] = {{"overhead_s", packages->tuned_overhead_s()},
                        {"row_s", packages->tuned_row_s()}};
    lines.insert(
        lines.begin(),
        fmt::format("package size tuned to {} rows (overhead {:.2e} s per package, "
                    "{:.2e} s per row on the fastest device)",
                    packages->size(), packages->tuned_overhead_s(), packages->tuned_row_s()));
  }
}

// --svg: which device computed which package, and when (rank 0 writes it).
template <class T>
void write_svg(Environment& env, const Options& o, const Problem<T>& p, const Schedule& schedule,
               const WorkPackages* packages, const RunRecords& g, index_t count) {
  collectively(env.comm(), [&] {
    if (o.run.svg.empty() || env.rank() != 0) return;
    const std::string how = packages == nullptr ? "static " + p.rows.spec()
                            : packages->size() > 0
                                ? PackageOptions{packages->size(), schedule.options->depth}.spec()
                                : schedule.text;
    write_file_atomically(o.run.svg, packages_svg(g.computed, g.labels, std::max<index_t>(count, 1),
                                                  fmt::format("hit-packages {}: {} ({} packages)",
                                                              o.workload, how, count)));
  });
}

// Gathers what every rank did in the last run and reports it (JSON fields and the summary).
template <class T>
int report_run(Environment& env, const Options& o, const Problem<T>& p, const Schedule& schedule,
               const WorkPackages* packages, const Partition& whole, const PackageReport& last,
               app::Harness& harness, const app::CheckResult& check) {
  const double span = allreduce(last.wall_s, ReduceOp::max);
  const auto rows_of = [&](const PackageRecord& r) -> std::int64_t {
    return packages != nullptr ? packages->rows(r).extent(0) : p.result.shape().extent(0);
  };
  const DeviceStats mine = device_stats(last, rows_of, span);
  const RunRecords g = gather_records(env, mine, last);
  index_t holding = p.result.is_null() ? 0 : 1;
  holding = allreduce(holding, ReduceOp::sum);
  const index_t count = packages != nullptr ? packages->count() : holding;
  write_svg(env, o, p, schedule, packages, g, count);

  const double n = static_cast<double>(p.n);
  const double pixels = n * static_cast<double>(p.width);
  // The work a rank was given: what it computed (static: its block).
  const double row_work = p.gemm ? 2.0 * n * n : static_cast<double>(p.width);
  harness.set_work(static_cast<double>(mine.rows) * row_work);
  nlohmann::json fields = {
      {"app", "packages"},
      {"workload", o.workload},
      {"n", p.n},
      {"width", p.width},
      {"layout", p.rows.spec()},
      {"partition", whole.spec().empty() ? o.run.partition.value : whole.spec()},
      {"schedule", packages != nullptr ? "workPackages" : "static"}};
  fields["iters"] = p.gemm ? nlohmann::json(nullptr) : nlohmann::json(o.iters);
  fields["view"] = p.gemm ? nlohmann::json(nullptr) : nlohmann::json(o.view);
  std::vector<std::string> lines;
  if (env.rank() == 0) describe_devices(g, fields, lines);
  describe_schedule(schedule, packages, last, count, fields, lines);
  const std::string headline = fmt::format(
      "hit-packages: {} {}x{}, {}, {} ranks, {}", o.workload, p.n, p.width, o.run.type, env.size(),
      packages != nullptr
          ? fmt::format("work packages of {} rows ({} packages, depth {})", packages->size(),
                        packages->count(), schedule.options->depth)
          : "static " + p.rows.spec());
  const double t = harness.median_time();
  const double flops = 2.0 * std::pow(n, 3);
  const app::Throughput throughput =
      p.gemm ? app::Throughput{"gflops", t > 0 ? flops / t * 1e-9 : 0.0}
             : app::Throughput{"mcells_per_s", t > 0 ? pixels / t * 1e-6 : 0.0};
  return harness.report({.fields = fields,
                         .headline = headline,
                         .throughput = throughput,
                         .work_unit = p.gemm ? "flops" : "pixels",
                         .lines = lines,
                         .check = check});
}

}  // namespace hit::packages
