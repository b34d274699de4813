#pragma once
// Everything of hit-jacobi around the algorithm (jacobi.cpp): the initial field, the serial
// reference of --check (bit for bit), the residual and checksum, the result file and the report.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../common/balance_report.hpp"
#include "../common/harness.hpp"
#include "hit/hit.hpp"
#include "jacobi.hpp"

namespace hit::jacobi {

// Initial field: the top edge is held at 1, the other edges at a gentle ramp, the inside at 0.
template <class T>
T initial_value(index_t i, index_t j, index_t n) {
  if (i == 0) return T(1);
  if (i == n - 1 || j == 0 || j == n - 1)
    return static_cast<T>(static_cast<double>(i) / static_cast<double>(n));
  return T(0);
}

template <class T>
void initialise(Tile<T>& t, index_t n) {
  t.for_each([&](const Index& i, T& v) { v = initial_value<T>(i[0], i[1], n); });
}

// One block per process (halos need it); draws the layout (--svg).
inline void check_and_draw(Environment& env, const Options& o, const Layout& lay) {
  for (int p = 0; p < lay.procs(); ++p) {
    if (lay.blocks(p).size() > 1) {
      throw Error(
          ErrorKind::invalid_argument,
          "hit-jacobi needs a layout with one block per rank; '" + lay.spec() + "' gives several");
    }
  }
  // Only rank 0 writes; a failure there is agreed so no rank waits in a collective.
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    // The grid's file is checked before the sweeps, so a typo costs seconds, not a run.
    if (!o.out.empty()) check_output_array(o.out, "grid (--out)");
    if (!o.run.svg.empty())
      write_file_atomically(o.run.svg, layout_svg(lay, "Jacobi grid (" + lay.spec() + ")"));
  });
}

// The serial reference of --check: one sweep over the whole grid, interior points the mean of
// their neighbours, boundary points copied, in the order of the example's kernel.
template <class T>
void serial_sweep(const Tile<T>& in, Tile<T>& out, index_t n) {
  const Shape& s = out.shape();
  const index_t rows = s.extent(0);
  const index_t cols = s.extent(1);
  const index_t in_step = in.step(0);
  const index_t out_step = out.step(0);
  for (index_t i = 0; i < rows; ++i) {
    const T* c = in.data() + i * in_step;
    T* o = out.data() + i * out_step;
    if (i == 0 || i == n - 1) {
      std::memcpy(o, c, static_cast<std::size_t>(cols) * sizeof(T));
      continue;
    }
    const T* up = c - in_step;
    const T* down = c + in_step;
    o[0] = c[0];
    for (index_t j = 1; j + 1 < cols; ++j) o[j] = T(0.25) * (up[j] + down[j] + c[j - 1] + c[j + 1]);
    o[cols - 1] = c[cols - 1];
  }
}

template <class T>
double max_change(const Tile<T>& a, const Tile<T>& b) {
  const std::vector<T> x = a.to_vector();
  const std::vector<T> y = b.to_vector();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    m = std::max(m, std::abs(static_cast<double>(x[i]) - static_cast<double>(y[i])));
  }
  return m;
}

// The result gathered on rank 0 against a serial run, bit for bit.
template <class T>
app::CheckResult verify(Environment& env, const Options& o, const Layout& lay, Tile<T>& result) {
  app::CheckResult check;
  check.ran = true;
  const bool root = env.rank() == 0;
  Tile<T> whole = root ? Tile<T>(lay.shape()) : Tile<T>();
  gather(lay, result, 0, whole).run();
  double err = 0;
  if (root) {
    Tile<T> a(lay.shape(), {.ghost = 1});
    Tile<T> b(lay.shape(), {.ghost = 1});
    initialise(a, o.n);
    initialise(b, o.n);
    for (int it = 0; it < o.iters; ++it) {
      serial_sweep(it % 2 == 0 ? a : b, it % 2 == 0 ? b : a, o.n);
    }
    const Tile<T>& ref = (o.iters % 2 == 0) ? a : b;
    std::size_t differ = 0;
    const std::vector<T> got = whole.to_vector();
    const std::vector<T> want = ref.to_vector();
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
        ++differ;
        err = std::max(err, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
      }
    }
    if (differ > 0 && err == 0) err = 1;  // NaN patterns or signed zeros differ: not bitwise equal
  }
  broadcast(err, 0, env.comm());
  check.max_rel_error = err;
  check.passed = err == 0;
  check.summary =
      check.passed ? "bit-for-bit equal to the serial run" : "FAILED: differs from the serial run";
  return check;
}

// The residual and checksum, the result file, the check and the report.
template <class T>
int finish(Environment& env, const Options& o, app::Harness& harness, const Layout& lay,
           const Partition& part, Resident<T>& result, Resident<T>& previous,
           const RowBalancer* balancer) {
  previous.sync_to_host();
  const double residual =
      allreduce(o.iters > 0 ? max_change(result.host(), previous.host()) : 0.0, ReduceOp::max);
  double local_sum = 0;
  result.host().for_each([&](const Index&, T& x) { local_sum += static_cast<double>(x); });
  const double checksum = allreduce(local_sum, ReduceOp::sum);
  harness.set_work(static_cast<double>(result.host().size()));
  if (!o.out.empty()) hit::write(o.out, lay.shape(), result.host(), env.comm());
  const app::CheckResult check =
      o.run.check ? verify(env, o, lay, result.host()) : app::CheckResult{};

  const double t = harness.median_time();
  const double cells = static_cast<double>(o.n - 2) * static_cast<double>(o.n - 2) * o.iters;
  const Topology& topo = lay.topology();
  nlohmann::json fields = {
      {"app", "jacobi"},
      {"n", o.n},
      {"iters", o.iters},
      {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
      {"layout", lay.spec()},
      {"partition", part.spec().empty() ? o.run.partition.value : part.spec()},
      {"residual", residual},
      {"checksum", checksum},
  };
  char headline[256];
  std::snprintf(headline, sizeof headline,
                "hit-jacobi: %ldx%ld grid, %d iterations, %s, %d ranks (%s)", o.n, o.n, o.iters,
                o.run.type.c_str(), env.size(), lay.spec().c_str());
  char line[128];
  std::snprintf(line, sizeof line, "residual %.3e, checksum %.10g", residual, checksum);
  std::vector<std::string> lines{line};
  if (balancer != nullptr) fields["balance"] = app::balance_report(*balancer, lines);
  return harness.report({.fields = fields,
                         .headline = headline,
                         .throughput = {"mcells_per_s", t > 0 ? cells / t * 1e-6 : 0.0},
                         .work_unit = "cells",
                         .lines = lines,
                         .check = check});
}

}  // namespace hit::jacobi
