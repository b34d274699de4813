#pragma once
// The clusterCL workloads' kernels as hit::Kernel objects: the host bodies of clustercl.hpp over a
// launch's block, the CUDA bodies of clustercl_cuda.cu when the CUDA backend is built, and what
// each reads around its own index where that is not only its own element (conv's neighbourhood).

#include <string>
#include <type_traits>

#include "clustercl.hpp"
#include "hit/kernel.hpp"

namespace hit::packages {

template <class T>
std::string kernel_name(const std::string& base) {
  return base + (std::is_same_v<T, double> ? "<double>" : "<float>");
}

// A kernel whose cpu body is `cpu(block, args...)` and whose cuda body is `cuda(ctx, args...)`.
template <class... P, class Cpu, class Cuda>
Kernel<P...> body_kernel(const std::string& name, Cpu cpu, [[maybe_unused]] Cuda cuda) {
  Kernel<P...> k(name);
  k.cpu([cpu](const KernelContext& ctx, P... args) { cpu(ctx.block, args...); });
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([cuda](const KernelContext& ctx, P... args) { cuda(ctx, args...); });
#endif
  return k;
}

template <class T>
using V = View<T>;

template <class T>
Kernel<V<T>, V<T>> syrk_kernel() {
  return body_kernel<V<T>, V<T>>(
      kernel_name<T>("syrk"), [](const Box& b, auto... v) { syrk_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { syrk_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>, T, T> gsmv_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>, T, T>(
      kernel_name<T>("gsmv"), [](const Box& b, auto... v) { gsmv_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { gsmv_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>, V<T>> bicg_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>, V<T>>(
      kernel_name<T>("bicg"), [](const Box& b, auto... v) { bicg_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { bicg_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>, V<T>, T, T> bsm_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>, V<T>, T, T>(
      kernel_name<T>("bsm"), [](const Box& b, auto... v) { bsm_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { bsm_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>, T, T, int> bop_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>, T, T, int>(
      kernel_name<T>("bop"), [](const Box& b, auto... v) { bop_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { bop_cuda(c, v...); });
}

// Partition the grid's rows (atoms replicated) or the atoms (the grid summed over packages).
template <class T>
Kernel<V<T>, V<T>, T, T> dcs_kernel(bool by_atoms) {
  if (by_atoms) {
    return body_kernel<V<T>, V<T>, T, T>(
        kernel_name<T>("dcs_in"), [](const Box& b, auto... v) { dcs_in_rows<T>(b, v...); },
        [](const KernelContext& c, auto... v) { dcs_in_cuda(c, v...); });
  }
  return body_kernel<V<T>, V<T>, T, T>(
      kernel_name<T>("dcs_out"), [](const Box& b, auto... v) { dcs_out_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { dcs_out_cuda(c, v...); });
}

// Reads the 3 x 3 neighbourhood of its point: each package brings a halo row either side.
template <class T>
Kernel<V<T>, V<T>, V<T>, index_t, index_t> conv_kernel() {
  auto k = body_kernel<V<T>, V<T>, V<T>, index_t, index_t>(
      kernel_name<T>("conv"), [](const Box& b, auto... v) { conv_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { conv_cuda(c, v...); });
  k.reads({AccessPattern::parse("-1:1,-1:1"), AccessPattern(), AccessPattern::parse("0,0")});
  return k;
}

template <class T>
Kernel<V<T>, V<T>> mean_kernel() {
  return body_kernel<V<T>, V<T>>(
      kernel_name<T>("mean"), [](const Box& b, auto... v) { mean_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { mean_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>> cov_kernel() {
  return body_kernel<V<T>, V<T>, V<T>>(
      kernel_name<T>("cov"), [](const Box& b, auto... v) { cov_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { cov_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>> mean_sd_kernel() {
  return body_kernel<V<T>, V<T>, V<T>>(
      kernel_name<T>("mean_sd"), [](const Box& b, auto... v) { mean_sd_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { mean_sd_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>> cor_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>>(
      kernel_name<T>("cor"), [](const Box& b, auto... v) { cor_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { cor_cuda(c, v...); });
}

template <class T>
Kernel<V<T>, V<T>, index_t> gsp_dots_kernel() {
  return body_kernel<V<T>, V<T>, index_t>(
      kernel_name<T>("gsp_dots"), [](const Box& b, auto... v) { gsp_dots_rows<T>(b, v...); },
      [](const KernelContext& c, auto... v) { gsp_dots_cuda(c, v...); });
}

// One step of modified Gram-Schmidt: column k's update of the columns right of it (from a to a2),
// then, while the package's rows are at hand, the dot products of column k + 1 with the columns
// from k + 1 on (the next step's R row), added into d: one run per column instead of two.
template <class T>
Kernel<V<T>, V<T>, V<T>, V<T>, index_t, index_t> gsp_step_kernel() {
  return body_kernel<V<T>, V<T>, V<T>, V<T>, index_t, index_t>(
      kernel_name<T>("gsp_step"),
      [](const Box& b, V<T> a, V<T> rk, V<T> a2, V<T> d, index_t k, index_t m) {
        gsp_update_rows<T>(b, a, rk, a2, k);
        if (k + 1 < m) gsp_dots_rows<T>(b, a2, d, k + 1);
      },
      [](const KernelContext& c, V<T> a, V<T> rk, V<T> a2, V<T> d, index_t k, index_t m) {
        gsp_update_cuda(c, a, rk, a2, k);
        if (k + 1 < m) gsp_dots_cuda(c, a2, d, k + 1);
      });
}

}  // namespace hit::packages
