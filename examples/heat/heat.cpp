// Heat on graphs with hitmap++: a sparse layout by name (metis by default), the interior
// vertices computed while the halo refreshes the ghosts, two value vectors kept on the device.
#include "heat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/sparse_setup.hpp"
#include "../common/values.hpp"
#include "heat_check.hpp"
#include "heat_ops.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::heat {
namespace {

// The graph of a matrix's rows: its off-diagonal pattern (a vertex is not its own neighbour).
template <class T>
CsrRows<T> off_diagonal(const CsrRows<T>& rows) {
  CsrRows<T> g;
  g.global_rows = rows.global_rows;
  g.global_cols = rows.global_cols;
  g.names = rows.names;
  g.row_ptr.reserve(rows.row_ptr.size());
  g.cols.reserve(rows.cols.size());
  g.values.reserve(rows.values.size());
  for (index_t r = 0; r < rows.rows(); ++r) {
    const index_t name = rows.names[static_cast<std::size_t>(r)];
    const auto cols = rows.columns(r);
    const auto vals = rows.row_values(r);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      if (cols[k] == name) continue;
      g.cols.push_back(cols[k]);
      g.values.push_back(vals[k]);
    }
    g.row_ptr.push_back(static_cast<index_t>(g.cols.size()));
  }
  return g;
}

// The start values of this process's vertices, in local row order.
template <class T>
std::vector<T> initial_values(Environment& env, const Options& o, const app::SparseSystem<T>& s,
                              index_t n) {
  if (!o.init.empty()) {
    return app::read_vector_for<T>(env, o.init, n, s.row_names(), s.layout.owners());
  }
  std::vector<T> v;
  v.reserve(s.row_names().size());
  for (const index_t g : s.row_names()) v.push_back(starts_hot(g, n) ? T(hot_value) : T(0));
  return v;
}

template <class T>
int simulate(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  const Timer input_timer;
  const CsrRows<T> block = off_diagonal(o.input.load<T>(env, "--graph"));
  const double input_s = input_timer.seconds();
  app::require_square(block, "a graph", o.input.name());
  check_outputs(env, o);
  app::SparseSystem<T> sys = app::distribute(env, block, o.layout);
  sys.input_s = input_s;
  app::draw_sparse_layout(env, o.run.svg, o.input, sys.layout, "hit-heat");
  const index_t n = block.global_rows;
  const std::vector<T> start = initial_values(env, o, sys, n);
  HeatOps<T> ops(sys, o.run.partition);
  harness.repeat([&](int) { ops.load(start); },
                 [&](app::Clock& clock) {
                   for (int it = 0; it < o.iters; ++it) {
                     clock.comm([&] { sys.halo->start(ops.current()); });
                     ops.step(0, sys.interior);
                     clock.comm([&] { sys.halo->wait(); });
                     ops.step(sys.interior, sys.shape().rows());
                     ops.swap();
                   }
                   clock.compute_seconds_add(ops.take_compute_seconds());
                 });
  const std::vector<T> values = ops.values_host();
  double sum = 0;
  for (const T v : values) sum += static_cast<double>(v);
  sum = allreduce(sum, ReduceOp::sum);
  harness.set_work(static_cast<double>(sys.shape().rows()) * o.iters);
  if (!o.out.empty()) app::write_vector_from<T>(env, o.out, n, sys.row_names(), values);
  app::CheckResult check;
  if (o.run.check) check = check_values(env, o, block, sys, start, values);
  const auto parts = app::allgather_json(env, app::sparse_part_json(sys, sizeof(T)));
  const double t = harness.median_time();
  nlohmann::json fields = {{"program", "hit-heat"},
                           {"graph", o.input.name()},
                           {"vertices", n},
                           {"iters", o.iters},
                           {"layout", app::sparse_layout_json(sys.layout)},
                           {"sum", sum},
                           {"setup_s", sys.setup_s},
                           {"input_s", sys.input_s},
                           {"parts", parts}};
  char sum_line[80];
  std::snprintf(sum_line, sizeof sum_line, "sum over all vertices %.10g", sum);
  return harness.report(
      {.fields = fields,
       .headline = "hit-heat: " + o.input.name() + ", " + std::to_string(o.iters) +
                   " iterations on " + std::to_string(env.size()) + " ranks",
       .throughput = {"mcells_per_s", t > 0 ? static_cast<double>(n) * o.iters / t * 1e-6 : 0.0},
       .work_unit = "cells",
       .lines = {"layout " + sys.layout.spec() + ": edge cut " +
                     std::to_string(sys.layout.edge_cut()) + ", set-up " +
                     std::to_string(sys.setup_s) + " s",
                 sum_line},
       .check = check});
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return simulate<T>(env, o); });
}

}  // namespace hit::heat
