// hit-packages' clusterCL workloads (clustercl_apps.hpp): the arrays made (generated from --seed
// or read by name), each workload's kernels run as work packages, merges between kernels, the
// check against a serial computation, the outputs written by name, and the report with
// clusterCL's metrics.

#include "clustercl_apps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "../common/values.hpp"
#include "clustercl_check.hpp"
#include "clustercl_job.hpp"
#include "clustercl_kernels.hpp"
#include "clustercl_reference.hpp"
#include "hit/hit.hpp"
#include "hit/tile_io.hpp"
#include "hit/work_packages.hpp"
#include "packages_io.hpp"

namespace hit::packages {

namespace {

// ---- one repetition of each workload ---------------------------------------------------------

template <class T>
void run_syrk(Job<T>& j) {
  j.run("syrk", j.at("c").shape, syrk_kernel<T>(), replicated_in(j.tile("a")),
        partitioned_out(j.tile("c")));
}

template <class T>
void run_gsmv(Job<T>& j) {
  j.run("gsmv", j.at("y").shape, gsmv_kernel<T>(), partitioned_in(j.tile("a")),
        partitioned_in(j.tile("b")), replicated_in(j.tile("x")), partitioned_out(j.tile("y")),
        j.param("alpha"), j.param("beta"));
}

template <class T>
void run_bicg(Job<T>& j) {
  j.run("bicg", j.at("q").shape, bicg_kernel<T>(), partitioned_in(j.tile("a")),
        replicated_in(j.tile("p")), partitioned_in(j.tile("r")), partitioned_out(j.tile("q")),
        reduced_out(j.tile("s")));
}

template <class T>
void run_options(Job<T>& j) {
  const Shape domain = j.at("call").shape;
  if (j.spec.name == "bsm") {
    j.run("bsm", domain, bsm_kernel<T>(), partitioned_in(j.tile("s")), partitioned_in(j.tile("k")),
          partitioned_in(j.tile("t")), partitioned_out(j.tile("call")),
          partitioned_out(j.tile("put")), j.param("r"), j.param("sigma"));
    return;
  }
  j.run("bop", domain, bop_kernel<T>(), partitioned_in(j.tile("s")), partitioned_in(j.tile("k")),
        partitioned_in(j.tile("t")), partitioned_out(j.tile("call")), j.param("r"),
        j.param("sigma"), static_cast<int>(j.spec.params.at("steps")));
}

template <class T>
void run_dcs(Job<T>& j) {
  const bool by_atoms = j.o.strategy == "in";
  const Shape domain = by_atoms ? j.at("atoms").shape : j.at("grid").shape;
  const auto kernel = dcs_kernel<T>(by_atoms);
  if (by_atoms) {
    j.run("dcs", domain, kernel, partitioned_in(j.tile("atoms")), reduced_out(j.tile("grid")),
          j.param("h"), j.param("z0"));
  } else {
    j.run("dcs", domain, kernel, replicated_in(j.tile("atoms")), partitioned_out(j.tile("grid")),
          j.param("h"), j.param("z0"));
  }
}

template <class T>
void run_conv(Job<T>& j) {
  const Shape& s = j.at("in").shape;
  j.run("conv", s, conv_kernel<T>(), partitioned_in(j.tile("in")), replicated_in(j.tile("w")),
        partitioned_out(j.tile("out")), s.extent(0), s.extent(1));
}

// Two kernels: the columns' statistics by rows of the variables (partitioned), merged whole on
// every process, then the matrix by its rows.
template <class T>
void run_cov_cor(Job<T>& j) {
  const index_t m = j.at("x").shape.extent(1);
  const Shape vars = Shape::extents({m});
  Tile<T>& mean = j.scratch_rows("mean", vars);
  Tile<T>& mean_all = j.scratch_whole("mean_all", vars);
  const bool cor = j.spec.name == "cor";
  if (!cor) {
    j.run("mean", vars, mean_kernel<T>(), replicated_in(j.tile("x")), partitioned_out(mean));
    j.merge(mean, mean_all);
    j.run("cov", j.at("cov").shape, cov_kernel<T>(), replicated_in(j.tile("x")),
          replicated_in(mean_all), partitioned_out(j.tile("cov")));
    return;
  }
  Tile<T>& sd = j.scratch_rows("sd", vars);
  Tile<T>& sd_all = j.scratch_whole("sd_all", vars);
  j.run("mean_sd", vars, mean_sd_kernel<T>(), replicated_in(j.tile("x")), partitioned_out(mean),
        partitioned_out(sd));
  j.merge(mean, mean_all);
  j.merge(sd, sd_all);
  j.run("cor", j.at("cor").shape, cor_kernel<T>(), replicated_in(j.tile("x")),
        replicated_in(mean_all), replicated_in(sd_all), partitioned_out(j.tile("cor")));
}

// R's row k from the dot products of column k with the columns from k on (every process has the
// same sums, so every one finds the same R, or the same dependent column). `largest`: the largest
// squared norm of A's columns, `rows` A's rows: a column left shorter than rows x epsilon of it
// by the projections depends on the columns before it.
template <class T>
void r_row(Tile<T>& r, const Tile<T>& d, index_t k, index_t m, double largest, index_t rows) {
  const double norm2 = static_cast<double>(d(k));
  const double floor = static_cast<double>(rows) * std::numeric_limits<T>::epsilon() *
                       std::sqrt(std::max(largest, 0.0));
  if (!(norm2 > 0) || std::sqrt(norm2) <= floor) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("gsp: column {} of A depends on the columns before it (its norm "
                            "after their projections is {:.3e}, at most {:.3e}): A has rank < {}",
                            k, std::sqrt(std::max(norm2, 0.0)), floor, m));
  }
  const T rkk = static_cast<T>(std::sqrt(norm2));
  for (index_t j = 0; j < m; ++j) r(k, j) = j < k ? T(0) : j == k ? rkk : d(j) / rkk;
}

// Modified Gram-Schmidt by columns: the dot products of the first column (reduced over the
// packages), then per column one step: R's row from the sums, the update of the columns right of
// it (partitioned rows, from one work copy of A to the other, so that the rows stay where they
// are: a package's rows go back to their owner) with the next column's dot products.
template <class T>
void run_gsp(Job<T>& j) {
  const Shape& shape = j.at("a").shape;
  const index_t m = shape.extent(1);
  Tile<T>& work0 = j.scratch_rows("work0", shape);
  Tile<T>& work1 = j.scratch_rows("work1", shape);
  Tile<T>& d = j.scratch_whole("d", Shape::extents({m}));
  Tile<T>& rk = j.scratch_whole("rk", Shape::extents({m}));
  Tile<T>& r = j.tile("r");
  if (!work0.is_null()) work0.copy_from(j.tile("a"));
  r.fill(T(0));
  const Shape domain = Shape::extents({shape.extent(0)});
  j.run("gsp_dots", domain, gsp_dots_kernel<T>(), partitioned_in(work0), reduced_out(d),
        index_t{0});
  double largest = 0;  // squared norm of A's longest column (the first dot products)
  for (index_t c = 0; c < m; ++c) largest = std::max(largest, static_cast<double>(d(c)));
  for (index_t k = 0; k < m; ++k) {
    Tile<T>& from = k % 2 == 0 ? work0 : work1;
    Tile<T>& to = k % 2 == 0 ? work1 : work0;
    r_row(r, d, k, m, largest, shape.extent(0));
    for (index_t c = 0; c < m; ++c) rk(c) = r(k, c);
    j.run(k % 2 == 0 ? "gsp_step0" : "gsp_step1", domain, gsp_step_kernel<T>(),
          partitioned_in(from), replicated_in(rk), partitioned_out(to), reduced_out(d), k, m);
  }
  Tile<T>& q = j.tile("q");
  if (!q.is_null()) q.copy_from(m % 2 == 0 ? work0 : work1);
}

template <class T>
void run_workload(Job<T>& j) {
  const std::string& w = j.spec.name;
  if (w == "syrk") return run_syrk(j);
  if (w == "gsmv") return run_gsmv(j);
  if (w == "bicg") return run_bicg(j);
  if (w == "bsm" || w == "bop") return run_options(j);
  if (w == "dcs") return run_dcs(j);
  if (w == "conv") return run_conv(j);
  if (w == "cov" || w == "cor") return run_cov_cor(j);
  if (w == "gsp") return run_gsp(j);
  throw Error(ErrorKind::internal, "no run for workload " + w);
}

template <class T>
int compute(Environment& env, const Options& o, const WorkloadSpec& spec) {
  const Schedule schedule = schedule_of(env, o.schedule);
  collectively(env.comm(), [&] {
    if (!schedule.dynamic()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--schedule static: the static schedule runs mandelbrot and gemm; "
                              "{} runs as work packages (workPackages[:size=G|auto][,depth=D])",
                              o.workload));
    }
  });
  Job<T> job(env, o, spec, *schedule.options);
  job.make_arrays();
  app::Harness harness(env, o.run);
  harness.repeat([&](int) { job.clear_outputs(); },
                 [&](app::Clock& clock) {
                   job.begin_repetition();
                   run_workload(job);
                   clock.compute_seconds_add(job.total.busy_s);
                   job.end_repetition();
                 });
  const app::CheckResult check = o.run.check ? check_workload(job) : app::CheckResult{};
  job.write_outputs();
  return report_workload(job, schedule, harness, check);
}

}  // namespace

int run_clustercl(Environment& env, const Options& o) {
  WorkloadSpec spec;
  collectively(env.comm(), [&] { spec = workload_spec(o); });
  if (o.describe) {
    if (env.rank() == 0) fmt::print("{}\n", describe_workload(spec, o.run.type));
    return 0;
  }
  return app::with_element_type(o.run.type, [&]<class T>() { return compute<T>(env, o, spec); });
}

}  // namespace hit::packages
