#pragma once
// Everything of hit-linsolve around the algorithm (linsolve.cpp): the generated system, the
// serial reference of --check (bit for bit), the residual, the result file and the report.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../common/balance_report.hpp"
#include "../common/harness.hpp"
#include "hit/hit.hpp"
#include "linsolve.hpp"

namespace hit::linsolve {

// A value in [0, 1) for (seed, i, j): splitmix64 of the three.
inline double unit_value(std::uint64_t seed, index_t i, index_t j) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull +
                    static_cast<std::uint64_t>(i) * 0xBF58476D1CE4E5B9ull +
                    static_cast<std::uint64_t>(j) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// [A | b]: off-diagonal entries in [0, 1), the diagonal n (strictly dominant, so Jacobi
// converges, about halving the error per iteration), b in [0, n).
template <class T>
T system_value(std::uint64_t seed, index_t i, index_t j, index_t n) {
  if (j == n) return static_cast<T>(unit_value(seed + 1, i, 0) * static_cast<double>(n));
  if (i == j) return static_cast<T>(n);
  return static_cast<T>(unit_value(seed, i, j));
}

template <class T>
void generate(Tile<T>& rows, std::uint64_t seed, index_t n) {
  rows.for_each([&](const Index& k, T& v) { v = system_value<T>(seed, k[0], k[1], n); });
}

// max |b − A x| over the rows of `rows` (the process's rows of [A | b]) and max |b| there.
template <class T>
std::pair<double, double> local_residual(const Tile<T>& rows, const Tile<T>& x, index_t n) {
  double r = 0, bmax = 0;
  if (rows.is_null()) return {0, 0};
  const Shape& s = rows.shape();
  for (index_t i = s[0].begin(); i < s[0].end(); ++i) {
    double sum = static_cast<double>(rows(i, n));
    bmax = std::max(bmax, std::abs(sum));
    for (index_t j = 0; j < n; ++j)
      sum -= static_cast<double>(rows(i, j)) * static_cast<double>(x(j));
    r = std::max(r, std::abs(sum));
  }
  return {r, bmax};
}

// One serial Jacobi update of the whole system, in the order of the example's kernel.
template <class T>
void serial_update(const Tile<T>& a, const Tile<T>& x, Tile<T>& x_new, index_t n) {
  for (index_t i = 0; i < n; ++i) {
    T sum = a(i, n);
    for (index_t j = 0; j < n; ++j) {
      if (j != i) sum -= a(i, j) * x(j);
    }
    x_new(i) = sum / a(i, i);
  }
}

// Checks x's file (--out) before the iterations, so that a typo costs seconds, not a run, and
// draws the layout (--svg). Collective.
inline void check_outputs_and_draw(Environment& env, const Options& o, const Layout& la) {
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.out.empty()) check_output_array(o.out, "x (--out)");
    if (!o.run.svg.empty()) {
      write_file_atomically(o.run.svg, layout_svg(la, "[A | b] (" + la.spec() + ")"));
    }
  });
}

// x written as one raw file from each process's rows of it. Collective.
template <class T>
void write_x(Environment& env, const std::string& path, const Layout& lx, const Tile<T>& x_rows) {
  hit::write(path, lx.shape(), x_rows, env.comm());
}

// The serial solve on rank 0, as many iterations as the distributed one took, compared bit for bit.
template <class T>
app::CheckResult verify(Environment& env, const Options& o, std::uint64_t seed, int iterations,
                        const Tile<T>& x) {
  app::CheckResult check;
  check.ran = true;
  double differ = 0;
  if (env.rank() == 0) {
    const index_t n = o.n;
    Tile<T> a(Shape::extents({n, n + 1}));
    generate(a, seed, n);
    Tile<T> u(Shape::extents({n})), v(Shape::extents({n}));
    u.fill(T(0));
    for (int it = 0; it < iterations; ++it) {
      serial_update(a, u, v, n);
      std::swap(u, v);
    }
    for (index_t i = 0; i < n; ++i) {
      if (std::memcmp(&u(i), &x(i), sizeof(T)) != 0) {
        differ = std::max(differ, std::abs(static_cast<double>(u(i)) - static_cast<double>(x(i))));
        if (differ == 0) differ = 1;  // NaN patterns or signed zeros: not bitwise equal
      }
    }
  }
  broadcast(differ, 0, env.comm());
  check.max_rel_error = differ;
  check.passed = differ == 0;
  check.summary = check.passed ? "bit-for-bit equal to the serial Jacobi solve"
                               : "FAILED: differs from the serial Jacobi solve";
  return check;
}

}  // namespace hit::linsolve
