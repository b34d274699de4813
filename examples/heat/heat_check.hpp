#pragma once
// Everything of hit-heat around the iteration (heat.cpp): input and output checks, and the
// independent --check (the whole graph gathered on rank 0 and iterated serially, in the input's
// order of neighbours, from the same start).

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "../common/sparse_gather.hpp"
#include "../common/sparse_input.hpp"
#include "../common/sparse_setup.hpp"
#include "../common/values.hpp"
#include "heat.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::heat {

inline void check_outputs(Environment& env, const Options& o) {
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.out.empty()) check_output_array(o.out, "values (--out)");
    if (!o.run.svg.empty()) check_output_path(o.run.svg, "picture (--svg)");
  });
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

}  // namespace hit::heat
