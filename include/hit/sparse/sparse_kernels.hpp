#pragma once
// The kernels of sparse solvers on the CSR arrays a process holds (docs/sparse.md): the product
// y = A·x over a range of rows, the vector operations of conjugate gradients, and one step of Heat
// on a graph. Each is a hit::launch of a kernel with a body per device kind:
//   cpu   the partition's host threads (`threads`: one share of the rows per core);
//   emu   the cpu bodies, on the emulated device's copies;
//   cuda  hand-written CSR kernels (a group of lanes per row) and cuBLAS for dot and axpy.
//
// Data: 1-D tiles indexed from 0 with unit stride (Tile<T>(Shape{Sig(0, n)})), or Resident<T>s
// of such tiles, which keep the matrix and the vectors on the device across iterations (what CG
// on a GPU needs: a Tile argument is copied in and out by every launch):
//   row_ptr  index_t, rows + 1 offsets: row r's nonzeros are row_ptr[r] .. row_ptr[r+1] - 1
//   cols     local_index_t, one local column per nonzero (CsrShape's numbering, 0 .. vertices-1)
//   values   T, one per nonzero
//   x        T over the local vertices (own rows first, then ghosts): every column referenced
//   y        T over the rows (at least up to the last row computed)
// The arrays of a hit::CsrShape (row_ptr(), cols()) copied into tiles are of this form.
//
// The partition says which device runs the kernel and how: for the sparse product and Heat,
// make it over the rows (hit::partition("threads", Shape{Sig(0, rows)})) and pass the range of
// rows to compute, [first, last), inside its domain — so a caller computes the interior rows
// while the halo travels and the boundary rows after, with one partition. For the vector
// operations the partition's domain is the range of elements they run over. On cpu the rows of
// [first, last) are shared out over the partition's blocks in proportion to each block's share of
// the domain, balanced by nonzeros plus rows, so both halves of a split product keep every
// thread busy. A null or empty partition (an inactive process) does nothing, as hit::launch.
//
// Floating point: float and double. Sums are accumulated in T. On cpu a row's products are added
// in column order (the serial loop's result, bit for bit, whatever the thread count); dot
// products add per-block partial sums in block order, so a result depends on the partition, not
// on timing. On cuda the order differs (lanes, cuBLAS).

#include <concepts>
#include <initializer_list>
#include <type_traits>

#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/tile.hpp"

namespace hit {

namespace detail {
template <class A>
struct device_array_traits {};
template <class T>
struct device_array_traits<Tile<T>> {
  using element_type = T;
  static const Tile<T>& host(const Tile<T>& t) noexcept { return t; }
};
template <class T>
struct device_array_traits<Resident<T>> {
  using element_type = T;
  static const Tile<T>& host(const Resident<T>& r) noexcept { return r.host(); }
};
template <class A>
using device_array_element_t = typename device_array_traits<A>::element_type;
}  // namespace detail

// A launch argument of the sparse kernels: a Tile<T> or a Resident<T>.
template <class A, class T>
concept DeviceArray = std::same_as<detail::device_array_element_t<A>, T>;

// ---- the kernels (for launching them directly; the functions below check their arguments) ----

namespace detail {
using CsrIndexView = View<const index_t>;
using CsrColumnView = View<const local_index_t>;
template <class T>
using SpmvKernel =
    Kernel<CsrIndexView, CsrColumnView, View<const T>, View<const T>, View<T>, index_t, index_t>;
template <class T>
using HeatKernel = Kernel<CsrIndexView, CsrColumnView, View<const T>, View<T>, index_t, index_t>;
// `partials` has one slot per block of the partition (one on cuda): the block's partial sum.
template <class T>
using DotKernel = Kernel<View<const T>, View<const T>, T*>;
template <class T>
using AxpyKernel = Kernel<View<const T>, View<T>, T>;
template <class T>
using CgUpdateKernel = Kernel<View<const T>, View<const T>, View<T>, View<T>, T, T*>;
template <class T>
using SpmvDotKernel = Kernel<CsrIndexView, CsrColumnView, View<const T>, View<const T>, View<T>,
                             index_t, index_t, T*>;

template <class T>
const SpmvKernel<T>& spmv_kernel();
template <class T>
const SpmvDotKernel<T>& spmv_dot_kernel();
template <class T>
const HeatKernel<T>& heat_kernel();
template <class T>
const DotKernel<T>& dot_kernel();
template <class T>
const AxpyKernel<T>& axpy_kernel();
template <class T>
const AxpyKernel<T>& xpay_kernel();
template <class T>
const CgUpdateKernel<T>& cg_update_kernel();

// One argument to check: a 1-D tile indexed from 0 with unit stride of at least `needed`
// elements (null tiles are accepted only with an inactive partition, checked before).
struct DeviceArrayCheck {
  const char* name;
  Shape shape;
  index_t needed;
};
// Error(invalid_argument) naming the operation and the argument when one is not of that form, or
// the partition is not 1-D with unit stride.
void check_device_arrays(const char* op, const Partition& partition,
                         std::initializer_list<DeviceArrayCheck> args);
// Error(invalid_argument) unless 0 <= first <= last and [first, last) lies in the domain.
void check_row_range(const char* op, const Partition& partition, index_t first, index_t last);
// Error(invalid_argument) for an out-of-core partition (a reduction runs in one piece).
void check_not_out_of_core(const char* op, const Partition& partition);
// One slot per block of the partition on cpu and emu, one on cuda.
std::size_t partial_slots(const Partition& partition);
bool inactive(const Partition& partition) noexcept;

template <class A>
const auto& host_of(const A& a) noexcept {
  return device_array_traits<A>::host(a);
}
// What a launch over the rows [first, last) of a sparse matrix computes, for a dry run:
// `per_nonzero` flops for each of their nonzeros and `per_row` for each row, read through the
// column index. `row_ptr`: the host copy of the matrix's row offsets (never written on a device).
template <class RowPtr>
KernelCost sparse_rows_cost(const RowPtr& row_ptr, index_t first, index_t last, double per_nonzero,
                            double per_row) {
  const index_t* offsets = host_of(row_ptr).data();
  const double flops = per_nonzero * static_cast<double>(offsets[last] - offsets[first]) +
                       per_row * static_cast<double>(last - first);
  return {.irregular = true,
          .flops = [flops](const Shape&, const std::vector<Shape>&) { return flops; }};
}
template <class T>
T sum_in_order(const std::vector<T>& partials) {
  T s = 0;
  for (const T& p : partials) s += p;
  return s;
}
}  // namespace detail

// ---- sparse matrix times vector ----------------------------------------------------------------

// y[r] = sum over the nonzeros k of row r of values[k] * x[cols[k]], for the rows r of
// [first, last) (inside the partition's domain); the other elements of y are left as they are (y
// is in-out). An empty range launches nothing.
template <class RowPtr, class Cols, class Values, class X, class Y,
          class T = detail::device_array_element_t<Values>>
requires DeviceArray<RowPtr, index_t> && DeviceArray<Cols, local_index_t> && DeviceArray<X, T> &&
    DeviceArray<Y, T> && std::floating_point<T>
        LaunchRecord spmv(const Partition& partition, const RowPtr& row_ptr, const Cols& cols,
                          const Values& values, const X& x, const Y& y, index_t first,
                          index_t last) {
  if (detail::inactive(partition) || first == last) return {};
  detail::check_row_range("spmv", partition, first, last);
  const index_t nnz = detail::host_of(cols).size();
  detail::check_device_arrays("spmv", partition,
                              {{"row_ptr", detail::host_of(row_ptr).shape(), last + 1},
                               {"cols", detail::host_of(cols).shape(), 0},
                               {"values", detail::host_of(values).shape(), nnz},
                               {"x", detail::host_of(x).shape(), 0},
                               {"y", detail::host_of(y).shape(), last}});
  return detail::launch_on(Environment::current(), detail::spmv_kernel<T>(),
                           detail::sparse_rows_cost(row_ptr, first, last, 2, 0), partition,
                           in(row_ptr), in(cols), in(values), in(x), inout(y), first, last);
}

// spmv fused with the dot product CG takes next: y = A·x over the rows [first, last) as spmv, and
// returns this process's sum of x[r]·y[r] over those rows (x's rows are the held rows of the
// same local numbering) — one pass over y instead of two. 0 for an empty range or an inactive
// process. The sum adds per-block partial sums in block order (deterministic for a partition).
template <class RowPtr, class Cols, class Values, class X, class Y,
          class T = detail::device_array_element_t<Values>>
requires DeviceArray<RowPtr, index_t> && DeviceArray<Cols, local_index_t> && DeviceArray<X, T> &&
    DeviceArray<Y, T> && std::floating_point<T>
        T spmv_dot(const Partition& partition, const RowPtr& row_ptr, const Cols& cols,
                   const Values& values, const X& x, const Y& y, index_t first, index_t last) {
  if (detail::inactive(partition) || first == last) return T(0);
  detail::check_row_range("spmv_dot", partition, first, last);
  detail::check_not_out_of_core("spmv_dot", partition);
  const index_t nnz = detail::host_of(cols).size();
  detail::check_device_arrays("spmv_dot", partition,
                              {{"row_ptr", detail::host_of(row_ptr).shape(), last + 1},
                               {"cols", detail::host_of(cols).shape(), 0},
                               {"values", detail::host_of(values).shape(), nnz},
                               {"x", detail::host_of(x).shape(), last},
                               {"y", detail::host_of(y).shape(), last}});
  std::vector<T> partials(detail::partial_slots(partition), T(0));
  detail::launch_on(Environment::current(), detail::spmv_dot_kernel<T>(),
                    detail::sparse_rows_cost(row_ptr, first, last, 2, 2), partition, in(row_ptr),
                    in(cols), in(values), in(x), inout(y), first, last, partials.data());
  return detail::sum_in_order(partials);
}

// ---- Heat on a graph ---------------------------------------------------------------------------

// One step of Heat on a graph: for the rows v of [first, last), next[v] = the mean of old[c] over
// the columns c of row v (its neighbours: pass the graph's rows, without self-loops — a column v in
// row v counts as a neighbour like any other; hit-heat takes the off-diagonal pattern of a matrix);
// a row without columns keeps its value, next[v] = old[v]. No test per column: the loop is the
// bare gather and sum that a 5-point graph's update is bound by. old is over the local vertices
// (own rows, then ghosts), next over the rows; they must be different tiles. An empty range
// launches nothing.
template <class RowPtr, class Cols, class X, class Y, class T = detail::device_array_element_t<X>>
requires DeviceArray<RowPtr, index_t> && DeviceArray<Cols, local_index_t> && DeviceArray<Y, T> &&
    std::floating_point<T>
        LaunchRecord heat_step(const Partition& partition, const RowPtr& row_ptr, const Cols& cols,
                               const X& old, const Y& next, index_t first, index_t last) {
  if (detail::inactive(partition) || first == last) return {};
  detail::check_row_range("heat_step", partition, first, last);
  detail::check_device_arrays("heat_step", partition,
                              {{"row_ptr", detail::host_of(row_ptr).shape(), last + 1},
                               {"cols", detail::host_of(cols).shape(), 0},
                               {"old", detail::host_of(old).shape(), last},
                               {"next", detail::host_of(next).shape(), last}});
  return detail::launch_on(Environment::current(), detail::heat_kernel<T>(),
                           detail::sparse_rows_cost(row_ptr, first, last, 1, 1), partition,
                           in(row_ptr), in(cols), in(old), inout(next), first, last);
}

// ---- the vector operations of CG, over the partition's domain ----------------------------------

// This process's part of x·y: the sum of x[i] * y[i] over the domain (the caller allreduces).
// 0 on an inactive process. Not with an out-of-core partition.
template <class X, class Y, class T = detail::device_array_element_t<X>>
requires DeviceArray<Y, T> && std::floating_point<T> T dot(const Partition& partition, const X& x,
                                                           const Y& y) {
  if (detail::inactive(partition)) return T(0);
  detail::check_not_out_of_core("dot", partition);
  const index_t n = partition.domain()[0].end();
  detail::check_device_arrays(
      "dot", partition,
      {{"x", detail::host_of(x).shape(), n}, {"y", detail::host_of(y).shape(), n}});
  std::vector<T> partials(detail::partial_slots(partition), T(0));
  launch(detail::dot_kernel<T>(), partition, in(x), in(y), partials.data());
  return detail::sum_in_order(partials);
}

// y[i] += a * x[i] over the domain.
template <class X, class Y, class T = detail::device_array_element_t<X>>
requires DeviceArray<Y, T> && std::floating_point<T> LaunchRecord axpy(const Partition& partition,
                                                                       std::type_identity_t<T> a,
                                                                       const X& x, const Y& y) {
  if (detail::inactive(partition)) return {};
  const index_t n = partition.domain()[0].end();
  detail::check_device_arrays(
      "axpy", partition,
      {{"x", detail::host_of(x).shape(), n}, {"y", detail::host_of(y).shape(), n}});
  return launch(detail::axpy_kernel<T>(), partition, in(x), inout(y), a);
}

// y[i] = x[i] + b * y[i] over the domain (CG's p = r + beta p).
template <class X, class Y, class T = detail::device_array_element_t<X>>
requires DeviceArray<Y, T> && std::floating_point<T> LaunchRecord xpay(const Partition& partition,
                                                                       const X& x,
                                                                       std::type_identity_t<T> b,
                                                                       const Y& y) {
  if (detail::inactive(partition)) return {};
  const index_t n = partition.domain()[0].end();
  detail::check_device_arrays(
      "xpay", partition,
      {{"x", detail::host_of(x).shape(), n}, {"y", detail::host_of(y).shape(), n}});
  return launch(detail::xpay_kernel<T>(), partition, in(x), inout(y), b);
}

// CG's update, fused: x[i] += a * p[i] and r[i] -= a * q[i] over the domain; returns this
// process's part of the new r·r (the caller allreduces; 0 on an inactive process). Not with an
// out-of-core partition.
template <class P, class Q, class X, class R, class T = detail::device_array_element_t<X>>
requires DeviceArray<P, T> && DeviceArray<Q, T> && DeviceArray<R, T> && std::floating_point<T> T
cg_update(const Partition& partition, std::type_identity_t<T> a, const P& p, const Q& q, const X& x,
          const R& r) {
  if (detail::inactive(partition)) return T(0);
  detail::check_not_out_of_core("cg_update", partition);
  const index_t n = partition.domain()[0].end();
  detail::check_device_arrays("cg_update", partition,
                              {{"p", detail::host_of(p).shape(), n},
                               {"q", detail::host_of(q).shape(), n},
                               {"x", detail::host_of(x).shape(), n},
                               {"r", detail::host_of(r).shape(), n}});
  std::vector<T> partials(detail::partial_slots(partition), T(0));
  launch(detail::cg_update_kernel<T>(), partition, in(p), in(q), inout(x), inout(r), a,
         partials.data());
  return detail::sum_in_order(partials);
}

}  // namespace hit
