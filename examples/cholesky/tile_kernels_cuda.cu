// The cuda bodies of hit-cholesky's tile kernels. The tiles are row-major; cuBLAS and cuSOLVER
// are column-major, where a row-major matrix reads as its transpose: our lower triangle is their
// upper one, and each call below is the CPU body's call transposed.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <map>
#include <string>
#include <type_traits>

#include "hit/core/environment.hpp"
#include "tile_checks.hpp"
#include "tile_kernels_cuda.hpp"

namespace hit::cholesky {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ErrorKind::device, std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}
void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ErrorKind::device,
                std::string(what) + " failed with cuBLAS status " + std::to_string(status));
  }
}
void check_solver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    throw Error(ErrorKind::device,
                std::string(what) + " failed with cuSOLVER status " + std::to_string(status));
  }
}

// cuSOLVER's handle, workspace and status word per GPU, kept by the Environment for the whole
// run (creating a handle costs milliseconds; a factorisation calls potrf once per tile column).
class Solvers {
 public:
  explicit Solvers(Environment& /*env*/) {}
  ~Solvers() {
    for (auto& [gpu, s] : solvers_) {
      cudaSetDevice(gpu);
      if (s.work != nullptr) cudaFree(s.work);
      if (s.info != nullptr) cudaFree(s.info);
      if (s.handle != nullptr) cusolverDnDestroy(s.handle);
    }
  }
  Solvers(const Solvers&) = delete;
  Solvers& operator=(const Solvers&) = delete;

  struct Solver {
    cusolverDnHandle_t handle = nullptr;
    void* work = nullptr;
    std::size_t work_bytes = 0;
    int* info = nullptr;
  };

  // The current GPU's solver with a workspace of at least `bytes`, working on `stream`.
  Solver& get(cudaStream_t stream, std::size_t bytes) {
    int gpu = 0;
    check_cuda(cudaGetDevice(&gpu), "cudaGetDevice");
    Solver& s = solvers_[gpu];
    if (s.handle == nullptr) {
      check_solver(cusolverDnCreate(&s.handle), "cusolverDnCreate");
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&s.info), sizeof(int)), "cudaMalloc");
    }
    if (s.work_bytes < bytes) {
      // The stream may still use the old workspace.
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      if (s.work != nullptr) cudaFree(s.work);
      s.work = nullptr;
      s.work_bytes = 0;
      check_cuda(cudaMalloc(&s.work, bytes), "cudaMalloc (cuSOLVER workspace)");
      s.work_bytes = bytes;
    }
    check_solver(cusolverDnSetStream(s.handle, stream), "cusolverDnSetStream");
    return s;
  }

 private:
  std::map<int, Solver> solvers_;
};

int dim(index_t v) {
  return static_cast<int>(v);
}

template <class T>
void potrf(const KernelContext& ctx, View<T> a, index_t column) {
  require_square(a);
  if (a.rows() == 0) return;
  auto stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const int n = dim(a.rows()), lda = dim(a.pitch());
  constexpr cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;  // our lower triangle
  Solvers& solvers = Environment::current().extension<Solvers>();
  int lwork = 0;
  if constexpr (std::is_same_v<T, double>) {
    check_solver(
        cusolverDnDpotrf_bufferSize(solvers.get(stream, 0).handle, upper, n, a.data, lda, &lwork),
        "cusolverDnDpotrf_bufferSize");
  } else {
    check_solver(
        cusolverDnSpotrf_bufferSize(solvers.get(stream, 0).handle, upper, n, a.data, lda, &lwork),
        "cusolverDnSpotrf_bufferSize");
  }
  Solvers::Solver& s = solvers.get(stream, static_cast<std::size_t>(lwork) * sizeof(T));
  if constexpr (std::is_same_v<T, double>) {
    check_solver(
        cusolverDnDpotrf(s.handle, upper, n, a.data, lda, static_cast<T*>(s.work), lwork, s.info),
        "cusolverDnDpotrf");
  } else {
    check_solver(
        cusolverDnSpotrf(s.handle, upper, n, a.data, lda, static_cast<T*>(s.work), lwork, s.info),
        "cusolverDnSpotrf");
  }
  // The minor that failed is known only once the factorisation ran: the one synchronisation of
  // the tile kernels.
  int info = 0;
  check_cuda(cudaMemcpyAsync(&info, s.info, sizeof(int), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync (potrf status)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check_potrf_info(a, info, column);
}

// a := a · l⁻ᵀ (row-major), l lower: column-major l⁻¹-from-the-left on aᵀ with lᵀ upper.
template <class T>
void trsm(const KernelContext& ctx, View<const T> l, View<T> a) {
  require_dense(l, "trsm", "the diagonal tile");
  require_dense(a, "trsm", "the panel tile");
  if (a.rows() == 0 || a.cols() == 0) return;
  auto handle = static_cast<cublasHandle_t>(ctx.cublas);
  const T one = 1;
  if constexpr (std::is_same_v<T, double>) {
    check_blas(cublasDtrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                           CUBLAS_DIAG_NON_UNIT, dim(a.cols()), dim(a.rows()), &one, l.data,
                           dim(l.pitch()), a.data, dim(a.pitch())),
               "cublasDtrsm");
  } else {
    check_blas(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                           CUBLAS_DIAG_NON_UNIT, dim(a.cols()), dim(a.rows()), &one, l.data,
                           dim(l.pitch()), a.data, dim(a.pitch())),
               "cublasStrsm");
  }
}

// a := a − l·lᵀ on a's lower triangle (row-major): column-major upper triangle, lᵀ·l there.
template <class T>
void syrk(const KernelContext& ctx, View<const T> l, View<T> a) {
  require_dense(l, "syrk", "the panel tile");
  require_dense(a, "syrk", "the diagonal tile");
  if (a.rows() == 0 || l.cols() == 0) return;
  auto handle = static_cast<cublasHandle_t>(ctx.cublas);
  const T minus_one = -1, one = 1;
  if constexpr (std::is_same_v<T, double>) {
    check_blas(
        cublasDsyrk(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, dim(a.rows()), dim(l.cols()),
                    &minus_one, l.data, dim(l.pitch()), &one, a.data, dim(a.pitch())),
        "cublasDsyrk");
  } else {
    check_blas(
        cublasSsyrk(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, dim(a.rows()), dim(l.cols()),
                    &minus_one, l.data, dim(l.pitch()), &one, a.data, dim(a.pitch())),
        "cublasSsyrk");
  }
}

// a := a − li·ljᵀ (row-major): column-major aᵀ −= lj·liᵀ.
template <class T>
void gemm(const KernelContext& ctx, View<const T> li, View<const T> lj, View<T> a) {
  require_dense(li, "gemm", "the panel tile of the row");
  require_dense(lj, "gemm", "the panel tile of the column");
  require_dense(a, "gemm", "the updated tile");
  if (a.rows() == 0 || a.cols() == 0 || li.cols() == 0) return;
  auto handle = static_cast<cublasHandle_t>(ctx.cublas);
  const T minus_one = -1, one = 1;
  if constexpr (std::is_same_v<T, double>) {
    check_blas(cublasDgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, dim(a.cols()), dim(a.rows()),
                           dim(li.cols()), &minus_one, lj.data, dim(lj.pitch()), li.data,
                           dim(li.pitch()), &one, a.data, dim(a.pitch())),
               "cublasDgemm");
  } else {
    check_blas(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, dim(a.cols()), dim(a.rows()),
                           dim(li.cols()), &minus_one, lj.data, dim(lj.pitch()), li.data,
                           dim(li.pitch()), &one, a.data, dim(a.pitch())),
               "cublasSgemm");
  }
}

}  // namespace

void potrf_cuda(const KernelContext& ctx, View<double> a, index_t column) {
  potrf(ctx, a, column);
}
void potrf_cuda(const KernelContext& ctx, View<float> a, index_t column) {
  potrf(ctx, a, column);
}
void trsm_cuda(const KernelContext& ctx, View<const double> l, View<double> a) {
  trsm(ctx, l, a);
}
void trsm_cuda(const KernelContext& ctx, View<const float> l, View<float> a) {
  trsm(ctx, l, a);
}
void syrk_cuda(const KernelContext& ctx, View<const double> l, View<double> a) {
  syrk(ctx, l, a);
}
void syrk_cuda(const KernelContext& ctx, View<const float> l, View<float> a) {
  syrk(ctx, l, a);
}
void gemm_cuda(const KernelContext& ctx, View<const double> li, View<const double> lj,
               View<double> a) {
  gemm(ctx, li, lj, a);
}
void gemm_cuda(const KernelContext& ctx, View<const float> li, View<const float> lj,
               View<float> a) {
  gemm(ctx, li, lj, a);
}

}  // namespace hit::cholesky
