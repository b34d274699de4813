#pragma once
// Serial references of hit-packages' clusterCL workloads (Raca and Mehofer, clusterCL; the kernels
// are in clustercl.hpp), for --check and the tests: each workload's whole result the
// straightforward way, in double, row-major std::vectors, written apart from the kernels' row
// functions so that the two check each other. Only gsp_by_rows runs the row functions: it is the
// host side of the Gram–Schmidt loop, which the kernels leave to the program.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "clustercl.hpp"
#include "hit/view.hpp"

namespace hit::packages::reference {

using Matrix = std::vector<double>;  // row-major

// ---- views and blocks over host storage (tests, and the row-function run of gsp) --------------

// Rows first_row .. first_row+rows-1 of a row-major array of `cols` columns, whose storage
// `data` starts at row first_row: a package's part, indexed by array indices as a kernel's is.
template <class T>
View<T> rows_view(T* data, index_t first_row, index_t rows, index_t cols) {
  View<T> v;
  v.data = data;
  v.rank = 2;
  v.extent[0] = rows;
  v.extent[1] = cols;
  v.stride[0] = cols;
  v.stride[1] = 1;
  v.origin[0] = first_row;
  v.step[0] = v.step[1] = 1;
  return v;
}
template <class T>
View<T> matrix_view(T* data, index_t rows, index_t cols) {
  return rows_view(data, 0, rows, cols);
}
// Elements first .. first+n-1 of a vector whose storage `data` starts at element first.
template <class T>
View<T> vector_view(T* data, index_t n, index_t first = 0) {
  View<T> v;
  v.data = data;
  v.rank = 1;
  v.extent[0] = n;
  v.stride[0] = 1;
  v.origin[0] = first;
  v.step[0] = 1;
  return v;
}
// The rows begin .. end-1 as a kernel's block (rank 1: the bodies look at the first axis only).
inline Box row_block(index_t begin, index_t end, index_t step = 1) {
  Box b;
  b.rank = 1;
  b.begin[0] = begin;
  b.end[0] = end;
  b.step[0] = step;
  return b;
}

namespace detail {
inline std::size_t at(index_t i, index_t j, index_t cols) {
  return static_cast<std::size_t>(i * cols + j);
}
inline std::size_t size(index_t rows, index_t cols) {
  return static_cast<std::size_t>(rows * cols);
}
inline double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}
}  // namespace detail

// ---- the workloads ----------------------------------------------------------------------------

// C = A·Aᵀ, lower triangle, 0 above it. A n × m.
inline Matrix syrk(const Matrix& a, index_t n, index_t m) {
  Matrix c(detail::size(n, n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j <= i; ++j) {
      double sum = 0;
      for (index_t k = 0; k < m; ++k) sum += a[detail::at(i, k, m)] * a[detail::at(j, k, m)];
      c[detail::at(i, j, n)] = sum;
    }
  }
  return c;
}

// y = α·A·x + β·B·x. A, B n × n.
inline std::vector<double> gsmv(const Matrix& a, const Matrix& b, const std::vector<double>& x,
                                index_t n, double alpha, double beta) {
  std::vector<double> y(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    double sa = 0;
    double sb = 0;
    for (index_t j = 0; j < n; ++j) {
      sa += a[detail::at(i, j, n)] * x[static_cast<std::size_t>(j)];
      sb += b[detail::at(i, j, n)] * x[static_cast<std::size_t>(j)];
    }
    y[static_cast<std::size_t>(i)] = alpha * sa + beta * sb;
  }
  return y;
}

// q = A·p, s = Aᵀ·r. A rows × cols.
struct Bicg {
  std::vector<double> q;
  std::vector<double> s;
};
inline Bicg bicg(const Matrix& a, const std::vector<double>& p, const std::vector<double>& r,
                 index_t rows, index_t cols) {
  Bicg out{std::vector<double>(static_cast<std::size_t>(rows), 0.0),
           std::vector<double>(static_cast<std::size_t>(cols), 0.0)};
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < cols; ++j) {
      const double v = a[detail::at(i, j, cols)];
      out.q[static_cast<std::size_t>(i)] += v * p[static_cast<std::size_t>(j)];
      out.s[static_cast<std::size_t>(j)] += v * r[static_cast<std::size_t>(i)];
    }
  }
  return out;
}

// Black–Scholes European calls and puts; T ≤ 0 or σ = 0 priced as max(±(S − K·e^{−rT}), 0).
struct Prices {
  std::vector<double> call;
  std::vector<double> put;
};
inline Prices bsm(const std::vector<double>& s, const std::vector<double>& k,
                  const std::vector<double>& t, double r, double sigma) {
  Prices out{std::vector<double>(s.size()), std::vector<double>(s.size())};
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double years = std::max(t[i], 0.0);
    const double strike = k[i] * std::exp(-r * years);
    if (sigma * std::sqrt(years) <= 0) {
      out.call[i] = std::max(s[i] - strike, 0.0);
      out.put[i] = std::max(strike - s[i], 0.0);
      continue;
    }
    const double d1 =
        (std::log(s[i] / k[i]) + (r + sigma * sigma / 2) * years) / (sigma * std::sqrt(years));
    const double d2 = d1 - sigma * std::sqrt(years);
    out.call[i] = s[i] * detail::normal_cdf(d1) - strike * detail::normal_cdf(d2);
    out.put[i] = strike * detail::normal_cdf(-d2) - s[i] * detail::normal_cdf(-d1);
  }
  return out;
}

// European calls on a Cox–Ross–Rubinstein tree of `steps` steps, one level of values at a time.
inline std::vector<double> bop(const std::vector<double>& s, const std::vector<double>& k,
                               const std::vector<double>& t, double r, double sigma, int steps) {
  std::vector<double> call(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double years = std::max(t[i], 0.0);
    if (sigma * std::sqrt(years) <= 0) {
      call[i] = std::max(s[i] - k[i] * std::exp(-r * years), 0.0);
      continue;
    }
    const double dt = years / steps;
    const double u = std::exp(sigma * std::sqrt(dt));
    const double d = 1 / u;
    const double p = (std::exp(r * dt) - d) / (u - d);
    std::vector<double> level(static_cast<std::size_t>(steps) + 1);
    for (int j = 0; j <= steps; ++j) {
      level[static_cast<std::size_t>(j)] =
          std::max(s[i] * std::pow(u, j) * std::pow(d, steps - j) - k[i], 0.0);
    }
    for (int n = steps; n > 0; --n) {
      std::vector<double> before(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        before[static_cast<std::size_t>(j)] =
            std::exp(-r * dt) * (p * level[static_cast<std::size_t>(j) + 1] +
                                 (1 - p) * level[static_cast<std::size_t>(j)]);
      }
      level = std::move(before);
    }
    call[i] = level[0];
  }
  return call;
}

// Coulomb potential on the nx × ny grid at (i·h, j·h, z0) of atoms (x, y, z, q) rows; an atom on a
// grid point is left out of that point's sum.
inline Matrix dcs(const Matrix& atoms, index_t n_atoms, index_t nx, index_t ny, double h,
                  double z0) {
  Matrix grid(detail::size(nx, ny), 0.0);
  for (index_t i = 0; i < nx; ++i) {
    for (index_t j = 0; j < ny; ++j) {
      double sum = 0;
      for (index_t a = 0; a < n_atoms; ++a) {
        const double dx = static_cast<double>(i) * h - atoms[detail::at(a, 0, 4)];
        const double dy = static_cast<double>(j) * h - atoms[detail::at(a, 1, 4)];
        const double dz = z0 - atoms[detail::at(a, 2, 4)];
        const double dist = std::sqrt(dx * dx + dy * dy + dz * dz);
        if (dist > 0) sum += atoms[detail::at(a, 3, 4)] / dist;
      }
      grid[detail::at(i, j, ny)] = sum;
    }
  }
  return grid;
}

// The 3 × 3 filter w over the n × m image, zero outside it.
inline Matrix conv(const Matrix& in, index_t n, index_t m, const Matrix& w) {
  Matrix out(detail::size(n, m), 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < m; ++j) {
      double sum = 0;
      for (index_t a = -1; a <= 1; ++a) {
        for (index_t b = -1; b <= 1; ++b) {
          if (i + a < 0 || i + a >= n || j + b < 0 || j + b >= m) continue;
          sum += w[detail::at(a + 1, b + 1, 3)] * in[detail::at(i + a, j + b, m)];
        }
      }
      out[detail::at(i, j, m)] = sum;
    }
  }
  return out;
}

// Column means of X (n × m).
inline std::vector<double> column_means(const Matrix& x, index_t n, index_t m) {
  std::vector<double> mean(static_cast<std::size_t>(m), 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < m; ++j) mean[static_cast<std::size_t>(j)] += x[detail::at(i, j, m)];
  }
  for (double& v : mean) v /= static_cast<double>(std::max<index_t>(n, 1));
  return mean;
}

// Sample covariance (N − 1; 1 when N = 1) of the columns of X (n × m): m × m.
inline Matrix covariance(const Matrix& x, index_t n, index_t m) {
  const std::vector<double> mean = column_means(x, n, m);
  Matrix cov(detail::size(m, m), 0.0);
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < m; ++j) {
      double sum = 0;
      for (index_t k = 0; k < n; ++k) {
        sum += (x[detail::at(k, i, m)] - mean[static_cast<std::size_t>(i)]) *
               (x[detail::at(k, j, m)] - mean[static_cast<std::size_t>(j)]);
      }
      cov[detail::at(i, j, m)] = sum / static_cast<double>(std::max<index_t>(n - 1, 1));
    }
  }
  return cov;
}

// Sample standard deviations of the columns, 0 for a column whose sd is at most cor_zero_sd times
// its largest magnitude (clustercl.hpp's rule).
inline std::vector<double> column_sds(const Matrix& x, index_t n, index_t m) {
  const Matrix cov = covariance(x, n, m);
  std::vector<double> sd(static_cast<std::size_t>(m), 0.0);
  for (index_t j = 0; j < m; ++j) {
    double scale = 0;
    for (index_t k = 0; k < n; ++k) scale = std::max(scale, std::abs(x[detail::at(k, j, m)]));
    const double v = n > 1 ? std::sqrt(cov[detail::at(j, j, m)]) : 0.0;
    sd[static_cast<std::size_t>(j)] = v <= cor_zero_sd * scale ? 0.0 : v;
  }
  return sd;
}

// Pearson correlation of the columns: 1 on the diagonal, 0 beside a column of zero variance.
inline Matrix correlation(const Matrix& x, index_t n, index_t m) {
  const Matrix cov = covariance(x, n, m);
  const std::vector<double> sd = column_sds(x, n, m);
  Matrix cor(detail::size(m, m), 0.0);
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < m; ++j) {
      const double si = sd[static_cast<std::size_t>(i)];
      const double sj = sd[static_cast<std::size_t>(j)];
      cor[detail::at(i, j, m)] =
          i == j ? 1.0 : (si == 0 || sj == 0 ? 0.0 : cov[detail::at(i, j, m)] / (si * sj));
    }
  }
  return cor;
}

// A = Q·R, Q m × n with orthonormal columns, R n × n upper triangular.
struct QR {
  Matrix q;
  Matrix r;
};

// Modified Gram–Schmidt, column by column. A m × n, m ≥ n, full column rank.
inline QR mgs(const Matrix& a, index_t m, index_t n) {
  QR out{a, Matrix(detail::size(n, n), 0.0)};
  Matrix& q = out.q;
  for (index_t k = 0; k < n; ++k) {
    double norm = 0;
    for (index_t i = 0; i < m; ++i) norm += q[detail::at(i, k, n)] * q[detail::at(i, k, n)];
    norm = std::sqrt(norm);
    out.r[detail::at(k, k, n)] = norm;
    for (index_t i = 0; i < m; ++i) q[detail::at(i, k, n)] /= norm;
    for (index_t j = k + 1; j < n; ++j) {
      double dot = 0;
      for (index_t i = 0; i < m; ++i) dot += q[detail::at(i, k, n)] * q[detail::at(i, j, n)];
      out.r[detail::at(k, j, n)] = dot;
      for (index_t i = 0; i < m; ++i) q[detail::at(i, j, n)] -= dot * q[detail::at(i, k, n)];
    }
  }
  return out;
}

// The same factorisation as the packages run it: per column k, gsp_dots_rows over blocks of
// `block_rows` rows into d (zeroed, as a reduced output is), row k of R from d on the host, then
// gsp_update_rows block by block into a second array, which becomes A. In precision T.
template <class T>
QR gsp_by_rows(const Matrix& a, index_t m, index_t n, index_t block_rows) {
  std::vector<T> cur(a.begin(), a.end());
  std::vector<T> next(cur.size());
  std::vector<T> d(static_cast<std::size_t>(n));
  std::vector<T> rk(static_cast<std::size_t>(n));
  QR out{Matrix(), Matrix(detail::size(n, n), 0.0)};
  const index_t step = std::max<index_t>(block_rows, 1);
  for (index_t k = 0; k < n; ++k) {
    std::fill(d.begin(), d.end(), T(0));
    for (index_t b = 0; b < m; b += step) {
      const index_t e = std::min(b + step, m);
      gsp_dots_rows(row_block(b, e), rows_view(cur.data() + detail::at(b, 0, n), b, e - b, n),
                    vector_view(d.data(), n), k);
    }
    const T rkk = std::sqrt(d[static_cast<std::size_t>(k)]);
    std::fill(rk.begin(), rk.end(), T(0));
    rk[static_cast<std::size_t>(k)] = rkk;
    for (index_t j = k + 1; j < n; ++j)
      rk[static_cast<std::size_t>(j)] = d[static_cast<std::size_t>(j)] / rkk;
    for (index_t j = k; j < n; ++j) out.r[detail::at(k, j, n)] = rk[static_cast<std::size_t>(j)];
    for (index_t b = 0; b < m; b += step) {
      const index_t e = std::min(b + step, m);
      gsp_update_rows(row_block(b, e), rows_view(cur.data() + detail::at(b, 0, n), b, e - b, n),
                      vector_view(rk.data(), n),
                      rows_view(next.data() + detail::at(b, 0, n), b, e - b, n), k);
    }
    std::swap(cur, next);
  }
  out.q.assign(cur.begin(), cur.end());
  return out;
}

}  // namespace hit::packages::reference
