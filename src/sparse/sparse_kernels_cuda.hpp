#pragma once
// The CUDA kernels of the sparse kernels (sparse_kernels_cuda.cu), launched on a stream from the
// cuda bodies (sparse_kernels_cublas.cpp). Plain C++17 on raw device pointers, so nvcc compiles
// the source that defines them. Pointers are at array index 0 (`first`, `last` and `n` are array
// indices); each returns the cudaError_t of the launch (0: launched).

#include <cstdint>

#include "hit/view.hpp"

namespace hit::detail {

// y[r] = sum of values[k] * x[cols[k]] over row r, for r in [first, last); `lanes` (1, 2, 4, 8, 16
// or 32) threads share a row.
int launch_csr_spmv(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const double* values, const double* x, double* y, index_t first, index_t last,
                    int lanes);
int launch_csr_spmv(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const float* values, const float* x, float* y, index_t first, index_t last,
                    int lanes);
// next[r] = the mean of old over row r's columns other than r (old[r] when there are none).
int launch_csr_heat(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const double* old, double* next, index_t first, index_t last, int lanes);
int launch_csr_heat(void* stream, const index_t* row_ptr, const std::int32_t* cols,
                    const float* old, float* next, index_t first, index_t last, int lanes);
// y[i] = x[i] + b * y[i] for i in [begin, end).
int launch_xpay(void* stream, const double* x, double b, double* y, index_t begin, index_t end);
int launch_xpay(void* stream, const float* x, float b, float* y, index_t begin, index_t end);
// x[i] += a * p[i]; r[i] -= a * q[i] for i in [begin, end).
int launch_cg_update(void* stream, double a, const double* p, const double* q, double* x, double* r,
                     index_t begin, index_t end);
int launch_cg_update(void* stream, float a, const float* p, const float* q, float* x, float* r,
                     index_t begin, index_t end);

}  // namespace hit::detail
