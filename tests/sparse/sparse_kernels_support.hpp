#pragma once
// Random CSR matrices and graphs as the sparse kernels take them, and the naive loops the kernels
// are compared against (tests/sparse/sparse_kernels*_test.cpp).

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "hit/resident.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/tile.hpp"

namespace sparse_test {

inline hit::Shape range(hit::index_t begin, hit::index_t end) {
  return hit::Shape{hit::Sig(begin, end)};
}

using hit::index_t;
using hit::local_index_t;

// A process's rows: `rows` rows over `vertices` local vertices (columns past `rows` are ghosts).
struct Csr {
  index_t rows = 0;
  index_t vertices = 0;
  std::vector<index_t> row_ptr{0};
  std::vector<local_index_t> cols;
  std::vector<double> values;
};

// Rows of 0 .. max_row nonzeros (a share `empty` of them empty), distinct ascending columns, the
// diagonal among them about half the time, values in [-1, 1).
inline Csr random_csr(index_t rows, index_t vertices, int max_row, double empty, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<index_t> col(0, std::max<index_t>(0, vertices - 1));
  Csr a;
  a.rows = rows;
  a.vertices = vertices;
  for (index_t r = 0; r < rows; ++r) {
    std::set<index_t> cs;
    if (u(rng) >= empty && vertices > 0) {
      const int len = static_cast<int>(u(rng) * (max_row + 1));
      for (int k = 0; k < len; ++k) cs.insert(col(rng));
      if (u(rng) < 0.5 && r < vertices) cs.insert(r);
    }
    for (const index_t c : cs) {
      a.cols.push_back(static_cast<local_index_t>(c));
      a.values.push_back(2 * u(rng) - 1);
    }
    a.row_ptr.push_back(static_cast<index_t>(a.cols.size()));
  }
  return a;
}

// The 7-point Laplacian of a k*k*k grid (poisson3d:n=k), all rows own, no ghosts.
inline Csr poisson3d(index_t k) {
  Csr a;
  a.rows = a.vertices = k * k * k;
  for (index_t z = 0; z < k; ++z) {
    for (index_t y = 0; y < k; ++y) {
      for (index_t x = 0; x < k; ++x) {
        const index_t u = (z * k + y) * k + x;
        const auto add = [&](bool inside, index_t c, double v) {
          if (!inside) return;
          a.cols.push_back(static_cast<local_index_t>(c));
          a.values.push_back(v);
        };
        add(z > 0, u - k * k, -1);
        add(y > 0, u - k, -1);
        add(x > 0, u - 1, -1);
        add(true, u, 6);
        add(x + 1 < k, u + 1, -1);
        add(y + 1 < k, u + k, -1);
        add(z + 1 < k, u + k * k, -1);
        a.row_ptr.push_back(static_cast<index_t>(a.cols.size()));
      }
    }
  }
  return a;
}

template <class U, class V>
hit::Tile<U> tile_of(const std::vector<V>& v) {
  hit::Tile<U> t(hit::Shape{hit::Sig(0, static_cast<index_t>(v.size()))});
  for (std::size_t i = 0; i < v.size(); ++i) t(static_cast<index_t>(i)) = static_cast<U>(v[i]);
  return t;
}

template <class T>
std::vector<T> values_of(const hit::Tile<T>& t) {
  std::vector<T> v(static_cast<std::size_t>(t.shape().size()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = t(static_cast<index_t>(i));
  return v;
}

template <class T>
std::vector<T> random_vector(index_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = static_cast<T>(u(rng));
  return v;
}

// The product row by row, products added in column order; rows outside [first, last) keep y's.
template <class T>
std::vector<T> naive_spmv(const Csr& a, const std::vector<T>& x, std::vector<T> y, index_t first,
                          index_t last) {
  for (index_t r = first; r < last; ++r) {
    T s = 0;
    for (index_t k = a.row_ptr[static_cast<std::size_t>(r)];
         k < a.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      s += static_cast<T>(a.values[kk]) * x[static_cast<std::size_t>(a.cols[kk])];
    }
    y[static_cast<std::size_t>(r)] = s;
  }
  return y;
}

// Heat by brute force: the neighbours of v are the columns of row v.
template <class T>
std::vector<T> naive_heat(const Csr& a, const std::vector<T>& old, std::vector<T> next,
                          index_t first, index_t last) {
  for (index_t r = first; r < last; ++r) {
    std::vector<index_t> neighbours;
    for (index_t k = a.row_ptr[static_cast<std::size_t>(r)];
         k < a.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
      neighbours.push_back(a.cols[static_cast<std::size_t>(k)]);
    }
    T s = 0;
    for (const index_t c : neighbours) s += old[static_cast<std::size_t>(c)];
    next[static_cast<std::size_t>(r)] = neighbours.empty() ? old[static_cast<std::size_t>(r)]
                                                           : s / static_cast<T>(neighbours.size());
  }
  return next;
}

template <class T>
double dot_of(const std::vector<T>& x, const std::vector<T>& y, index_t begin, index_t end) {
  double s = 0;
  for (index_t i = begin; i < end; ++i)
    s += static_cast<double>(x[static_cast<std::size_t>(i)]) * y[static_cast<std::size_t>(i)];
  return s;
}

// The sum of |x[i] y[i]|: what the rounding error of a dot product is relative to.
template <class T>
double abs_dot_of(const std::vector<T>& x, const std::vector<T>& y, index_t begin, index_t end) {
  double s = 0;
  for (index_t i = begin; i < end; ++i)
    s += std::abs(static_cast<double>(x[static_cast<std::size_t>(i)]) *
                  y[static_cast<std::size_t>(i)]);
  return s;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-13;
}

// CG with b = A·1 through the kernels on the rank's device, the arrays as Tiles or as Residents;
// returns the iterations and leaves x in `solution`.
template <class T, template <class> class Array>
int solve(const Csr& a, std::vector<T>& solution, double tol) {
  const index_t n = a.rows;
  const auto part = hit::partition("threads", hit::Shape{hit::Sig(0, n)});
  const auto zeros = [n] { return tile_of<T>(std::vector<T>(static_cast<std::size_t>(n), T(0))); };
  const Array<index_t> rp(tile_of<index_t>(a.row_ptr));
  const Array<local_index_t> cols(tile_of<local_index_t>(a.cols));
  const Array<T> vals(tile_of<T>(a.values));
  const auto ones = tile_of<T>(std::vector<T>(static_cast<std::size_t>(n), T(1)));
  Array<T> b(zeros()), x(zeros()), r(zeros()), p(zeros()), q(zeros());
  hit::spmv(part, rp, cols, vals, ones, b, 0, n);
  hit::axpy(part, T(1), b, r);  // r = b
  hit::axpy(part, T(1), b, p);  // p = b
  T rr = hit::dot(part, r, r);
  const T stop = static_cast<T>(tol * tol) * rr;
  int it = 0;
  while (rr > stop && it < 1000) {
    hit::spmv(part, rp, cols, vals, p, q, 0, n);
    const T alpha = rr / hit::dot(part, p, q);
    const T next = hit::cg_update(part, alpha, p, q, x, r);
    hit::xpay(part, r, next / rr, p);
    rr = next;
    ++it;
  }
  if constexpr (std::is_same_v<Array<T>, hit::Resident<T>>) {
    x.sync_to_host();
    solution = values_of(x.host());
  } else {
    solution = values_of(x);
  }
  return it;
}

}  // namespace sparse_test
