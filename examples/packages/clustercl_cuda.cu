// The cuda bodies of hit-packages' clusterCL workloads (Raca and Mehofer, clusterCL; the row and
// element functions they run are clustercl.hpp's, the cpu bodies' own). One thread per output
// element or row, grid-stride, on the package's stream. The launch geometry is our own 1-D (2-D
// for the column reductions) one, not ctx.grid: that one is the partition's 2-D tiling of the
// domain, and most of these kernels give a thread a whole row.
//
// Reduced outputs: s (bicg) and d (gsp_dots) are sums over the package's rows per column, so a
// thread sums one column over a chunk of rows and adds the chunk's sum with one atomicAdd (float
// and double atomicAdd exist from sm_60): atomics per element of the output, not per term. dcs_in
// gives each grid point to one thread, which loops over the package's atoms: no atomics.

#include <cuda_runtime.h>

#include <string>

#include "clustercl.hpp"
#include "hit/core/error.hpp"

namespace hit::packages {
namespace {

constexpr unsigned threads_per_block = 256;
// Rows a thread of a column reduction sums before its atomicAdd.
constexpr index_t reduction_chunk = 128;
// CUDA caps a grid's y extent; the kernels stride over what lies beyond.
constexpr index_t max_blocks = 65535;

cudaStream_t stream_of(const KernelContext& ctx) {
  return static_cast<cudaStream_t>(ctx.cuda_stream);
}

unsigned blocks_for(index_t threads) {
  const index_t b = (threads + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(b < max_blocks ? b : max_blocks);
}

__device__ index_t thread_index() {
  return static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ index_t thread_count() {
  return static_cast<index_t>(gridDim.x) * blockDim.x;
}

// f(i) for every row i of `rows`.
template <class F>
__global__ void each_row(RowSpan rows, F f) {
  for (index_t t = thread_index(); t < rows.count; t += thread_count()) f(rows.index(t));
}

// f(i, j) for every row i of `rows` and column j in 0 .. cols-1; neighbouring threads take
// neighbouring columns, so their writes are coalesced.
template <class F>
__global__ void each_element(RowSpan rows, index_t cols, F f) {
  const index_t total = rows.count * cols;
  for (index_t e = thread_index(); e < total; e += thread_count()) {
    f(rows.index(e / cols), e % cols);
  }
}

// f(j, chunk) for every column j in first_col .. cols-1 (x) and every chunk of reduction_chunk
// rows of `rows` (y, grid-stride).
template <class F>
__global__ void each_column_chunk(RowSpan rows, index_t first_col, index_t cols, F f) {
  const index_t j = first_col + thread_index();
  if (j >= cols) return;
  const index_t chunks = (rows.count + reduction_chunk - 1) / reduction_chunk;
  for (index_t c = blockIdx.y; c < chunks; c += gridDim.y) {
    f(j, rows.part(c * reduction_chunk, reduction_chunk));
  }
}

template <class F>
void launch_rows(const KernelContext& ctx, RowSpan rows, F f) {
  if (rows.count == 0) return;
  each_row<<<blocks_for(rows.count), threads_per_block, 0, stream_of(ctx)>>>(rows, f);
}

template <class F>
void launch_elements(const KernelContext& ctx, RowSpan rows, index_t cols, F f) {
  if (rows.count == 0 || cols <= 0) return;
  each_element<<<blocks_for(rows.count * cols), threads_per_block, 0, stream_of(ctx)>>>(rows, cols,
                                                                                        f);
}

template <class F>
void launch_column_chunks(const KernelContext& ctx, RowSpan rows, index_t first_col, index_t cols,
                          F f) {
  if (rows.count == 0 || first_col >= cols) return;
  const index_t chunks = (rows.count + reduction_chunk - 1) / reduction_chunk;
  const dim3 grid(
      static_cast<unsigned>((cols - first_col + threads_per_block - 1) / threads_per_block),
      static_cast<unsigned>(chunks < max_blocks ? chunks : max_blocks), 1);
  each_column_chunk<<<grid, threads_per_block, 0, stream_of(ctx)>>>(rows, first_col, cols, f);
}

// ---- the kernels' threads ---------------------------------------------------------------------

template <class T>
struct Syrk {
  View<T> a, c;
  __device__ void operator()(index_t i, index_t j) const { c(i, j) = syrk_element(a, i, j); }
};

template <class T>
struct Gsmv {
  View<T> a, b, x, y;
  T alpha, beta;
  __device__ void operator()(index_t i) const { gsmv_row(a, b, x, y, alpha, beta, i); }
};

template <class T>
struct BicgQ {
  View<T> a, p, q;
  __device__ void operator()(index_t i) const { bicg_q_row(a, p, q, i); }
};
template <class T>
struct BicgS {
  View<T> a, r, s;
  __device__ void operator()(index_t j, RowSpan chunk) const {
    atomicAdd(&s.local(j), bicg_s_part(a, r, j, chunk));
  }
};

template <class T>
struct Bsm {
  View<T> s, k, t, call, put;
  T r, sigma;
  __device__ void operator()(index_t i) const { bsm_row(s, k, t, call, put, r, sigma, i); }
};

// The tree's values live in a local array of MaxSteps+1 doubles per thread. The driver reserves
// local memory for every thread the GPU can hold at once (about 9 GB for 4096 steps on an H100),
// so small step counts get a smaller array.
template <class T, int MaxSteps>
__global__ void binomial(View<T> s, View<T> k, View<T> t, View<T> call, T r, T sigma, int steps,
                         RowSpan rows) {
  double v[MaxSteps + 1];
  for (index_t e = thread_index(); e < rows.count; e += thread_count()) {
    bop_row(s, k, t, call, r, sigma, steps, rows.index(e), v);
  }
}

template <class T, int MaxSteps>
void launch_binomial(const KernelContext& ctx, View<T> s, View<T> k, View<T> t, View<T> call, T r,
                     T sigma, int steps, RowSpan rows) {
  binomial<T, MaxSteps><<<blocks_for(rows.count), threads_per_block, 0, stream_of(ctx)>>>(
      s, k, t, call, r, sigma, steps, rows);
}

template <class T>
struct DcsOut {
  View<T> atoms, grid;
  T h, z0;
  __device__ void operator()(index_t i, index_t j) const {
    grid(i, j) = dcs_point(atoms, RowSpan{0, 1, atoms.rows()}, static_cast<T>(i) * h,
                           static_cast<T>(j) * h, z0);
  }
};
// Grid point (i, j) of the whole grid, from the package's atoms.
template <class T>
struct DcsIn {
  View<T> atoms, grid;
  T h, z0;
  RowSpan package;
  __device__ void operator()(index_t i, index_t j) const {
    grid.local(i, j) += dcs_point(atoms, package, static_cast<T>(i) * h, static_cast<T>(j) * h, z0);
  }
};

template <class T>
struct Conv {
  View<T> in, w, out;
  index_t rows_total, cols_total;
  __device__ void operator()(index_t i, index_t j) const {
    out(i, j) = conv_point(in, w, rows_total, cols_total, i, j);
  }
};

template <class T>
struct Mean {
  View<T> x, mean;
  __device__ void operator()(index_t j) const { mean_row(x, mean, j); }
};
template <class T>
struct Cov {
  View<T> x, mean, cov;
  __device__ void operator()(index_t i, index_t j) const { cov(i, j) = cov_element(x, mean, i, j); }
};

template <class T>
struct MeanSd {
  View<T> x, mean, sd;
  __device__ void operator()(index_t j) const { mean_sd_row(x, mean, sd, j); }
};
template <class T>
struct Cor {
  View<T> x, mean, sd, cor;
  __device__ void operator()(index_t i, index_t j) const {
    cor(i, j) = cor_element(x, mean, sd, i, j);
  }
};

template <class T>
struct GspDots {
  View<T> a, d;
  index_t k;
  __device__ void operator()(index_t j, RowSpan chunk) const {
    atomicAdd(&d.local(j), gsp_dots_part(a, k, j, chunk));
  }
};
// Element-wise, so a2 must not be a: a thread would read A(r, k) after another wrote it.
template <class T>
struct GspUpdate {
  View<T> a, rk, a2;
  index_t k;
  __device__ void operator()(index_t r, index_t j) const {
    a2(r, j) = gsp_update_element(a, rk, k, r, j);
  }
};

// ---- the bodies, for both precisions ---------------------------------------------------------

template <class T>
void syrk(const KernelContext& ctx, View<T> a, View<T> c) {
  launch_elements(ctx, rows_of(ctx.block), c.cols(), Syrk<T>{a, c});
}

template <class T>
void gsmv(const KernelContext& ctx, View<T> a, View<T> b, View<T> x, View<T> y, T alpha, T beta) {
  launch_rows(ctx, rows_of(ctx.block), Gsmv<T>{a, b, x, y, alpha, beta});
}

template <class T>
void bicg(const KernelContext& ctx, View<T> a, View<T> p, View<T> r, View<T> q, View<T> s) {
  const RowSpan rows = rows_of(ctx.block);
  launch_rows(ctx, rows, BicgQ<T>{a, p, q});
  launch_column_chunks(ctx, rows, 0, a.cols(), BicgS<T>{a, r, s});
}

template <class T>
void bsm(const KernelContext& ctx, View<T> s, View<T> k, View<T> t, View<T> call, View<T> put, T r,
         T sigma) {
  launch_rows(ctx, rows_of(ctx.block), Bsm<T>{s, k, t, call, put, r, sigma});
}

template <class T>
void bop(const KernelContext& ctx, View<T> s, View<T> k, View<T> t, View<T> call, T r, T sigma,
         int steps) {
  if (steps < 1 || steps > bop_max_steps) {
    throw Error(ErrorKind::invalid_argument, "bop: " + std::to_string(steps) +
                                                 " steps, the cuda body takes 1 to " +
                                                 std::to_string(bop_max_steps));
  }
  const RowSpan rows = rows_of(ctx.block);
  if (rows.count == 0) return;
  if (steps <= 256) {
    launch_binomial<T, 256>(ctx, s, k, t, call, r, sigma, steps, rows);
  } else if (steps <= 1024) {
    launch_binomial<T, 1024>(ctx, s, k, t, call, r, sigma, steps, rows);
  } else {
    launch_binomial<T, bop_max_steps>(ctx, s, k, t, call, r, sigma, steps, rows);
  }
}

template <class T>
void dcs_out(const KernelContext& ctx, View<T> atoms, View<T> grid, T h, T z0) {
  launch_elements(ctx, rows_of(ctx.block), grid.cols(), DcsOut<T>{atoms, grid, h, z0});
}

template <class T>
void dcs_in(const KernelContext& ctx, View<T> atoms, View<T> grid, T h, T z0) {
  const RowSpan package = rows_of(ctx.block);
  if (package.count == 0) return;
  launch_elements(ctx, RowSpan{0, 1, grid.rows()}, grid.cols(),
                  DcsIn<T>{atoms, grid, h, z0, package});
}

template <class T>
void conv(const KernelContext& ctx, View<T> in, View<T> w, View<T> out, index_t rows_total,
          index_t cols_total) {
  launch_elements(ctx, rows_of(ctx.block), cols_total, Conv<T>{in, w, out, rows_total, cols_total});
}

template <class T>
void mean(const KernelContext& ctx, View<T> x, View<T> mean) {
  launch_rows(ctx, rows_of(ctx.block), Mean<T>{x, mean});
}

template <class T>
void cov(const KernelContext& ctx, View<T> x, View<T> mean, View<T> cov) {
  launch_elements(ctx, rows_of(ctx.block), x.cols(), Cov<T>{x, mean, cov});
}

template <class T>
void mean_sd(const KernelContext& ctx, View<T> x, View<T> mean, View<T> sd) {
  launch_rows(ctx, rows_of(ctx.block), MeanSd<T>{x, mean, sd});
}

template <class T>
void cor(const KernelContext& ctx, View<T> x, View<T> mean, View<T> sd, View<T> cor) {
  launch_elements(ctx, rows_of(ctx.block), x.cols(), Cor<T>{x, mean, sd, cor});
}

template <class T>
void gsp_dots(const KernelContext& ctx, View<T> a, View<T> d, index_t k) {
  launch_column_chunks(ctx, rows_of(ctx.block), k, a.cols(), GspDots<T>{a, d, k});
}

template <class T>
void gsp_update(const KernelContext& ctx, View<T> a, View<T> rk, View<T> a2, index_t k) {
  launch_elements(ctx, rows_of(ctx.block), a.cols(), GspUpdate<T>{a, rk, a2, k});
}

}  // namespace

void syrk_cuda(const KernelContext& ctx, View<double> a, View<double> c) {
  syrk(ctx, a, c);
}
void syrk_cuda(const KernelContext& ctx, View<float> a, View<float> c) {
  syrk(ctx, a, c);
}

void gsmv_cuda(const KernelContext& ctx, View<double> a, View<double> b, View<double> x,
               View<double> y, double alpha, double beta) {
  gsmv(ctx, a, b, x, y, alpha, beta);
}
void gsmv_cuda(const KernelContext& ctx, View<float> a, View<float> b, View<float> x, View<float> y,
               float alpha, float beta) {
  gsmv(ctx, a, b, x, y, alpha, beta);
}

void bicg_cuda(const KernelContext& ctx, View<double> a, View<double> p, View<double> r,
               View<double> q, View<double> s) {
  bicg(ctx, a, p, r, q, s);
}
void bicg_cuda(const KernelContext& ctx, View<float> a, View<float> p, View<float> r, View<float> q,
               View<float> s) {
  bicg(ctx, a, p, r, q, s);
}

void bsm_cuda(const KernelContext& ctx, View<double> s, View<double> k, View<double> t,
              View<double> call, View<double> put, double r, double sigma) {
  bsm(ctx, s, k, t, call, put, r, sigma);
}
void bsm_cuda(const KernelContext& ctx, View<float> s, View<float> k, View<float> t,
              View<float> call, View<float> put, float r, float sigma) {
  bsm(ctx, s, k, t, call, put, r, sigma);
}

void bop_cuda(const KernelContext& ctx, View<double> s, View<double> k, View<double> t,
              View<double> call, double r, double sigma, int steps) {
  bop(ctx, s, k, t, call, r, sigma, steps);
}
void bop_cuda(const KernelContext& ctx, View<float> s, View<float> k, View<float> t,
              View<float> call, float r, float sigma, int steps) {
  bop(ctx, s, k, t, call, r, sigma, steps);
}

void dcs_out_cuda(const KernelContext& ctx, View<double> atoms, View<double> grid, double h,
                  double z0) {
  dcs_out(ctx, atoms, grid, h, z0);
}
void dcs_out_cuda(const KernelContext& ctx, View<float> atoms, View<float> grid, float h,
                  float z0) {
  dcs_out(ctx, atoms, grid, h, z0);
}
void dcs_in_cuda(const KernelContext& ctx, View<double> atoms, View<double> grid, double h,
                 double z0) {
  dcs_in(ctx, atoms, grid, h, z0);
}
void dcs_in_cuda(const KernelContext& ctx, View<float> atoms, View<float> grid, float h, float z0) {
  dcs_in(ctx, atoms, grid, h, z0);
}

void conv_cuda(const KernelContext& ctx, View<double> in, View<double> w, View<double> out,
               index_t rows_total, index_t cols_total) {
  conv(ctx, in, w, out, rows_total, cols_total);
}
void conv_cuda(const KernelContext& ctx, View<float> in, View<float> w, View<float> out,
               index_t rows_total, index_t cols_total) {
  conv(ctx, in, w, out, rows_total, cols_total);
}

void mean_cuda(const KernelContext& ctx, View<double> x, View<double> m) {
  mean(ctx, x, m);
}
void mean_cuda(const KernelContext& ctx, View<float> x, View<float> m) {
  mean(ctx, x, m);
}
void cov_cuda(const KernelContext& ctx, View<double> x, View<double> m, View<double> c) {
  cov(ctx, x, m, c);
}
void cov_cuda(const KernelContext& ctx, View<float> x, View<float> m, View<float> c) {
  cov(ctx, x, m, c);
}

void mean_sd_cuda(const KernelContext& ctx, View<double> x, View<double> m, View<double> sd) {
  mean_sd(ctx, x, m, sd);
}
void mean_sd_cuda(const KernelContext& ctx, View<float> x, View<float> m, View<float> sd) {
  mean_sd(ctx, x, m, sd);
}
void cor_cuda(const KernelContext& ctx, View<double> x, View<double> m, View<double> sd,
              View<double> c) {
  cor(ctx, x, m, sd, c);
}
void cor_cuda(const KernelContext& ctx, View<float> x, View<float> m, View<float> sd,
              View<float> c) {
  cor(ctx, x, m, sd, c);
}

void gsp_dots_cuda(const KernelContext& ctx, View<double> a, View<double> d, index_t k) {
  gsp_dots(ctx, a, d, k);
}
void gsp_dots_cuda(const KernelContext& ctx, View<float> a, View<float> d, index_t k) {
  gsp_dots(ctx, a, d, k);
}
void gsp_update_cuda(const KernelContext& ctx, View<double> a, View<double> rk, View<double> a2,
                     index_t k) {
  gsp_update(ctx, a, rk, a2, k);
}
void gsp_update_cuda(const KernelContext& ctx, View<float> a, View<float> rk, View<float> a2,
                     index_t k) {
  gsp_update(ctx, a, rk, a2, k);
}

}  // namespace hit::packages
