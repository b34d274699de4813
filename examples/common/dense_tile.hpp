#pragma once
// What the tile kernels of the factorisations (hit-cholesky, hit-qr) require of every tile they
// hand to BLAS or LAPACK, whatever device runs them. Only hit/view.hpp and hit/core/error.hpp:
// nvcc compiles the cuda bodies that include it.

#include <string>

#include "hit/core/error.hpp"
#include "hit/view.hpp"

namespace hit::app {

// Error(shape) naming the kernel and the tile unless `v` is a 2-D tile with unit column steps.
template <class V>
void require_dense(const V& v, const char* kernel, const char* what) {
  if (v.rank != 2 || (v.cols() > 1 && v.stride[1] != 1)) {
    throw Error(ErrorKind::shape,
                std::string(kernel) + ": " + what + " must be a 2-D tile with unit column steps");
  }
}

}  // namespace hit::app
