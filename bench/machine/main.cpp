// hit-bench-machine: the machine's own ceilings, measured in the same run as the benchmarks they
// qualify: the plain OpenBLAS dgemm rate at a size, and the STREAM triad bandwidth (a[i] = b[i] +
// s*c[i], 3 arrays far larger than the caches). Prints one JSON line.
//   hit-bench-machine [--n 4096] [--reps 5] [--stream-mib 256]
#include <cblas.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/core/environment.hpp"
#include "hit/program.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App cli(
      "hit-bench-machine: the plain OpenBLAS dgemm rate at one size and the STREAM triad "
      "bandwidth of this machine, as one JSON line");
  long n = 4096;
  int reps = 5;
  long stream_mib = 256;
  cli.add_option("--n", n, "dgemm size (n x n matrices)")
      ->capture_default_str()
      ->check(hit::cli::count(1, 65536));
  cli.add_option("--reps", reps, "timed repetitions of each (the median is reported)")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  cli.add_option("--stream-mib", stream_mib, "MiB of the three triad arrays together")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1 << 20));
  if (!hit::cli::parse(cli, argc, argv, env.rank(), "hit-bench-machine")) return hit::exit_ok;
  const auto nn = static_cast<std::size_t>(n * n);
  std::vector<double> a(nn, 0.5), b(nn, 0.25), c(nn, 0.0);
  std::vector<double> gemm_times;
  for (int r = 0; r <= reps; ++r) {  // the first is a warm-up
    const auto t0 = std::chrono::steady_clock::now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0, a.data(), static_cast<int>(n), b.data(),
                static_cast<int>(n), 1.0, c.data(), static_cast<int>(n));
    if (r > 0) gemm_times.push_back(seconds_since(t0));
  }
  const double gemm_t = median(gemm_times);
  const double gflops = 2.0 * static_cast<double>(n) * n * n / gemm_t * 1e-9;

  const auto len = static_cast<std::size_t>(stream_mib) * 1024 * 1024 / sizeof(double) / 3;
  std::vector<double> x(len, 0.0), y(len, 1.0), z(len, 2.0);
  std::vector<double> triad_times;
  for (int r = 0; r <= reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double s = 3.0;
    for (std::size_t i = 0; i < len; ++i) x[i] = y[i] + s * z[i];
    if (r > 0) triad_times.push_back(seconds_since(t0));
  }
  const double triad_t = median(triad_times);
  const double bandwidth = 3.0 * static_cast<double>(len) * sizeof(double) / triad_t * 1e-9;
  std::printf(
      "{\"app\":\"machine\",\"dgemm_n\":%ld,\"dgemm_gflops\":%.3f,\"dgemm_time_s\":%.6f,"
      "\"triad_gb_per_s\":%.3f,\"triad_mib\":%ld,\"check\":%g}\n",
      n, gflops, gemm_t, bandwidth, stream_mib, x[len / 2] + c[nn / 2] * 0.0);
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-machine", body);
}
