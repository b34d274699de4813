// ref-cuda-jacobi: a plain, hand-written CUDA 5-point Jacobi on one GPU, the reference hit-jacobi
// on one GPU is measured against. Same problem as hit-jacobi and ref-jacobi: an n×n grid whose
// outer ring is fixed (top edge 1, the other edges i/n), every interior point the mean of its
// four neighbours, summed in hit-jacobi's order (up + down + left + right), two grids swapped
// each iteration. Per repetition:
//   time_s         both grids copied in from page-locked host memory, the iterations, the last
//                  grid copied back (what hit-jacobi's timed repetition does on a GPU);
//   kernel_time_s  the iterations alone (cudaEvent timing).
// The checksum (sum of the final grid, row by row) and the residual (largest change of the last
// iteration) are hit-jacobi's, so on one process they agree bit for bit. --check compares the
// grid with a serial host run, bit for bit (slow for large n).
//   ref-cuda-jacobi --n 8192 --iters 200 [--reps 3] [--warmup 1] [--check] [--device 0]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.hpp"

namespace {

constexpr const char* kProg = "ref-cuda-jacobi";

void check(cudaError_t e, const char* call) {
  hit::ref::cuda_check(kProg, e, call);
}

double initial_value(long i, long j, long n) {
  if (i == 0) return 1.0;
  if (i == n - 1 || j == 0 || j == n - 1) return static_cast<double>(i) / static_cast<double>(n);
  return 0.0;
}

// One thread per interior point; x along a row (coalesced), y over rows.
__global__ void sweep(const double* __restrict__ in, double* __restrict__ out, long n) {
  const long j = 1 + static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long i = 1 + static_cast<long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= n - 1 || j >= n - 1) return;
  const double* c = in + i * n + j;
  out[i * n + j] = 0.25 * (c[-n] + c[n] + c[-1] + c[1]);
}

void host_sweep(const std::vector<double>& in, std::vector<double>& out, long n) {
  for (long i = 1; i + 1 < n; ++i) {
    const double* c = in.data() + i * n;
    double* o = out.data() + i * n;
    for (long j = 1; j + 1 < n; ++j) o[j] = 0.25 * (c[j - n] + c[j + n] + c[j - 1] + c[j + 1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const hit::ref::Args args = hit::ref::parse(kProg, argc, argv);
  const long n = args.n;
  if (n < 3) hit::ref::die(kProg, "--n must be at least 3");
  check(cudaSetDevice(args.device), "cudaSetDevice");
  const std::string name = hit::ref::device_name(kProg, args.device);
  const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t bytes = cells * sizeof(double);

  double* u = nullptr;
  double* v = nullptr;
  check(cudaMallocHost(&u, bytes), "cudaMallocHost");
  check(cudaMallocHost(&v, bytes), "cudaMallocHost");
  double* du = nullptr;
  double* dv = nullptr;
  check(cudaMalloc(&du, bytes), "cudaMalloc");
  check(cudaMalloc(&dv, bytes), "cudaMalloc");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  const dim3 block(128, 4);
  const dim3 grid(static_cast<unsigned>((n - 2 + block.x - 1) / block.x),
                  static_cast<unsigned>((n - 2 + block.y - 1) / block.y));

  std::vector<double> with_copies, kernel;
  for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
    for (long i = 0; i < n; ++i) {
      for (long j = 0; j < n; ++j) u[i * n + j] = v[i * n + j] = initial_value(i, j, n);
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double start = hit::ref::now();
    check(cudaMemcpyAsync(du, u, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(dv, v, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    for (int it = 0; it < args.iters; ++it) {
      const bool even = it % 2 == 0;
      sweep<<<grid, block, 0, stream>>>(even ? du : dv, even ? dv : du, n);
    }
    check(cudaGetLastError(), "sweep");
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    // The last grid written: v after an odd number of iterations, u after an even one.
    const bool in_u = args.iters % 2 == 0;
    check(cudaMemcpyAsync(in_u ? u : v, in_u ? du : dv, bytes, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double total = hit::ref::now() - start;
    if (rep >= args.warmup) {
      with_copies.push_back(total);
      kernel.push_back(hit::ref::elapsed(e0, e1));
    }
  }
  // The grid before the last iteration, for the residual (not timed).
  const bool in_u = args.iters % 2 == 0;
  double* result = in_u ? u : v;
  double* previous = in_u ? v : u;
  check(cudaMemcpy(previous, in_u ? dv : du, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  double checksum = 0;
  double residual = 0;
  for (std::size_t k = 0; k < cells; ++k) {
    checksum += result[k];
    if (args.iters > 0) residual = std::max(residual, std::abs(result[k] - previous[k]));
  }

  bool passed = true;
  if (args.check) {
    std::vector<double> a(cells), b(cells);
    for (long i = 0; i < n; ++i) {
      for (long j = 0; j < n; ++j) a[i * n + j] = b[i * n + j] = initial_value(i, j, n);
    }
    for (int it = 0; it < args.iters; ++it) host_sweep(it % 2 == 0 ? a : b, it % 2 == 0 ? b : a, n);
    const std::vector<double>& want = in_u ? a : b;
    passed = std::memcmp(want.data(), result, bytes) == 0;
  }

  const double t = hit::ref::median(with_copies);
  const double tk = hit::ref::median(kernel);
  const double updates = static_cast<double>(n - 2) * static_cast<double>(n - 2) * args.iters;
  std::printf(
      "{\"app\":\"ref-cuda-jacobi\",\"device\":\"%s\",\"n\":%ld,\"iters\":%d,\"reps\":%d,"
      "\"time_s\":%.6f,\"time_min_s\":%.6f,\"time_max_s\":%.6f,\"mcells_per_s\":%.3f,"
      "\"kernel_time_s\":%.6f,\"kernel_mcells_per_s\":%.3f,\"checksum\":%.17g,"
      "\"residual\":%.17g,\"check\":{\"ran\":%s,\"passed\":%s}}\n",
      name.c_str(), n, args.iters, args.reps, t,
      *std::min_element(with_copies.begin(), with_copies.end()),
      *std::max_element(with_copies.begin(), with_copies.end()), updates / t * 1e-6, tk,
      updates / tk * 1e-6, checksum, residual, args.check ? "true" : "false",
      passed ? "true" : "false");

  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  cudaFree(du);
  cudaFree(dv);
  cudaFreeHost(u);
  cudaFreeHost(v);
  return passed ? 0 : 1;
}
