#pragma once
// What every body of hit-cholesky's tile kernels checks, whatever device runs it: tiles the BLAS
// can take, and LAPACK's report of a matrix that is not positive definite. Only hit/view.hpp
// and hit/core/error.hpp: nvcc compiles the cuda bodies that include it.

#include <string>

#include "../common/dense_tile.hpp"
#include "hit/core/error.hpp"
#include "hit/view.hpp"

namespace hit::cholesky {

using app::require_dense;

template <class V>
void require_square(const V& v) {
  require_dense(v, "potrf", "the diagonal tile");
  if (v.rows() != v.cols()) throw Error(ErrorKind::shape, "potrf: the diagonal tile is not square");
}

// `info` as LAPACK's (and cuSOLVER's) potrf return it for the diagonal tile `a` of tile column
// `column`: positive, the order of the leading minor that is not positive.
template <class V>
void check_potrf_info(const V& a, long long info, index_t column) {
  if (info > 0) {
    const index_t row = a.origin[0] + (static_cast<index_t>(info) - 1) * a.step[0];
    throw Error(ErrorKind::invalid_argument,
                "the matrix is not symmetric positive definite: its leading minor of order " +
                    std::to_string(row + 1) + " is not positive (row " + std::to_string(row) +
                    ", in tile column " + std::to_string(column) + ")");
  }
  if (info < 0) {
    throw Error(ErrorKind::internal, "potrf: argument " + std::to_string(-info) + " is invalid");
  }
}

}  // namespace hit::cholesky
