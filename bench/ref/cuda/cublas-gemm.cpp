// ref-cublas-gemm: cuBLAS dgemm alone on one GPU, the reference hit-cannon on one GPU is measured
// against. C = A·B, n×n, double, row-major on the host (the inputs hit-cannon generates: A from
// --seed, B from --seed + 1). Two times per repetition:
//   time_s         A and B copied in from page-locked host memory, the dgemm, C copied back
//                  (what hit-cannon's timed repetition does on a GPU);
//   kernel_time_s  the dgemm alone, operands already on the GPU (cudaEvent timing).
// --check compares 64 sampled entries of C with dot products computed on the host.
//   ref-cublas-gemm --n 8192 [--reps 5] [--warmup 1] [--check] [--seed 1] [--device 0]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "common.hpp"

namespace {

constexpr const char* kProg = "ref-cublas-gemm";

void check(cudaError_t e, const char* call) {
  hit::ref::cuda_check(kProg, e, call);
}
void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    hit::ref::die(kProg,
                  std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
  }
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
  double* b = nullptr;
  double* c = nullptr;
  check(cudaMallocHost(&a, bytes), "cudaMallocHost");
  check(cudaMallocHost(&b, bytes), "cudaMallocHost");
  check(cudaMallocHost(&c, bytes), "cudaMallocHost");
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a[i * n + j] = hit::ref::hashed_value(args.seed, i, j);
      b[i * n + j] = hit::ref::hashed_value(args.seed + 1, i, j);
    }
  }
  double* da = nullptr;
  double* db = nullptr;
  double* dc = nullptr;
  check(cudaMalloc(&da, bytes), "cudaMalloc");
  check(cudaMalloc(&db, bytes), "cudaMalloc");
  check(cudaMalloc(&dc, bytes), "cudaMalloc");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, stream), "cublasSetStream");
  cudaEvent_t e0, e1, e2, e3;
  for (cudaEvent_t* e : {&e0, &e1, &e2, &e3}) check(cudaEventCreate(e), "cudaEventCreate");

  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: the same buffers, B first.
  const double one = 1.0;
  const double zero = 0.0;
  std::vector<double> with_copies, kernel, h2d, d2h;
  for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double start = hit::ref::now();
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(da, a, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(db, b, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    check(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, db, ni, da, ni, &zero, dc,
                      ni),
          "cublasDgemm");
    check(cudaEventRecord(e2, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(c, dc, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(e3, stream), "cudaEventRecord");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double total = hit::ref::now() - start;
    if (rep >= args.warmup) {
      with_copies.push_back(total);
      h2d.push_back(hit::ref::elapsed(e0, e1));
      kernel.push_back(hit::ref::elapsed(e1, e2));
      d2h.push_back(hit::ref::elapsed(e2, e3));
    }
  }

  bool passed = true;
  double max_rel = 0;
  if (args.check) {
    // 64 entries spread over C (corners included) against host dot products.
    double scale = 0;
    double diff = 0;
    for (std::size_t s = 0; s < 64; ++s) {
      const std::size_t i = s == 63 ? n - 1 : (s * 7919) % n;
      const std::size_t j = s == 63 ? n - 1 : (s * 104729 + 13) % n;
      double want = 0;
      for (std::size_t k = 0; k < n; ++k) want += a[i * n + k] * b[k * n + j];
      scale = std::max(scale, std::abs(want));
      diff = std::max(diff, std::abs(c[i * n + j] - want));
    }
    max_rel = diff / std::max(scale, 1e-300);
    passed = max_rel <= 1e-10;
  }

  const double t = hit::ref::median(with_copies);
  const double tk = hit::ref::median(kernel);
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf(
      "{\"app\":\"ref-cublas-gemm\",\"device\":\"%s\",\"n\":%ld,\"reps\":%d,"
      "\"time_s\":%.6f,\"time_min_s\":%.6f,\"time_max_s\":%.6f,\"gflops\":%.3f,"
      "\"kernel_time_s\":%.6f,\"kernel_gflops\":%.3f,\"h2d_s\":%.6f,\"d2h_s\":%.6f,"
      "\"h2d_bytes\":%zu,\"d2h_bytes\":%zu,"
      "\"check\":{\"ran\":%s,\"passed\":%s,\"max_rel_error\":%.3e}}\n",
      name.c_str(), args.n, args.reps, t, *std::min_element(with_copies.begin(), with_copies.end()),
      *std::max_element(with_copies.begin(), with_copies.end()), flops / t * 1e-9, tk,
      flops / tk * 1e-9, hit::ref::median(h2d), hit::ref::median(d2h), 2 * bytes, bytes,
      args.check ? "true" : "false", passed ? "true" : "false", max_rel);

  for (cudaEvent_t e : {e0, e1, e2, e3}) cudaEventDestroy(e);
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFreeHost(a);
  cudaFreeHost(b);
  cudaFreeHost(c);
  return passed ? 0 : 1;
}
