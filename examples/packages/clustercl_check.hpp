#pragma once
// A clusterCL workload's --check (its arrays gathered, the serial reference of
// clustercl_reference.hpp computed in double on process 0, the largest difference relative to the
// largest reference value) and its report: what every device did, with clusterCL's metrics (each
// device's share of the rows, busy fraction of the span, time per package; the relative standard
// deviation of the nodes' processing times; the merges between kernels).

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "clustercl_job.hpp"
#include "clustercl_reference.hpp"
#include "packages_io.hpp"

namespace hit::packages {

// Array `name` whole, row-major, in double, on every process.
template <class T>
std::vector<double> gathered(Job<T>& j, const std::string& name) {
  const JobArray<T>& a = j.at(name);
  Tile<T> whole(a.shape);
  if (a.spec.by_rows) {
    make_whole(a.tile, whole);
  } else {
    whole.copy_from(a.tile);
  }
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(a.shape.size()));
  whole.for_each([&](const Index&, const T& v) { out.push_back(static_cast<double>(v)); });
  return out;
}

inline double relative_difference(const std::vector<double>& got, const std::vector<double>& want) {
  double scale = 0;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::abs(want[i]));
    const double d = std::abs(got[i] - want[i]);
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
  }
  return worst / std::max(scale, 1e-300);
}

// gsp: |A - QR| / |A| and |Q^T Q - I| (largest elements), R upper triangular.
inline double gsp_error(const std::vector<double>& a, const std::vector<double>& q,
                        const std::vector<double>& r, index_t n, index_t m) {
  const auto at = [](index_t i, index_t j, index_t cols) {
    return static_cast<std::size_t>(i * cols + j);
  };
  double scale = 0;
  for (const double v : a) scale = std::max(scale, std::abs(v));
  double worst = 0;
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < m; ++j) {
      double qr = 0;
      for (index_t k = 0; k <= j; ++k) qr += q[at(i, k, m)] * r[at(k, j, m)];
      worst = std::max(worst, std::abs(a[at(i, j, m)] - qr) / std::max(scale, 1e-300));
    }
  }
  for (index_t x = 0; x < m; ++x) {
    for (index_t y = 0; y < m; ++y) {
      double dot = 0;
      for (index_t i = 0; i < n; ++i) dot += q[at(i, x, m)] * q[at(i, y, m)];
      worst = std::max(worst, std::abs(dot - (x == y ? 1.0 : 0.0)));
      if (y < x && r[at(x, y, m)] != 0) worst = std::numeric_limits<double>::infinity();
    }
  }
  return worst;
}

// The largest relative difference from the reference, and the terms of its longest sum.
template <class T>
std::pair<double, double> workload_error(Job<T>& j) {
  namespace ref = reference;
  const WorkloadSpec& s = j.spec;
  const auto p = [&](const char* name) { return s.params.at(name); };
  const index_t n = j.o.n;
  const index_t m = j.o.m > 0 ? j.o.m : n;
  const auto in = [&](const char* name) { return gathered(j, name); };
  const auto diff = [&](const char* name, const std::vector<double>& want) {
    return relative_difference(gathered(j, name), want);
  };
  if (s.name == "syrk") return {diff("c", ref::syrk(in("a"), n, m)), double(m)};
  if (s.name == "gsmv") {
    return {diff("y", ref::gsmv(in("a"), in("b"), in("x"), n, p("alpha"), p("beta"))), 2.0 * n};
  }
  if (s.name == "bicg") {
    const ref::Bicg want = ref::bicg(in("a"), in("p"), in("r"), n, m);
    return {std::max(diff("q", want.q), diff("s", want.s)), double(std::max(n, m))};
  }
  if (s.name == "bsm") {
    const ref::Prices want = ref::bsm(in("s"), in("k"), in("t"), p("r"), p("sigma"));
    return {std::max(diff("call", want.call), diff("put", want.put)), 64.0};
  }
  if (s.name == "bop") {
    const auto steps = static_cast<int>(p("steps"));
    return {diff("call", ref::bop(in("s"), in("k"), in("t"), p("r"), p("sigma"), steps)), 64.0};
  }
  if (s.name == "dcs") {
    const auto atoms = static_cast<index_t>(p("atoms"));
    return {diff("grid", ref::dcs(in("atoms"), atoms, n, m, p("h"), p("z0"))), double(atoms)};
  }
  if (s.name == "conv") return {diff("out", ref::conv(in("in"), n, m, in("w"))), 9.0};
  if (s.name == "cov") return {diff("cov", ref::covariance(in("x"), n, m)), double(n)};
  if (s.name == "cor") return {diff("cor", ref::correlation(in("x"), n, m)), double(n)};
  return {gsp_error(in("a"), in("q"), in("r"), n, m), double(n) * double(m)};
}

template <class T>
app::CheckResult check_workload(Job<T>& j) {
  const auto [error, terms] = workload_error(j);
  app::CheckResult check;
  check.ran = true;
  check.max_rel_error = error;
  const double tolerance = 16.0 * terms * std::numeric_limits<T>::epsilon();
  check.passed = error <= tolerance;
  check.summary = fmt::format(
      "{} (largest difference from a serial {} relative to its largest value {:.3e}, allowed "
      "{:.1e})",
      check.passed ? "passed" : "FAILED", j.spec.name, error, tolerance);
  return check;
}

// The relative standard deviation (%) of the nodes' processing times: each node's the end of
// its last package, from the start of the repetition. 0 with one node.
inline double nodes_rsd(Environment& env, const std::vector<PackageRecord>& mine) {
  double end = 0;
  for (const PackageRecord& r : mine) end = std::max(end, r.end_s);
  const std::vector<double> ends = allgather(end, env.comm());
  const PhysicalTopology& topo = PhysicalTopology::of(env);
  std::vector<double> node_end(static_cast<std::size_t>(topo.nodes()), 0.0);
  for (std::size_t r = 0; r < ends.size(); ++r) {
    auto& e = node_end[static_cast<std::size_t>(topo.ranks()[r].node)];
    e = std::max(e, ends[r]);
  }
  double mean = 0;
  for (const double e : node_end) mean += e / static_cast<double>(node_end.size());
  double var = 0;
  for (const double e : node_end)
    var += (e - mean) * (e - mean) / static_cast<double>(node_end.size());
  return mean > 0 ? 100.0 * std::sqrt(var) / mean : 0.0;
}

// clusterCL's per-device metrics added to the report's per_device entries (process 0).
inline void add_device_metrics(const RunRecords& g, double span, nlohmann::json& fields,
                               std::vector<std::string>& lines) {
  double rows = 0;
  for (const DeviceStats& s : g.stats) rows += static_cast<double>(s.rows);
  for (std::size_t r = 0; r < g.stats.size(); ++r) {
    const DeviceStats& s = g.stats[r];
    const double share = rows > 0 ? static_cast<double>(s.rows) / rows : 0.0;
    const double busy = span > 0 ? s.busy_s / span : 0.0;
    const double per = s.packages > 0 ? s.busy_s / static_cast<double>(s.packages) : 0.0;
    auto& d = fields["per_device"][r];
    d["work_share"] = share;
    d["busy_fraction"] = busy;
    d["s_per_package"] = per;
    lines.push_back(
        fmt::format("rank {}: {:.1f} % of the rows, busy {:.1f} % of the span, "
                    "{:.2e} s per package",
                    r, 100 * share, 100 * busy, per));
  }
}

template <class T>
int report_workload(Job<T>& j, const Schedule& schedule, app::Harness& harness,
                    const app::CheckResult& check) {
  Environment& env = j.env;
  const PackageReport& t = j.total;
  const std::int64_t packages = static_cast<std::int64_t>(t.computed.size());
  DeviceStats mine = device_stats(
      t, [](const PackageRecord&) { return 0; }, j.span_s);
  mine.rows = j.rows_computed;
  mine.packages = packages;
  const RunRecords g = gather_records(env, mine, t);
  const double rsd = nodes_rsd(env, t.computed);
  const double all_rows = static_cast<double>(allreduce(j.rows_computed, ReduceOp::sum));
  harness.set_work(all_rows > 0 ? j.spec.flops * static_cast<double>(j.rows_computed) / all_rows
                                : 0.0);
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& [key, p] : j.packages)
    kernels.push_back({{"kernel", key}, {"package_size", p->size()}, {"packages", p->count()}});
  nlohmann::json fields = {{"app", "packages"},
                           {"workload", j.spec.name},
                           {"n", j.o.n},
                           {"m", j.o.m > 0 ? j.o.m : j.o.n},
                           {"layout", j.o.layout.value},
                           {"partition", j.o.run.partition.value},
                           {"schedule", "workPackages"},
                           {"schedule_spec", schedule.text},
                           {"params", j.spec.params},
                           {"kernels", kernels},
                           {"merge_s", j.merge_s},
                           {"span_s", j.span_s},
                           {"nodes", PhysicalTopology::of(env).nodes()},
                           {"nodes_rsd_percent", rsd}};
  fields["strategy"] =
      j.spec.name == "dcs" ? nlohmann::json(j.o.strategy) : nlohmann::json(nullptr);
  std::vector<std::string> lines;
  if (env.rank() == 0) {
    describe_devices(g, fields, lines);
    add_device_metrics(g, j.span_s, fields, lines);
    lines.push_back(
        fmt::format("merges between kernels {:.4f} s; nodes' processing times "
                    "differ by {:.2f} % (relative standard deviation)",
                    j.merge_s, rsd));
  }
  collectively(env.comm(), [&] {
    if (j.o.run.svg.empty() || env.rank() != 0) return;
    write_file_atomically(
        j.o.run.svg, packages_svg(g.computed, g.labels, std::max<std::int64_t>(packages, 1),
                                  fmt::format("hit-packages {}: {}", j.spec.name, schedule.text)));
  });
  const double time = harness.median_time();
  return harness.report(
      {.fields = fields,
       .headline =
           fmt::format("hit-packages: {} (n = {}, m = {}), {}, {} ranks, {}", j.spec.name, j.o.n,
                       j.o.m > 0 ? j.o.m : j.o.n, j.o.run.type, env.size(), schedule.text),
       .throughput = {"gflops", time > 0 ? j.spec.flops / time * 1e-9 : 0.0},
       .work_unit = "flops",
       .lines = lines,
       .check = check});
}

}  // namespace hit::packages
