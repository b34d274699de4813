// Dense Jacobi with hitmap++: the rows of [A | b] laid by name, x gathered by every process after
// every iteration (hit::fetch_regions from the owners of its rows), the update the example's own
// kernel, and, with --balance, the rows moving while it runs.
#include "linsolve.hpp"

#include <optional>
#include <type_traits>

#include "hit/hit.hpp"
#include "jacobi_rows.hpp"
#include "linsolve_io.hpp"

namespace hit::linsolve {
namespace {

template <class T>
int solve(Environment& env, const Options& o, double tol) {
  app::Harness harness(env, o.run);
  const index_t n = o.n;
  // The rows of [A | b], laid on the processes by the layout chosen by name (whole rows).
  Layout la = layout(o.layout, topology("array"), Shape::extents({n, n + 1}));
  // The balancer checks the layout gives whole rows; with --balance off it never moves them.
  RowBalancer balancer(env, la, o.balance, o.iters);
  la = balancer.layout();  // stored models (--balance-models) choose the first rows
  check_outputs_and_draw(env, o, la);
  // With rows to spare when balancing: the first moves happen in place.
  Resident<T> a = balancer.resident<T>(0);
  generate(a.host(), o.run.seed, n);
  a.modified_on_host();

  // x whole on every process; x_new: this process's rows of it.
  Tile<T> x(Shape::extents({n}));
  Layout lx = balancer.rows_layout(Shape::extents({n}));
  Tile<T> x_new = Tile<T>::of(lx);
  const std::vector<Shape> everyone(static_cast<std::size_t>(env.size()), Shape::extents({n}));
  Comm gather_x = fetch_regions(lx, x_new, everyone, x);
  const auto update = jacobi_rows<T>();
  const auto local_part = [&](const Layout& l) {
    return partition(o.run.partition, l.local().block(), {.access = update.access()});
  };
  Partition part = local_part(lx);

  int iterations = 0;
  double change = 0;
  harness.repeat([&](int) { balancer.restart_report(); },
                 [&](app::Clock& clock) {
                   x.fill(T(0));
                   for (int it = 0; it < o.iters; ++it) {
                     const LaunchRecord step = launch(update, part, in(a), in(x), out(x_new));
                     clock.compute(step);
                     double mine = 0;
                     if (!x_new.is_null()) {
                       x_new.for_each([&](const Index& i, T& v) {
                         mine = std::max(
                             mine, std::abs(static_cast<double>(v) - static_cast<double>(x(i[0]))));
                       });
                     }
                     clock.comm([&] {
                       gather_x.run();
                       change = allreduce(mine, ReduceOp::max);
                     });
                     iterations = it + 1;
                     if (change <= tol) break;
                     if (balancer.after_iteration(it, step.seconds)) {
                       // The rows of [A | b] moved; x_new and its gathering follow the new rows.
                       la = balancer.layout();
                       balancer.move(a, 0);
                       lx = balancer.rows_layout(Shape::extents({n}));
                       x_new = Tile<T>::of(lx);
                       gather_x = fetch_regions(lx, x_new, everyone, x);
                       part = local_part(lx);
                     }
                   }
                 });

  a.sync_to_host();
  const auto [r, b] = local_residual(a.host(), x, n);
  const double residual =
      allreduce(r, ReduceOp::max) / std::max(allreduce(b, ReduceOp::max), 1e-300);
  if (!o.out.empty()) write_x(env, o.out, lx, x_new);
  const app::CheckResult check =
      o.run.check ? verify(env, o, o.run.seed, iterations, x) : app::CheckResult{};
  harness.set_work(x_new.is_null() ? 0.0 : 2.0 * static_cast<double>(x_new.size()) * n);
  const double t = harness.median_time();
  nlohmann::json fields = {
      {"app", "linsolve"},
      {"n", o.n},
      {"max_iters", o.iters},
      {"iterations", iterations},
      {"tol", tol},
      {"converged", change <= tol},
      {"change", change},
      {"residual", residual},
      {"layout", la.spec()},
      {"partition", part.spec().empty() ? o.run.partition.value : part.spec()}};
  char headline[256];
  std::snprintf(headline, sizeof headline, "hit-linsolve: dense Jacobi, n = %ld, %s, %d ranks (%s)",
                o.n, o.run.type.c_str(), env.size(), la.spec().c_str());
  char line[192];
  std::snprintf(
      line, sizeof line,
      "%s after %d iterations (largest change %.3e, tolerance %.1e), relative residual %.3e",
      change <= tol ? "converged" : "NOT converged", iterations, change, tol, residual);
  std::vector<std::string> lines{line};
  if (o.balance.mode != BalanceMode::off) fields["balance"] = app::balance_report(balancer, lines);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * iterations;
  return harness.report({.fields = fields,
                         .headline = headline,
                         .throughput = {"gflops", t > 0 ? flops / t * 1e-9 : 0.0},
                         .work_unit = "flops",
                         .lines = lines,
                         .check = check});
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() {
    // The default tolerance: near what the element type can resolve after n-term sums.
    const double fallback = std::is_same_v<T, float> ? 1e-5 : 1e-10;
    return solve<T>(env, o, o.tol > 0 ? o.tol : fallback);
  });
}

}  // namespace hit::linsolve
