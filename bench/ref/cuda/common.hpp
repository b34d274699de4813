#pragma once
// What the hand-written CUDA references share: argument parsing, error checks that end the
// program with one line, the median, and the deterministic inputs of the example programs.
// No hitmap++ runtime: CUDA runtime, cuBLAS and cuSOLVER calls only.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../../examples/common/values.hpp"

namespace hit::ref {

[[noreturn]] inline void die(const char* prog, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", prog, what.c_str());
  std::exit(2);
}

inline void cuda_check(const char* prog, cudaError_t e, const char* call) {
  if (e != cudaSuccess) die(prog, std::string(call) + ": " + cudaGetErrorString(e));
}

struct Args {
  long n = 4096;
  int iters = 100;
  int reps = 3;
  int warmup = 1;
  bool check = false;
  std::uint64_t seed = 1;
  int device = 0;
};

inline Args parse(const char* prog, int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) die(prog, k + " needs a value");
      return argv[++i];
    };
    if (k == "--n")
      a.n = std::atol(next());
    else if (k == "--iters")
      a.iters = std::atoi(next());
    else if (k == "--reps")
      a.reps = std::atoi(next());
    else if (k == "--warmup")
      a.warmup = std::atoi(next());
    else if (k == "--seed")
      a.seed = std::strtoull(next(), nullptr, 10);
    else if (k == "--device")
      a.device = std::atoi(next());
    else if (k == "--check")
      a.check = true;
    else
      die(prog, "unknown argument '" + k + "'");
  }
  if (a.n < 1 || a.reps < 1 || a.warmup < 0 || a.iters < 0)
    die(prog, "bad --n, --reps, --warmup or --iters");
  return a;
}

using hit::app::hashed_value;  // the example programs' inputs (examples/common/values.hpp)
using hit::app::median;

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The device's name, for the JSON line.
inline std::string device_name(const char* prog, int device) {
  cudaDeviceProp p{};
  cuda_check(prog, cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return p.name;
}

// Seconds between two recorded events.
inline double elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace hit::ref
