#pragma once
// Everything of hit-cg around the iteration (cg.cpp): input checks, the right-hand side, the
// picture, the independent --check (the residual recomputed from the input rows with plain loops,
// and for small matrices x against a serial dense Cholesky solve) and the report.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../common/harness.hpp"
#include "../common/sparse_gather.hpp"
#include "../common/sparse_input.hpp"
#include "../common/sparse_setup.hpp"
#include "../common/values.hpp"
#include "cg.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::cg {

// Matrices up to this many rows are also solved serially by --check (dense, on rank 0).
inline constexpr index_t serial_check_rows = 2000;

// A symmetric positive definite matrix has a positive diagonal (a_ii = e_i^T A e_i > 0): a row
// without one (an empty row, a zero or negative diagonal) makes the system singular or indefinite,
// and CG would either break down later, blaming the curvature, or converge to another solution
// than the one asked for. Refused before the layout, naming the first rows (1-based, as the file
// numbers them) and how many there are, on every process alike.
template <class T>
void require_positive_diagonal(Environment& env, const CsrRows<T>& block, const std::string& name) {
  struct Found {  // this process's rows without a positive diagonal: how many, the first ones
    std::int64_t count = 0;
    std::array<index_t, 5> rows{};
    double first_value = 0;
  };
  Found mine;
  for (index_t r = 0; r < block.rows(); ++r) {
    const auto cols = block.columns(r);
    const index_t row = block.names[static_cast<std::size_t>(r)];
    const auto at = std::lower_bound(cols.begin(), cols.end(), row);
    const T diagonal =
        (at != cols.end() && *at == row) ? block.row_values(r)[at - cols.begin()] : T(0);
    if (diagonal > 0) continue;
    if (mine.count == 0) mine.first_value = static_cast<double>(diagonal);
    if (mine.count < std::ssize(mine.rows)) mine.rows[static_cast<std::size_t>(mine.count)] = row;
    ++mine.count;
  }
  // Gathered in rank order: block rows ascend with the rank, so the first found come first.
  std::int64_t total = 0;
  std::vector<index_t> shown;
  std::optional<double> first_value;
  for (const Found& f : allgather(mine, env.comm())) {
    total += f.count;
    if (f.count > 0 && !first_value) first_value = f.first_value;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(f.count, std::ssize(f.rows)); ++i) {
      if (shown.size() < f.rows.size()) shown.push_back(f.rows[static_cast<std::size_t>(i)]);
    }
  }
  if (total == 0) return;
  std::string rows;
  for (const index_t r : shown) rows += (rows.empty() ? "" : ", ") + std::to_string(r + 1);
  if (total > std::ssize(shown)) rows += ", ...";
  const std::string what =
      *first_value == 0
          ? "has no diagonal entry (or a zero one)"
          : "has the diagonal " + fmt::format("{:g}", *first_value) + ", not positive";
  throw Error::everywhere(
      ErrorKind::invalid_argument,
      "CG needs a symmetric positive definite matrix, whose diagonal is positive: row " +
          std::to_string(shown.front() + 1) + " of " + name + " " + what + " (" +
          std::to_string(total) + (total == 1 ? " such row: " : " such rows: ") + rows +
          "; 1-based, as a Matrix Market file numbers them)");
}

inline void check_outputs(Environment& env, const Options& o) {
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.x_out.empty()) check_output_array(o.x_out, "solution (--x-out)");
    if (!o.run.svg.empty()) check_output_path(o.run.svg, "picture (--svg)");
  });
}

// b over this process's rows, in their local order.
template <class T>
std::vector<T> right_hand_side(Environment& env, const Options& o, const CsrRows<T>& block,
                               const app::SparseSystem<T>& sys) {
  const index_t n = block.global_rows;
  if (!o.rhs.empty()) {
    return app::read_vector_for<T>(env, o.rhs, n, sys.row_names(), sys.layout.owners());
  }
  const std::vector<T> ones = rhs_ones_product(block);
  return redistribute_values<T>(block.names, ones, sys.layout.owners(), sys.row_names(),
                                env.comm());
}

// Dense Cholesky solve of the gathered matrix on rank 0 (double): max |x - x*| / max |x*|
// (every row has a positive diagonal: require_positive_diagonal).
template <class T>
double serial_solve_error(Environment& env, const CsrRows<T>& block, std::span<const double> b,
                          const std::vector<double>& x) {
  const auto m = static_cast<std::size_t>(block.global_rows);
  std::vector<double> a = app::gather_dense(block, env.comm());
  if (env.rank() != 0) return 0;
  const auto at = [&](std::size_t i, std::size_t j) -> double& { return a[i * m + j]; };
  for (std::size_t j = 0; j < m; ++j) {
    double d = at(j, j);
    for (std::size_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > 0)) return std::numeric_limits<double>::infinity();
    at(j, j) = std::sqrt(d);
    for (std::size_t i = j + 1; i < m; ++i) {
      double s = at(i, j);
      for (std::size_t k = 0; k < j; ++k) s -= at(i, k) * at(j, k);
      at(i, j) = s / at(j, j);
    }
  }
  std::vector<double> y(b.begin(), b.end());
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t k = 0; k < i; ++k) y[i] -= at(i, k) * y[k];
    y[i] /= at(i, i);
  }
  for (std::size_t i = m; i-- > 0;) {
    for (std::size_t k = i + 1; k < m; ++k) y[i] -= at(k, i) * y[k];
    y[i] /= at(i, i);
  }
  return app::max_relative_difference(x, y);
}

// --check: ||b - A x|| / ||b|| from the input rows (global columns, plain loops: none of the
// solver's layout, numbering, halo or kernels), passing within 10 tol; for small matrices x
// against a dense solve, within sqrt(tol).
template <class T>
app::CheckResult check_solution(Environment& env, const Options& o, const CsrRows<T>& block,
                                const app::SparseSystem<T>& sys, const std::vector<T>& x,
                                double tol) {
  const index_t n = block.global_rows;
  const std::vector<double> xg = app::allgather_global<T>(env, n, sys.row_names(), x);
  std::vector<double> b;
  if (o.rhs.empty()) {
    for (index_t r = 0; r < block.rows(); ++r) {
      double s = 0;
      for (const T v : block.row_values(r)) s += static_cast<double>(v);
      b.push_back(s);
    }
  } else {
    const std::vector<T> raw = read_vector<T>(o.rhs, n, env.comm());
    b.assign(raw.begin(), raw.end());
  }
  double sums[2] = {0, 0};  // ||b - A x||^2, ||b||^2
  for (index_t r = 0; r < block.rows(); ++r) {
    double ax = 0;
    const auto cols = block.columns(r);
    const auto vals = block.row_values(r);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      ax += static_cast<double>(vals[k]) * xg[static_cast<std::size_t>(cols[k])];
    }
    const double res = b[static_cast<std::size_t>(r)] - ax;
    sums[0] += res * res;
    sums[1] += b[static_cast<std::size_t>(r)] * b[static_cast<std::size_t>(r)];
  }
  allreduce(std::span<double>(sums), ReduceOp::sum);
  const double rel = sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
  app::CheckResult c;
  c.ran = true;
  c.max_rel_error = rel;
  c.passed = rel <= 10 * tol;
  char line[200];
  std::snprintf(line, sizeof line, "||b - A x|| / ||b|| = %.3e recomputed (limit %.1e)", rel,
                10 * tol);
  c.summary = line;
  if (n <= serial_check_rows) {
    const auto bg = app::allgather_varying(b, MPI_DOUBLE, env.comm());
    double err = serial_solve_error(env, block, bg, xg);
    broadcast(err, 0, env.comm());
    const bool ok = err <= std::sqrt(tol);
    c.passed = c.passed && ok;
    std::snprintf(line, sizeof line, "; x against a dense serial solve: %.3e (limit %.1e)", err,
                  std::sqrt(tol));
    c.summary += line;
  }
  c.summary = std::string(c.passed ? "passed" : "FAILED") + " (" + c.summary + ")";
  return c;
}

inline std::string residual_line(long iterations, double residual, bool converged) {
  char line[120];
  std::snprintf(line, sizeof line, "%ld iterations, relative residual %.3e (%s)", iterations,
                residual, converged ? "converged" : "NOT converged");
  return line;
}

// What --balance did, for the report.
struct BalanceSummary {
  int rebalances = 0;
  double move_s = 0;                  // seconds spent moving rows
  std::vector<index_t> initial_rows;  // per process, before any move
};

template <class T>
int report(Environment& env, const Options& o, app::Harness& harness,
           const app::SparseSystem<T>& sys, long iterations, double residual, bool converged,
           const BalanceSummary& balance, double tol, const app::CheckResult& check) {
  const auto parts = app::allgather_json(env, app::sparse_part_json(sys, sizeof(T)));
  const double t = harness.median_time();
  const double per_iter = iterations > 0 ? t / static_cast<double>(iterations) : 0;
  nlohmann::json fields = {{"program", "hit-cg"},
                           {"matrix", o.input.name()},
                           {"rows", sys.layout.rows()},
                           {"nonzeros", app::total_nonzeros(env, sys)},
                           {"layout", app::sparse_layout_json(sys.layout)},
                           {"tol", tol},
                           {"iterations", iterations},
                           {"relative_residual", residual},
                           {"converged", converged},
                           {"time_per_iteration_s", per_iter},
                           {"setup_s", sys.setup_s},
                           {"input_s", sys.input_s},
                           {"balance", o.balance},
                           {"rebalances", balance.rebalances},
                           {"balance_move_s", balance.move_s},
                           {"balance_models", !o.balance_models.empty()},
                           {"initial_rows", balance.initial_rows},
                           {"parts", parts}};
  std::vector<std::string> lines = {"layout " + sys.layout.spec() + ": edge cut " +
                                        std::to_string(sys.layout.edge_cut()) + ", imbalance " +
                                        std::to_string(sys.layout.imbalance()),
                                    residual_line(iterations, residual, converged)};
  const double gflops = t > 0 ? 2.0 * static_cast<double>(fields["nonzeros"].get<index_t>()) *
                                    static_cast<double>(iterations) / t * 1e-9
                              : 0;
  return harness.report(
      {.fields = fields,
       .headline = "hit-cg: " + o.input.name() + " on " + std::to_string(env.size()) + " ranks",
       .throughput = {"gflops", gflops},
       .work_unit = "flops",
       .lines = lines,
       .check = check});
}

}  // namespace hit::cg
