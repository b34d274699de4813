#include "hit/balance/kernels.hpp"

#include <cblas.h>

#include <fmt/format.h>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "balance/gemm_unit.hpp"
#include "hit/core/error.hpp"

namespace hit::balance {
namespace {

template <class T>
void allocate(std::vector<T>& v, std::size_t count, std::string_view kernel, std::int64_t d) {
  try {
    v.assign(count, T{});
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{} kernel: cannot allocate {} bytes for d = {} units", kernel,
                            count * sizeof(T), d));
  } catch (const std::length_error&) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{} kernel: d = {} units is too large to allocate", kernel, d));
  }
}

struct GemmState {
  int b = 0;
  int rows = 0;       // block rows of the main rectangle
  int cols = 0;       // block columns of the main rectangle
  int remainder = 0;  // blocks in the extra partial row
  std::vector<double> a, bm, c, c_extra;
};

struct JacobiState {
  std::int64_t columns = 0;
  std::int64_t rows = 0;
  std::vector<double> a, x, rhs, next;
};

}  // namespace

BenchmarkKernel gemm_block_kernel(int block) {
  detail::check_gemm_block(block);
  auto s = std::make_shared<GemmState>();
  s->b = block;
  BenchmarkKernel k;
  k.name = detail::gemm_name(block);
  k.complexity = [block](std::int64_t d) { return detail::gemm_flops(block, d); };
  k.setup = [s](std::int64_t d) {
    if (d > (std::int64_t{1} << 40)) {
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("gemm kernel: d = {} blocks is too large", d));
    }
    const detail::GemmGeometry g = detail::gemm_geometry(d);
    s->rows = static_cast<int>(g.rows);
    s->cols = static_cast<int>(g.cols);
    s->remainder = static_cast<int>(g.remainder);
    const std::size_t b = static_cast<std::size_t>(s->b);
    const std::size_t widest = static_cast<std::size_t>(std::max(s->cols, s->remainder));
    allocate(s->a, b * b * static_cast<std::size_t>(s->rows), "gemm", d);
    allocate(s->bm, b * b * widest, "gemm", d);
    allocate(s->c, b * b * static_cast<std::size_t>(s->rows) * static_cast<std::size_t>(s->cols),
             "gemm", d);
    allocate(s->c_extra, b * b * static_cast<std::size_t>(s->remainder), "gemm", d);
    for (std::size_t i = 0; i < s->a.size(); ++i) s->a[i] = 1.0 / static_cast<double>(1 + i % 97);
    for (std::size_t i = 0; i < s->bm.size(); ++i) s->bm[i] = 1.0 / static_cast<double>(1 + i % 89);
  };
  k.run = [s] {
    const int b = s->b;
    // C (rows·b × cols·b) += A(rows·b × b) · B(b × cols·b): the pivot column times the pivot row.
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->rows * b, s->cols * b, b, 1.0,
                s->a.data(), b, s->bm.data(), std::max(s->cols, s->remainder) * b, 1.0, s->c.data(),
                s->cols * b);
    if (s->remainder > 0) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, s->remainder * b, b, 1.0,
                  s->a.data(), b, s->bm.data(), std::max(s->cols, s->remainder) * b, 1.0,
                  s->c_extra.data(), s->remainder * b);
    }
  };
  k.teardown = [s] {
    std::vector<double>().swap(s->a);
    std::vector<double>().swap(s->bm);
    std::vector<double>().swap(s->c);
    std::vector<double>().swap(s->c_extra);
  };
  return k;
}

BenchmarkKernel jacobi_row_kernel(std::int64_t columns) {
  if (columns < 1 || columns > (std::int64_t{1} << 32)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("jacobi kernel: {} columns (allowed 1 to 2^32)", columns));
  }
  auto s = std::make_shared<JacobiState>();
  s->columns = columns;
  BenchmarkKernel k;
  k.name = fmt::format("jacobi(N={})", columns);
  k.complexity = [columns](std::int64_t d) {
    return 2.0 * static_cast<double>(d) * static_cast<double>(columns);
  };
  k.setup = [s](std::int64_t d) {
    const auto n = static_cast<std::size_t>(s->columns);
    if (static_cast<double>(d) * static_cast<double>(n) > 1e12) {
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("jacobi kernel: d = {} rows of {} columns is too large", d, n));
    }
    s->rows = d;
    allocate(s->a, static_cast<std::size_t>(d) * n, "jacobi", d);
    allocate(s->x, n, "jacobi", d);
    allocate(s->rhs, static_cast<std::size_t>(d), "jacobi", d);
    allocate(s->next, static_cast<std::size_t>(d), "jacobi", d);
    for (std::size_t i = 0; i < static_cast<std::size_t>(d); ++i) {
      for (std::size_t j = 0; j < n; ++j)
        s->a[i * n + j] = 1.0 / static_cast<double>(1 + (i + j) % 7);
      s->a[i * n + i % n] = 2.0 * static_cast<double>(n);  // diagonally dominant
      s->rhs[i] = 1.0;
    }
    for (std::size_t j = 0; j < n; ++j) s->x[j] = 1.0 / static_cast<double>(1 + j % 5);
  };
  k.run = [s] {
    const auto n = static_cast<std::size_t>(s->columns);
    for (std::size_t i = 0; i < static_cast<std::size_t>(s->rows); ++i) {
      const double* row = &s->a[i * n];
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += row[j] * s->x[j];
      const std::size_t diag = i % n;
      s->next[i] = (s->rhs[i] - sum + row[diag] * s->x[diag]) / row[diag];
    }
  };
  k.teardown = [s] {
    std::vector<double>().swap(s->a);
    std::vector<double>().swap(s->x);
    std::vector<double>().swap(s->rhs);
    std::vector<double>().swap(s->next);
  };
  return k;
}

}  // namespace hit::balance
