#include "jacobi_rows.hpp"

#include <type_traits>

namespace hit::linsolve {
namespace {

template <class T>
void jacobi_rows_cpu(const KernelContext& ctx, View<const T> a, View<const T> x, View<T> x_new) {
  const Box& b = ctx.block;
  const index_t n = x.extent[0];
  const T* xs = &x(0);
  const index_t sx = x.stride[0];
  const index_t sa = a.stride[1];
  for (index_t r = 0; r < b.extent(0); ++r) {
    const index_t i = b.begin[0] + r * b.step[0];
    const T* row = &a(i, 0);
    T sum = row[n * sa];
    for (index_t j = 0; j < n; ++j) {
      if (j != i) sum -= row[j * sa] * xs[j * sx];
    }
    x_new(i) = sum / row[i * sa];
  }
}

}  // namespace

template <class T>
Kernel<View<const T>, View<const T>, View<T>> jacobi_rows() {
  Kernel<View<const T>, View<const T>, View<T>> k(std::is_same_v<T, double> ? "jacobi_rows<double>"
                                                                            : "jacobi_rows<float>");
  k.cpu(&jacobi_rows_cpu<T>);
  // Per row i of the domain: row i of [A | b] (its columns, an axis past the domain, whole), the
  // whole x, x_new(i).
  k.reads({AccessPattern::parse("0"), AccessPattern::parse("all"), AccessPattern::parse("0")});
  return k;
}

template Kernel<View<const double>, View<const double>, View<double>> jacobi_rows<double>();
template Kernel<View<const float>, View<const float>, View<float>> jacobi_rows<float>();

}  // namespace hit::linsolve
