#pragma once
// Benchmark kernels by name: what `hit-fpm build --kernel K`, hit-bench-fpm and launch_kernel()
// measure. The built-in gemm, jacobi and spmv are registered in every Environment; a program or an
// external plug-in (hit_plugin_register, docs/plugins.md) registers its own under a name, so the
// models a balancer uses are built from the very Kernel object the program launches
// (stencil_launch_kernel in hit/balance/kernels.hpp makes one from a program's stencil kernel).

#include <functional>
#include <string>
#include <vector>

#include "hit/balance/kernels.hpp"
#include "hit/core/param.hpp"
#include "hit/core/registry.hpp"

namespace hit {
class Environment;
}

namespace hit::balance {

// Makes the benchmark kernel from the options hit-fpm build was given (--block, --columns,
// --partition, --resident); each kernel reads those that apply to it. Called on every rank
// alike (it may make a partition, which is collective on first use).
using BenchmarkKernelFactory =
    std::function<BenchmarkKernel(Environment&, const LaunchKernelOptions&)>;

class BenchmarkKernelPlugin {
 public:
  BenchmarkKernelPlugin(std::string name, std::string description, BenchmarkKernelFactory make);

  const std::string& name() const noexcept { return name_; }
  const std::string& description() const noexcept { return description_; }
  // Kernels take LaunchKernelOptions, not spec parameters.
  std::vector<ParamInfo> params() const { return {}; }
  BenchmarkKernel make(Environment& env, const LaunchKernelOptions& options) const;

 private:
  std::string name_;
  std::string description_;
  BenchmarkKernelFactory make_;
};

// The benchmark kernels of a run (env.extension<BenchmarkKernelRegistry>()): gemm, jacobi and
// spmv, plus those registered since.
class BenchmarkKernelRegistry : public Registry<BenchmarkKernelPlugin> {
 public:
  explicit BenchmarkKernelRegistry(Environment& env);
};

// Registers a kernel under `name` in env's registry; Error(plugin) when the name is taken.
void register_benchmark_kernel(Environment& env, std::string name, std::string description,
                               BenchmarkKernelFactory make);

}  // namespace hit::balance
