// CUDA kernels of the sparse kernels: CSR rows by groups of lanes (a warp shuffle sums a row), and
// the element-wise updates of CG that cuBLAS has no single call for.
//
// cuSPARSE's SpMV is not used: a CSR descriptor's row offsets start at the index base, so the
// boundary rows [first, last) of a split product would need rebased offsets (a copy per call);
// cusparseSpMV's documentation lists 32-bit and 64-bit index types, not the mix of 64-bit offsets
// and 32-bit columns this library stores (it would need the columns widened, 4 more bytes per
// nonzero of traffic); and its workspace would need a device allocation kept between launches.
// A group of lanes per row reads the matrix once with coalesced loads, which is what bounds a
// sparse product on a GPU.

#include <cuda_runtime.h>

#include "sparse/sparse_kernels_cuda.hpp"

namespace hit::detail {
namespace {

constexpr int threads_per_block = 256;

// The lanes of this thread's group of L inside its warp (groups never straddle a warp: L divides
// 32 and the block is whole warps).
template <int L>
__device__ unsigned group_mask() {
  if constexpr (L == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << L) - 1u) << (lane & ~static_cast<unsigned>(L - 1));
  }
}

template <int L, class V>
__device__ V group_sum(V s) {
  for (int offset = L / 2; offset > 0; offset /= 2)
    s += __shfl_down_sync(group_mask<L>(), s, offset, L);
  return s;
}

template <int L, class T>
__global__ void csr_spmv(const index_t* __restrict__ row_ptr, const std::int32_t* __restrict__ cols,
                         const T* __restrict__ values, const T* __restrict__ x, T* __restrict__ y,
                         index_t first, index_t last) {
  const index_t g = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const index_t row = first + g / L;
  if (row >= last) return;  // the whole group returns: the shuffles below see all its lanes
  const int lane = static_cast<int>(g % L);
  T s = 0;
  for (index_t k = row_ptr[row] + lane, e = row_ptr[row + 1]; k < e; k += L)
    s += values[k] * x[cols[k]];
  s = group_sum<L>(s);
  if (lane == 0) y[row] = s;
}

template <int L, class T>
__global__ void csr_heat(const index_t* __restrict__ row_ptr, const std::int32_t* __restrict__ cols,
                         const T* __restrict__ old, T* __restrict__ next, index_t first,
                         index_t last) {
  const index_t g = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const index_t row = first + g / L;
  if (row >= last) return;
  const int lane = static_cast<int>(g % L);
  T s = 0;
  const index_t b = row_ptr[row];
  const index_t e = row_ptr[row + 1];
  for (index_t k = b + lane; k < e; k += L) s += old[cols[k]];
  s = group_sum<L>(s);
  if (lane == 0) next[row] = e > b ? s / static_cast<T>(e - b) : old[row];
}

template <class T>
__global__ void xpay_kernel(const T* __restrict__ x, T b, T* __restrict__ y, index_t begin,
                            index_t end) {
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = begin + static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < end;
       i += stride)
    y[i] = x[i] + b * y[i];
}

template <class T>
__global__ void cg_update_kernel(T a, const T* __restrict__ p, const T* __restrict__ q,
                                 T* __restrict__ x, T* __restrict__ r, index_t begin, index_t end) {
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = begin + static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < end;
       i += stride) {
    x[i] += a * p[i];
    r[i] -= a * q[i];
  }
}

unsigned blocks_for(index_t threads) {
  return static_cast<unsigned>((threads + threads_per_block - 1) / threads_per_block);
}
// Element-wise kernels walk with a grid stride: a grid of at most 2^16 blocks covers any length.
unsigned elementwise_blocks(index_t n) {
  const index_t b = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <int L, class T>
void rows_spmv(cudaStream_t s, const index_t* rp, const std::int32_t* c, const T* v, const T* x,
               T* y, index_t first, index_t last) {
  csr_spmv<L, T>
      <<<blocks_for((last - first) * L), threads_per_block, 0, s>>>(rp, c, v, x, y, first, last);
}
template <int L, class T>
void rows_heat(cudaStream_t s, const index_t* rp, const std::int32_t* c, const T* old, T* next,
               index_t first, index_t last) {
  csr_heat<L, T>
      <<<blocks_for((last - first) * L), threads_per_block, 0, s>>>(rp, c, old, next, first, last);
}

template <class T>
int spmv(void* stream, const index_t* rp, const std::int32_t* c, const T* v, const T* x, T* y,
         index_t first, index_t last, int lanes) {
  if (last <= first) return 0;
  auto s = static_cast<cudaStream_t>(stream);
  switch (lanes) {
    case 1:
      rows_spmv<1>(s, rp, c, v, x, y, first, last);
      break;
    case 2:
      rows_spmv<2>(s, rp, c, v, x, y, first, last);
      break;
    case 4:
      rows_spmv<4>(s, rp, c, v, x, y, first, last);
      break;
    case 8:
      rows_spmv<8>(s, rp, c, v, x, y, first, last);
      break;
    case 16:
      rows_spmv<16>(s, rp, c, v, x, y, first, last);
      break;
    default:
      rows_spmv<32>(s, rp, c, v, x, y, first, last);
      break;
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int heat(void* stream, const index_t* rp, const std::int32_t* c, const T* old, T* next,
         index_t first, index_t last, int lanes) {
  if (last <= first) return 0;
  auto s = static_cast<cudaStream_t>(stream);
  switch (lanes) {
    case 1:
      rows_heat<1>(s, rp, c, old, next, first, last);
      break;
    case 2:
      rows_heat<2>(s, rp, c, old, next, first, last);
      break;
    case 4:
      rows_heat<4>(s, rp, c, old, next, first, last);
      break;
    case 8:
      rows_heat<8>(s, rp, c, old, next, first, last);
      break;
    case 16:
      rows_heat<16>(s, rp, c, old, next, first, last);
      break;
    default:
      rows_heat<32>(s, rp, c, old, next, first, last);
      break;
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int xpay(void* stream, const T* x, T b, T* y, index_t begin, index_t end) {
  if (end <= begin) return 0;
  xpay_kernel<T><<<elementwise_blocks(end - begin), threads_per_block, 0,
                   static_cast<cudaStream_t>(stream)>>>(x, b, y, begin, end);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int cg_update(void* stream, T a, const T* p, const T* q, T* x, T* r, index_t begin, index_t end) {
  if (end <= begin) return 0;
  cg_update_kernel<T><<<elementwise_blocks(end - begin), threads_per_block, 0,
                        static_cast<cudaStream_t>(stream)>>>(a, p, q, x, r, begin, end);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_csr_spmv(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const double* values, const double* x, double* y, index_t first, index_t last,
                    int lanes) {
  return spmv(stream, row_ptr, cols, values, x, y, first, last, lanes);
}
int launch_csr_spmv(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const float* values, const float* x, float* y, index_t first, index_t last,
                    int lanes) {
  return spmv(stream, row_ptr, cols, values, x, y, first, last, lanes);
}
int launch_csr_heat(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const double* old, double* next, index_t first, index_t last, int lanes) {
  return heat(stream, row_ptr, cols, old, next, first, last, lanes);
}
int launch_csr_heat(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const float* old, float* next, index_t first, index_t last, int lanes) {
  return heat(stream, row_ptr, cols, old, next, first, last, lanes);
}
int launch_xpay(void* stream, const double* x, double b, double* y, index_t begin, index_t end) {
  return xpay(stream, x, b, y, begin, end);
}
int launch_xpay(void* stream, const float* x, float b, float* y, index_t begin, index_t end) {
  return xpay(stream, x, b, y, begin, end);
}
int launch_cg_update(void* stream, double a, const double* p, const double* q, double* x, double* r,
                     index_t begin, index_t end) {
  return cg_update(stream, a, p, q, x, r, begin, end);
}
int launch_cg_update(void* stream, float a, const float* p, const float* q, float* x, float* r,
                     index_t begin, index_t end) {
  return cg_update(stream, a, p, q, x, r, begin, end);
}

}  // namespace hit::detail
