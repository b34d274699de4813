// `smooth`: the README's heat kernel (each point the mean of its four neighbours, smooth.hpp of
// the heat program) registered as a benchmark kernel, so `hit-fpm build --kernel smooth` builds
// the model of the very kernel the heat program launches.
#include "hit/balance/kernel_registry.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "smooth.hpp"

extern "C" void hit_plugin_register(hit::Environment& env) {
  // Three additions and a multiplication per cell; hit-fpm's --columns and --partition apply.
  hit::balance::register_benchmark_kernel(
      env, "smooth", "the heat program's mean of four neighbours, one row of N cells",
      [](hit::Environment& e, const hit::balance::LaunchKernelOptions& o) {
        return hit::balance::stencil_launch_kernel(
            e, smooth(),
            {.columns = o.columns,
             .flops_per_cell = 4,
             .partition = o.partition.empty() ? "threads" : o.partition,
             .resident = o.resident});
      });
}
