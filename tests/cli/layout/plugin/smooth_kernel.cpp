// `smooth`: the README's heat kernel (each point the mean of its four neighbours) registered as a
// benchmark kernel, so `hit-fpm build --kernel smooth` builds the model of the very kernel the
// heat program launches.
#include <string>

#include "hit/balance/kernel_registry.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "hit/kernel.hpp"

namespace {

hit::balance::StencilKernel smooth() {
  hit::balance::StencilKernel k("smooth");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> in, hit::View<double> out) {
    const hit::View<const double> src = in.around(ctx.block);
    const hit::View<double> dst = out.around(ctx.block);
    for (hit::index_t r = 0; r < ctx.block.extent(0); ++r) {
      for (hit::index_t c = 0; c < ctx.block.extent(1); ++c) {
        dst.local(r, c) = 0.25 * (src.local(r - 1, c) + src.local(r + 1, c) + src.local(r, c - 1) +
                                  src.local(r, c + 1));
      }
    }
  });
  k.reads({hit::AccessPattern::stencil(2, 1), hit::AccessPattern::parse("0,0")});
  return k;
}

}  // namespace

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
