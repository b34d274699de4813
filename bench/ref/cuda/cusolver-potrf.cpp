// ref-cusolver-potrf: cuSOLVER dpotrf alone on one GPU, the reference hit-cholesky on one GPU is
// measured against. A = L·Lᵀ, n×n, double, the matrix hit-cholesky generates (symmetric, entries
// from --seed, n added on the diagonal). Two times per repetition:
//   time_s         A copied in from page-locked host memory, potrf, the factor copied back;
//   kernel_time_s  potrf alone, A already on the GPU (cudaEvent timing; A is restored from a
//                  device copy before each repetition, outside the timing).
// --check solves A·x = A·1 with the factor (cuSOLVER potrs) and compares x with 1.
//   ref-cusolver-potrf --n 8192 [--reps 3] [--warmup 1] [--check] [--seed 1] [--device 0]
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "common.hpp"

namespace {

constexpr const char* kProg = "ref-cusolver-potrf";

void check(cudaError_t e, const char* call) {
  hit::ref::cuda_check(kProg, e, call);
}
void check(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS) {
    hit::ref::die(kProg,
                  std::string(call) + ": cuSOLVER status " + std::to_string(static_cast<int>(s)));
  }
}

// hit-cholesky's generated input (examples/cholesky/cholesky_io.hpp).
double generated(std::uint64_t seed, std::size_t i, std::size_t j, std::size_t n) {
  return hit::ref::hashed_value(seed, std::min(i, j), std::max(i, j)) +
         (i == j ? static_cast<double>(n) : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  const hit::ref::Args args = hit::ref::parse(kProg, argc, argv);
  const auto n = static_cast<std::size_t>(args.n);
  const int ni = static_cast<int>(args.n);
  check(cudaSetDevice(args.device), "cudaSetDevice");
  const std::string name = hit::ref::device_name(kProg, args.device);
  const std::size_t bytes = n * n * sizeof(double);

  double* a = nullptr;
  check(cudaMallocHost(&a, bytes), "cudaMallocHost");
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] = generated(args.seed, i, j, n);
  }
  double* da = nullptr;
  double* pristine = nullptr;
  int* dinfo = nullptr;
  check(cudaMalloc(&da, bytes), "cudaMalloc");
  check(cudaMalloc(&pristine, bytes), "cudaMalloc");
  check(cudaMalloc(&dinfo, sizeof(int)), "cudaMalloc");
  check(cudaMemcpy(pristine, a, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cusolverDnHandle_t handle = nullptr;
  check(cusolverDnCreate(&handle), "cusolverDnCreate");
  check(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
  int lwork = 0;
  check(cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, ni, da, ni, &lwork),
        "cusolverDnDpotrf_bufferSize");
  double* work = nullptr;
  check(cudaMalloc(&work, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(double)),
        "cudaMalloc");
  cudaEvent_t e0, e1, e2, e3;
  for (cudaEvent_t* e : {&e0, &e1, &e2, &e3}) check(cudaEventCreate(e), "cudaEventCreate");

  // Symmetric: row-major and column-major storage are the same matrix; the lower triangle of the
  // column-major factor is L.
  std::vector<double> with_copies, kernel, h2d, d2h;
  int info = 0;
  for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
    // Kernel alone: A restored on the GPU first (not timed).
    check(cudaMemcpyAsync(da, pristine, bytes, cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync");
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    check(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, ni, da, ni, work, lwork, dinfo),
          "cusolverDnDpotrf");
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    // With the transfers: A in from the host, potrf, L back.
    const double start = hit::ref::now();
    check(cudaEventRecord(e2, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(da, a, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    cudaEvent_t in_done = e3;
    check(cudaEventRecord(in_done, stream), "cudaEventRecord");
    check(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, ni, da, ni, work, lwork, dinfo),
          "cusolverDnDpotrf");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double h2d_s = hit::ref::elapsed(e2, in_done);
    const double mid = hit::ref::now();
    check(cudaMemcpyAsync(a, da, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double end = hit::ref::now();
    check(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (info != 0) hit::ref::die(kProg, "potrf: info " + std::to_string(info));
    // The host copy now holds L: put A back for the next repetition (not timed).
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) a[i * n + j] = generated(args.seed, i, j, n);
    }
    if (rep >= args.warmup) {
      with_copies.push_back(end - start);
      kernel.push_back(hit::ref::elapsed(e0, e1));
      h2d.push_back(h2d_s);
      d2h.push_back(end - mid);
    }
  }

  bool passed = true;
  double max_err = 0;
  if (args.check) {
    // b = A·1 on the host; x from the factor on the GPU; x should be 1 everywhere.
    std::vector<double> rhs(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j) s += a[i * n + j];
      rhs[i] = s;
    }
    double* db = nullptr;
    check(cudaMalloc(&db, n * sizeof(double)), "cudaMalloc");
    check(cudaMemcpy(da, pristine, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    check(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, ni, da, ni, work, lwork, dinfo),
          "cusolverDnDpotrf");
    check(cudaMemcpy(db, rhs.data(), n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cusolverDnDpotrs(handle, CUBLAS_FILL_MODE_LOWER, ni, 1, da, ni, db, ni, dinfo),
          "cusolverDnDpotrs");
    check(cudaMemcpy(rhs.data(), db, n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (double x : rhs) max_err = std::max(max_err, std::abs(x - 1.0));
    passed = info == 0 && max_err <= 1e-10;
    cudaFree(db);
  }

  const double t = hit::ref::median(with_copies);
  const double tk = hit::ref::median(kernel);
  const double flops = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 3;
  std::printf(
      "{\"app\":\"ref-cusolver-potrf\",\"device\":\"%s\",\"n\":%ld,\"reps\":%d,"
      "\"time_s\":%.6f,\"time_min_s\":%.6f,\"time_max_s\":%.6f,\"gflops\":%.3f,"
      "\"kernel_time_s\":%.6f,\"kernel_gflops\":%.3f,\"h2d_s\":%.6f,\"d2h_s\":%.6f,"
      "\"lwork\":%d,\"check\":{\"ran\":%s,\"passed\":%s,\"max_abs_error\":%.3e}}\n",
      name.c_str(), args.n, args.reps, t, *std::min_element(with_copies.begin(), with_copies.end()),
      *std::max_element(with_copies.begin(), with_copies.end()), flops / t * 1e-9, tk,
      flops / tk * 1e-9, hit::ref::median(h2d), hit::ref::median(d2h), lwork,
      args.check ? "true" : "false", passed ? "true" : "false", max_err);

  for (cudaEvent_t e : {e0, e1, e2, e3}) cudaEventDestroy(e);
  cusolverDnDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(work);
  cudaFree(dinfo);
  cudaFree(pristine);
  cudaFree(da);
  cudaFreeHost(a);
  return passed ? 0 : 1;
}
