#include "hit/balance/kernel_registry.hpp"

#include <fmt/format.h>

#include <memory>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"

namespace hit::balance {

BenchmarkKernelPlugin::BenchmarkKernelPlugin(std::string name, std::string description,
                                             BenchmarkKernelFactory make)
    : name_(std::move(name)), description_(std::move(description)), make_(std::move(make)) {
  if (name_.empty() || !make_) {
    throw Error(ErrorKind::invalid_argument,
                "a benchmark kernel needs a name and a function that makes it");
  }
}

BenchmarkKernel BenchmarkKernelPlugin::make(Environment& env,
                                            const LaunchKernelOptions& options) const {
  return make_(env, options);
}

BenchmarkKernelRegistry::BenchmarkKernelRegistry(Environment& /*env*/)
    : Registry<BenchmarkKernelPlugin>("benchmark kernel") {
  const auto add_builtin = [this](std::string name, std::string description,
                                  BenchmarkKernelFactory make) {
    add(std::make_shared<const BenchmarkKernelPlugin>(std::move(name), std::move(description),
                                                      std::move(make)));
  };
  add_builtin("gemm", "the block update of the column-based matrix product (one b x b block)",
              [](Environment& e, const LaunchKernelOptions& o) {
                return gemm_launch_kernel(e, o.block, o.partition.empty() ? "single" : o.partition);
              });
  add_builtin("jacobi", "hit::jacobi5, one row of N cells with its halo",
              [](Environment& e, const LaunchKernelOptions& o) {
                return jacobi_launch_kernel(
                    e, o.columns, o.partition.empty() ? "threads" : o.partition, o.resident);
              });
  add_builtin("spmv", "hit::spmv, one row of the sparse product of poisson3d:n=64",
              [](Environment& e, const LaunchKernelOptions& o) {
                return spmv_launch_kernel(e, o.partition.empty() ? "single" : o.partition);
              });
}

void register_benchmark_kernel(Environment& env, std::string name, std::string description,
                               BenchmarkKernelFactory make) {
  env.extension<BenchmarkKernelRegistry>().add(std::make_shared<const BenchmarkKernelPlugin>(
      std::move(name), std::move(description), std::move(make)));
}

BenchmarkKernel launch_kernel(Environment& env, std::string_view name,
                              const LaunchKernelOptions& options) {
  const auto& registry = env.extension<BenchmarkKernelRegistry>();
  const std::string key(name);
  if (!registry.contains(key)) {
    std::string names;
    for (const std::string& n : registry.names()) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::invalid_argument,
                fmt::format("kernel '{}' (registered kernels: {})", name, names));
  }
  return registry.find(key).make(env, options);
}

}  // namespace hit::balance
