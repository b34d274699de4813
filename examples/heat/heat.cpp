// Heat on graphs with hitmap++: a sparse layout by name (metis by default), the interior
// vertices computed while the halo refreshes the ghosts, two value vectors kept on the device.
#include "heat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/sparse_gather.hpp"
#include "../common/sparse_setup.hpp"
#include "../common/values.hpp"
#include "heat_ops.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::heat {
namespace {

void check_outputs(Environment& env, const Options& o) {
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.out.empty()) check_output_path(o.out, "values (--out)");
    if (!o.run.svg.empty()) check_output_path(o.run.svg, "picture (--svg)");
  });
}

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

// The serial reference of --check on rank 0: the whole graph, the same update in the same order
// of neighbours (the input's), from the same start. Returns the final values (rank 0).
template <class T>
std::vector<double> serial_heat(Environment& env, const Options& o, const CsrRows<T>& block,
                                const std::vector<double>& start) {
  std::vector<index_t> rows, cols;
  for (index_t r = 0; r < block.rows(); ++r) {
    for (const index_t c : block.columns(r)) {
      rows.push_back(block.names[static_cast<std::size_t>(r)]);
      cols.push_back(c);
    }
  }
  const auto all_rows = app::gather_to_root(rows, MPI_INT64_T, env.comm());
  const auto all_cols = app::gather_to_root(cols, MPI_INT64_T, env.comm());
  if (env.rank() != 0) return {};
  const index_t n = block.global_rows;
  std::vector<index_t> ptr(static_cast<std::size_t>(n) + 1, 0);
  for (const index_t r : all_rows) ++ptr[static_cast<std::size_t>(r) + 1];
  for (std::size_t k = 1; k < ptr.size(); ++k) ptr[k] += ptr[k - 1];
  std::vector<T> u(start.begin(), start.end()), v(u.size());
  for (int it = 0; it < o.iters; ++it) {
    for (index_t r = 0; r < n; ++r) {
      T sum = 0;
      const index_t first = ptr[static_cast<std::size_t>(r)];
      const index_t degree = ptr[static_cast<std::size_t>(r) + 1] - first;
      for (index_t k = first; k < first + degree; ++k) {
        sum += u[static_cast<std::size_t>(all_cols[static_cast<std::size_t>(k)])];
      }
      v[static_cast<std::size_t>(r)] =
          degree > 0 ? sum / static_cast<T>(degree) : u[static_cast<std::size_t>(r)];
    }
    std::swap(u, v);
  }
  return {u.begin(), u.end()};
}

template <class T>
app::CheckResult check_values(Environment& env, const Options& o, const CsrRows<T>& block,
                              const app::SparseSystem<T>& s, const std::vector<T>& start,
                              const std::vector<T>& final_values) {
  const index_t n = block.global_rows;
  const auto gather = [&](const std::vector<T>& v) {
    return app::allgather_global<T>(env, n, s.row_names(), v);
  };
  const std::vector<double> got = gather(final_values);
  const std::vector<double> want = serial_heat(env, o, block, gather(start));
  double err = env.rank() == 0 ? app::max_relative_difference(got, want) : 0.0;
  broadcast(err, 0, env.comm());
  const double limit = sizeof(T) >= 8 ? 1e-12 : 1e-5;
  app::CheckResult c;
  c.ran = true;
  c.max_rel_error = err;
  c.passed = err <= limit;
  char line[160];
  std::snprintf(line, sizeof line,
                "%s (largest difference from a serial run %.2e of the largest "
                "value, limit %.0e)",
                c.passed ? "passed" : "FAILED", err, limit);
  c.summary = line;
  return c;
}

template <class T>
int simulate(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  const Timer input_timer;
  const CsrRows<T> block = off_diagonal(o.input.load<T>(env, "--graph"));
  const double input_s = input_timer.seconds();
  if (block.global_rows != block.global_cols) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            "a graph needs a square matrix: " + o.input.name() + " is " +
                                std::to_string(block.global_rows) + " x " +
                                std::to_string(block.global_cols));
  }
  check_outputs(env, o);
  app::SparseSystem<T> sys = app::distribute(env, block, o.layout, {.label = "graph"});
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
