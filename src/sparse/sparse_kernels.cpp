// The sparse kernels (hit/sparse/sparse_kernels.hpp): argument checks, the cpu bodies (also what
// emu runs) and the kernels with their bodies. The cuda bodies are in sparse_kernels_cublas.cpp
// and sparse_kernels_cuda.cu.

#include "hit/sparse/sparse_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sparse/sparse_kernels_bodies.hpp"

namespace hit::detail {

// ---- argument checks ---------------------------------------------------------------------------

bool inactive(const Partition& partition) noexcept {
  return partition.domain().is_null() || partition.domain().empty();
}

std::size_t partial_slots(const Partition& partition) {
  if (partition.device_kind() == DeviceKind::cuda) return 1;
  return static_cast<std::size_t>(std::max<std::int64_t>(1, partition.block_count()));
}

void check_not_out_of_core(const char* op, const Partition& partition) {
  if (partition.out_of_core()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: partition '{}' is out of core, but a reduction runs over its "
                            "whole domain at once; use threads, blocks or single",
                            op, partition.spec()));
  }
}

void check_device_arrays(const char* op, const Partition& partition,
                         std::initializer_list<DeviceArrayCheck> args) {
  const Shape& d = partition.domain();
  if (d.rank() != 1 || d[0].stride() != 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: the partition's domain {} is not a 1-D range of unit stride "
                            "(make it over the rows, e.g. Shape{{Sig(0, rows)}})",
                            op, d.str()));
  }
  for (const auto& a : args) {
    if (a.shape.is_null()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: {} is the null tile, but this process's partition {} is not "
                              "empty",
                              op, a.name, d.str()));
    }
    if (a.shape.rank() != 1 || a.shape[0].begin() != 0 || a.shape[0].stride() != 1) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: {} has shape {}; the sparse kernels take 1-D tiles indexed "
                              "from 0 with unit stride, Shape{{Sig(0, n)}}",
                              op, a.name, a.shape.str()));
    }
    if (a.shape[0].end() < a.needed) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: {} has {} elements, needs at least {}", op, a.name,
                              a.shape[0].end(), a.needed));
    }
  }
}

void check_row_range(const char* op, const Partition& partition, index_t first, index_t last) {
  const Shape& d = partition.domain();
  if (first < 0 || last < first || d.rank() != 1 || first < d[0].begin() || last > d[0].end()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: rows [{}, {}) are not a range inside the partition's domain {}",
                            op, first, last, d.str()));
  }
}

namespace {

// ---- the cpu bodies ----------------------------------------------------------------------------

// The first row r of [begin, end] whose weight row_ptr[r] + r reaches `target` (the weight grows
// by one per row plus its nonzeros, so a binary search finds it).
index_t row_at_weight(const index_t* row_ptr, index_t begin, index_t end, double target) {
  while (begin < end) {
    const index_t mid = begin + (end - begin) / 2;
    if (static_cast<double>(row_ptr[mid] + mid) < target) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return begin;
}

// The rows of [first, last) ∩ domain that this block computes: the domain's blocks are mapped in
// proportion onto the range, cut where the weight (nonzeros plus rows) reaches each block's share.
// The cut at a point of the domain is a function of that point alone, so neighbouring blocks
// meet exactly and every row goes to one block, whatever the partition's blocks are.
RowRange block_rows(const KernelContext& ctx, const index_t* row_ptr, index_t first, index_t last) {
  const RowRange range = rows_in_domain(ctx, first, last);
  if (range.begin == range.end) return range;
  const index_t d0 = ctx.domain.begin[0];
  const double span = static_cast<double>(ctx.domain.end[0] - d0);
  const double w0 = static_cast<double>(row_ptr[range.begin] + range.begin);
  const double w1 = static_cast<double>(row_ptr[range.end] + range.end);
  const auto cut = [&](index_t at) {
    if (at <= d0) return range.begin;
    if (at >= ctx.domain.end[0]) return range.end;
    const double target = w0 + (w1 - w0) * (static_cast<double>(at - d0) / span);
    return row_at_weight(row_ptr, range.begin, range.end, target);
  };
  return {cut(ctx.block.begin[0]), cut(ctx.block.end[0])};
}

// Rows one at a time, a row's products added in column order: the loop a serial reference
// writes, so the result does not depend on the thread count. The product is bound by memory
// (12 bytes of matrix per 2 flops), so vectorising the short rows would gain little.
template <class T>
void spmv_cpu(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
              View<const T> values, View<const T> x, View<T> y, index_t first, index_t last) {
  const index_t* rp = flat(row_ptr, "spmv", "row_ptr");
  const RowRange rows = block_rows(ctx, rp, first, last);
  const local_index_t* __restrict c = flat(cols, "spmv", "cols");
  const T* __restrict v = flat(values, "spmv", "values");
  const T* __restrict xs = flat(x, "spmv", "x");
  T* __restrict ys = flat(y, "spmv", "y");
  for (index_t r = rows.begin; r < rows.end; ++r) {
    T s = 0;
    const index_t e = rp[r + 1];
    for (index_t k = rp[r]; k < e; ++k) s += v[k] * xs[c[k]];
    ys[r] = s;
  }
}

// (old[c[0]] + old[c[1]] + ... + old[c[L-1]]) / L, added in that order, unrolled, divided by a
// constant: a row of a mesh graph has a handful of neighbours, and a loop of four trips spends
// more on its own control than on the gathers it drives, and a division by a run-time count waits
// on the divider every row, where a division by 2, 4 or 8 is an exact multiplication. A 256 x 256
// grid, 1000 steps: 0.42 s as a loop, 0.34 s unrolled, 0.2 s with the constant divisor.
template <int L, class T>
T gather_mean(const T* __restrict old, const local_index_t* __restrict c) {
  T s = old[c[0]];
  for (int i = 1; i < L; ++i) s += old[c[i]];
  return s / static_cast<T>(L);
}

// The same mean for a row of any length, in the same order (the serial loop's result, bit for
// bit): rows of up to 8 neighbours unrolled, longer ones looped.
template <class T>
T neighbour_mean(const T* __restrict old, const local_index_t* __restrict c, index_t length) {
  switch (length) {
    case 1:
      return gather_mean<1>(old, c);
    case 2:
      return gather_mean<2>(old, c);
    case 3:
      return gather_mean<3>(old, c);
    case 4:
      return gather_mean<4>(old, c);
    case 5:
      return gather_mean<5>(old, c);
    case 6:
      return gather_mean<6>(old, c);
    case 7:
      return gather_mean<7>(old, c);
    case 8:
      return gather_mean<8>(old, c);
    default: {
      T s = 0;
      for (index_t k = 0; k < length; ++k) s += old[c[k]];
      return s / static_cast<T>(length);
    }
  }
}

// spmv, and the dot product of x and y over the block's rows while y[r] is in a register.
template <class T>
void spmv_dot_cpu(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
                  View<const T> values, View<const T> x, View<T> y, index_t first, index_t last,
                  T* partials) {
  const index_t* rp = flat(row_ptr, "spmv_dot", "row_ptr");
  const RowRange rows = block_rows(ctx, rp, first, last);
  const local_index_t* __restrict c = flat(cols, "spmv_dot", "cols");
  const T* __restrict v = flat(values, "spmv_dot", "values");
  const T* __restrict xs = flat(x, "spmv_dot", "x");
  T* __restrict ys = flat(y, "spmv_dot", "y");
  T dot = 0;
  for (index_t r = rows.begin; r < rows.end; ++r) {
    T s = 0;
    const index_t e = rp[r + 1];
    for (index_t k = rp[r]; k < e; ++k) s += v[k] * xs[c[k]];
    ys[r] = s;
    dot += xs[r] * s;
  }
  partials[ctx.block_index] = dot;
}

template <class T>
void heat_cpu(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols, View<const T> old,
              View<T> next, index_t first, index_t last) {
  const index_t* __restrict rp = flat(row_ptr, "heat_step", "row_ptr");
  const RowRange rows = block_rows(ctx, rp, first, last);
  const local_index_t* __restrict c = flat(cols, "heat_step", "cols");
  const T* __restrict o = flat(old, "heat_step", "old");
  T* __restrict n = flat(next, "heat_step", "next");
  for (index_t r = rows.begin; r < rows.end; ++r) {
    const index_t b = rp[r];
    const index_t length = rp[r + 1] - b;
    n[r] = length > 0 ? neighbour_mean(o, c + b, length) : o[r];
  }
}

// The block's elements, [begin, end) in array indices.
RowRange block_elements(const KernelContext& ctx) {
  return {ctx.block.begin[0], std::max(ctx.block.begin[0], ctx.block.end[0])};
}

// Four running sums: independent additions the core overlaps (one sum would wait on each add).
template <class T>
T dot_range(const T* __restrict x, const T* __restrict y, index_t begin, index_t end) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  index_t i = begin;
  for (; i + 4 <= end; i += 4) {
    s0 += x[i] * y[i];
    s1 += x[i + 1] * y[i + 1];
    s2 += x[i + 2] * y[i + 2];
    s3 += x[i + 3] * y[i + 3];
  }
  for (; i < end; ++i) s0 += x[i] * y[i];
  return (s0 + s1) + (s2 + s3);
}

template <class T>
void dot_cpu(const KernelContext& ctx, View<const T> x, View<const T> y, T* partials) {
  const RowRange b = block_elements(ctx);
  partials[ctx.block_index] = dot_range(flat(x, "dot", "x"), flat(y, "dot", "y"), b.begin, b.end);
}

template <class T>
void axpy_cpu(const KernelContext& ctx, View<const T> x, View<T> y, T a) {
  const RowRange b = block_elements(ctx);
  const T* __restrict xs = flat(x, "axpy", "x");
  T* __restrict ys = flat(y, "axpy", "y");
  for (index_t i = b.begin; i < b.end; ++i) ys[i] += a * xs[i];
}

template <class T>
void xpay_cpu(const KernelContext& ctx, View<const T> x, View<T> y, T b) {
  const RowRange e = block_elements(ctx);
  const T* __restrict xs = flat(x, "xpay", "x");
  T* __restrict ys = flat(y, "xpay", "y");
  for (index_t i = e.begin; i < e.end; ++i) ys[i] = xs[i] + b * ys[i];
}

// One pass: x and r updated and r·r summed while r is in cache.
template <class T>
void cg_update_cpu(const KernelContext& ctx, View<const T> p, View<const T> q, View<T> x, View<T> r,
                   T a, T* partials) {
  const RowRange b = block_elements(ctx);
  const T* __restrict ps = flat(p, "cg_update", "p");
  const T* __restrict qs = flat(q, "cg_update", "q");
  T* __restrict xs = flat(x, "cg_update", "x");
  T* __restrict rs = flat(r, "cg_update", "r");
  for (index_t i = b.begin; i < b.end; ++i) {
    xs[i] += a * ps[i];
    rs[i] -= a * qs[i];
  }
  partials[ctx.block_index] = dot_range<T>(rs, rs, b.begin, b.end);
}

template <class T>
std::string named(const char* op) {
  return fmt::format("{}<{}>", op, std::is_same_v<T, double> ? "double" : "float");
}

AccessPattern whole() {
  return AccessPattern::parse("all");
}
AccessPattern own() {
  return AccessPattern::parse("0");
}

}  // namespace

// ---- the kernels -------------------------------------------------------------------------------
// Built once (a function's constant): a launch per CG step need not rebuild its kernel. The matrix
// and x are read whole (out of core they are staged whole); y and the vectors at their index.

template <class T>
const SpmvKernel<T>& spmv_kernel() {
  static const SpmvKernel<T> kernel = [] {
    SpmvKernel<T> k(named<T>("spmv"));
    k.cpu(&spmv_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&spmv_cuda<T>);
#endif
    k.reads({whole(), whole(), whole(), whole(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const SpmvDotKernel<T>& spmv_dot_kernel() {
  static const SpmvDotKernel<T> kernel = [] {
    SpmvDotKernel<T> k(named<T>("spmv_dot"));
    k.cpu(&spmv_dot_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&spmv_dot_cuda<T>);
#endif
    k.reads({whole(), whole(), whole(), whole(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const HeatKernel<T>& heat_kernel() {
  static const HeatKernel<T> kernel = [] {
    HeatKernel<T> k(named<T>("heat_step"));
    k.cpu(&heat_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&heat_cuda<T>);
#endif
    k.reads({whole(), whole(), whole(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const DotKernel<T>& dot_kernel() {
  static const DotKernel<T> kernel = [] {
    DotKernel<T> k(named<T>("dot"));
    k.cost({.flops_per_point = 2});
    k.cpu(&dot_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&dot_cuda<T>);
#endif
    k.reads({own(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const AxpyKernel<T>& axpy_kernel() {
  static const AxpyKernel<T> kernel = [] {
    AxpyKernel<T> k(named<T>("axpy"));
    k.cost({.flops_per_point = 2});
    k.cpu(&axpy_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&axpy_cuda<T>);
#endif
    k.reads({own(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const AxpyKernel<T>& xpay_kernel() {
  static const AxpyKernel<T> kernel = [] {
    AxpyKernel<T> k(named<T>("xpay"));
    k.cost({.flops_per_point = 2});
    k.cpu(&xpay_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&xpay_cuda<T>);
#endif
    k.reads({own(), own()});
    return k;
  }();
  return kernel;
}

template <class T>
const CgUpdateKernel<T>& cg_update_kernel() {
  static const CgUpdateKernel<T> kernel = [] {
    CgUpdateKernel<T> k(named<T>("cg_update"));
    k.cost({.flops_per_point = 6});  // x += a·p, r -= a·q and r·r
    k.cpu(&cg_update_cpu<T>);
#ifdef HIT_HAVE_CUDA
    k.cuda(&cg_update_cuda<T>);
#endif
    k.reads({own(), own(), own(), own()});
    return k;
  }();
  return kernel;
}

template const SpmvKernel<double>& spmv_kernel<double>();
template const SpmvDotKernel<double>& spmv_dot_kernel<double>();
template const SpmvDotKernel<float>& spmv_dot_kernel<float>();
template const HeatKernel<double>& heat_kernel<double>();
template const DotKernel<double>& dot_kernel<double>();
template const AxpyKernel<double>& axpy_kernel<double>();
template const AxpyKernel<double>& xpay_kernel<double>();
template const CgUpdateKernel<double>& cg_update_kernel<double>();
template const SpmvKernel<float>& spmv_kernel<float>();
template const HeatKernel<float>& heat_kernel<float>();
template const DotKernel<float>& dot_kernel<float>();
template const AxpyKernel<float>& axpy_kernel<float>();
template const AxpyKernel<float>& xpay_kernel<float>();
template const CgUpdateKernel<float>& cg_update_kernel<float>();

}  // namespace hit::detail
